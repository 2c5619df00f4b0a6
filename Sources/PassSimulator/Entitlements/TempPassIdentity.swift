import Hummingbird
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The user identity of promotional TempPass: `AP-TempPass-Identity`, Base64 of a JSON object such as
/// `{"email": "…"}` (the programmer hashes what it puts there; Adobe stores no personal data).
struct TempPassIdentity: Sendable, Hashable {
    /// The decoded JSON text: two headers naming the same identity the same way are the same user.
    let text: String
    /// The header value and every string value of the object: what a reset's `key` may name.
    let keys: Set<String>

    /// The identity in `header`, or `nil` when it is not Base64 of a non-empty JSON object.
    init?(header: String) {
        let value = header.trimmed
        guard let data = Data(base64Encoded: value), let text = String(data: data, encoding: .utf8),
            let object = MetadataValue.object(parsing: data), !object.isEmpty
        else { return nil }
        self.text = text
        self.keys = Set([value] + object.values.compactMap(\.stringValue))
    }
}

extension HTTPFields.Element.Name {
    static let apTempPassIdentity = Self("AP-TempPass-Identity")!
}
