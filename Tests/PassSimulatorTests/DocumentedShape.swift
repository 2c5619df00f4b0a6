import Foundation
import Testing

/// Compares an answer with a sample from Adobe's documentation (AdobeDocs/pass.en, REST API v2 pages): the same keys
/// at every level (the simulator may add `trace` to errors), and the same values for the keys that carry meaning
/// rather than data (`source`, `authorized`, `code`, `status`, `action`, `message`, `type`, `issuer`, `action*`,
/// `reasonType`, `url`, `mvpd`, `serviceProvider`, `resource`).
func expectDocumentedShape(
    _ actual: Any,
    _ documented: String,
    allowingExtra extraKeys: Set<String> = ["trace"],
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let sample = try JSONSerialization.jsonObject(with: Data(documented.utf8))
    compareShape(actual, sample, at: "$", extraKeys: extraKeys, sourceLocation: sourceLocation)
}

private let meaningfulKeys: Set<String> = [
    "source", "authorized", "code", "status", "action", "message", "type", "issuer", "actionName", "actionType", "reasonType",
    "url", "mvpd", "serviceProvider", "resource",
]

private func compareShape(_ actual: Any, _ sample: Any, at path: String, extraKeys: Set<String>, sourceLocation: SourceLocation) {
    switch sample {
    case let object as [String: Any]:
        guard let got = actual as? [String: Any] else {
            Issue.record("\(path): expected an object, got \(actual)", sourceLocation: sourceLocation)
            return
        }
        let extra = Set(got.keys).subtracting(object.keys).subtracting(extraKeys)
        let missing = Set(object.keys).subtracting(got.keys)
        #expect(extra.isEmpty && missing.isEmpty, "\(path): extra \(extra.sorted()), missing \(missing.sorted())", sourceLocation: sourceLocation)
        for (key, value) in object {
            guard let mine = got[key] else { continue }
            if meaningfulKeys.contains(key), !(value is [String: Any]), !(value is [Any]) {
                #expect("\(mine)" == "\(value)", "\(path).\(key): \(mine) ≠ documented \(value)", sourceLocation: sourceLocation)
            } else {
                compareShape(mine, value, at: "\(path).\(key)", extraKeys: extraKeys, sourceLocation: sourceLocation)
            }
        }
    case let list as [Any]:
        guard let got = actual as? [Any], got.count == list.count else {
            Issue.record("\(path): expected \(list.count) items, got \(actual)", sourceLocation: sourceLocation)
            return
        }
        for (index, item) in list.enumerated() {
            compareShape(got[index], item, at: "\(path)[\(index)]", extraKeys: extraKeys, sourceLocation: sourceLocation)
        }
    default:
        break
    }
}
