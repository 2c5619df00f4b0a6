#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The deny lists in force: resource → details, MVPD → details.
package struct DenyLists: Sendable, Equatable, Codable {
    /// Denied resources and the `details` text for each (empty: a generated message).
    package var resources: [String: String]
    /// MVPDs denying every resource, with the `details` text (empty: a generated message).
    package var mvpds: [String: String]

    /// Deny lists with the given entries.
    package init(resources: [String: String] = [:], mvpds: [String: String] = [:]) {
        self.resources = resources
        self.mvpds = mvpds
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.resources = try container.decodeIfPresent([String: String].self, forKey: .resources) ?? [:]
        self.mvpds = try container.decodeIfPresent([String: String].self, forKey: .mvpds) ?? [:]
    }

    /// Why `resource` is denied for a user of `mvpd`, or `nil` when it is authorized. An MVPD-wide denial wins.
    func denial(resource: String, mvpd: String) -> String? {
        let id = Self.resourceId(resource)
        if let details = self.mvpds[mvpd] {
            return details.isEmpty ? "Your \(mvpd) subscription does not include \"\(id)\"." : details
        }
        if let details = self.resources[resource] ?? self.resources[id] {
            return details.isEmpty ? "Your subscription package does not include the \"\(id)\" channel." : details
        }
        return nil
    }

    /// The id of a resource: the channel title of an MRSS resource (reference §4.10), else the text itself.
    static func resourceId(_ resource: String) -> String {
        guard resource.hasPrefix("<rss"), let channel = resource.range(of: "<channel>"),
            let open = resource.range(of: "<title>", range: channel.upperBound..<resource.endIndex),
            let close = resource.range(of: "</title>", range: open.upperBound..<resource.endIndex)
        else { return resource }
        var title = String(resource[open.upperBound..<close.lowerBound]).trimmed
        if title.hasPrefix("<![CDATA["), title.hasSuffix("]]>") {
            title = String(title.dropFirst(9).dropLast(3))
        }
        return title.isEmpty ? resource : title
    }
}
