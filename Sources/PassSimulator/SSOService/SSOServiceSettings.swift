/// The knobs of Adobe's premium SSO Service (the `ssoService` section of `--sso-config`).
///
/// Adobe's page (SSO-SVC, revision 1.0.0,
/// https://experienceleague.adobe.com/en/docs/pass/authentication/integration-guide-programmers/features-premium/sso-service/sso-service)
/// fixes none of them exactly: its service token sample lives one hour (`exp - iat` = 3600), a link code "has a
/// limited validity period (typically 5-30 minutes)" (its two samples show 45 and 60 minutes), and an expired token
/// may be refreshed when it has "expired recently".
package struct SSOServiceSettings: Sendable, Equatable, Codable {
    /// The range of link code lifetimes accepted, Adobe's "typically 5-30 minutes".
    package static let linkCodeTTLRange: ClosedRange<Int64> = 300...1800

    /// Lifetime of a service token, in seconds (Adobe's sample: 3600).
    package var tokenTTL: Int64 = 3600
    /// Lifetime of a link code, in seconds: within ``linkCodeTTLRange``; the top of Adobe's range by default, the
    /// closest to its samples.
    package var linkCodeTTL: Int64 = 1800
    /// How long after it expired a service token may still be refreshed, in seconds ("expired recently" is not
    /// quantified; INFERRED).
    package var refreshWindow: Int64 = 86_400
    /// The names the answers give the token and the link code.
    package var fieldNames: SSOServiceFieldNames = .samples

    /// Adobe's defaults.
    package init() {}

    private enum CodingKeys: String, CodingKey {
        case tokenTTL, linkCodeTTL, refreshWindow, fieldNames
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = Self()
        self.tokenTTL = try container.decodeIfPresent(Int64.self, forKey: .tokenTTL) ?? defaults.tokenTTL
        self.linkCodeTTL = try container.decodeIfPresent(Int64.self, forKey: .linkCodeTTL) ?? defaults.linkCodeTTL
        self.refreshWindow = try container.decodeIfPresent(Int64.self, forKey: .refreshWindow) ?? defaults.refreshWindow
        self.fieldNames = try container.decodeIfPresent(SSOServiceFieldNames.self, forKey: .fieldNames) ?? defaults.fieldNames
    }

    /// Why the settings cannot be used, or `nil`.
    package var problem: String? {
        if self.tokenTTL <= 0 { return "tokenTTL must be positive" }
        if !Self.linkCodeTTLRange.contains(self.linkCodeTTL) { return "linkCodeTTL must be 300 to 1800 seconds (Adobe's 5-30 minutes)" }
        if self.refreshWindow < 0 { return "refreshWindow must not be negative" }
        return nil
    }
}

/// Which names the SSO Service's answers use. Adobe's page disagrees with itself: its attribute tables name the token
/// `jws` and the link code `link`, while every sample (the POST and GET service token samples, the error section's
/// success example, the link sample and step 4) says `serviceToken` and `code`. Samples are usually captured answers,
/// so they are the default; a client can be checked against either reading, or both at once.
package enum SSOServiceFieldNames: String, Sendable, Equatable, Codable, CaseIterable {
    /// `serviceToken` and `code`, as in Adobe's samples.
    case samples
    /// `jws` and `link`, as in Adobe's attribute tables.
    case attributeTables
    /// Both pairs in every answer.
    case both

    /// The names of the service token in an answer.
    var tokenFields: [String] {
        switch self {
        case .samples: ["serviceToken"]
        case .attributeTables: ["jws"]
        case .both: ["serviceToken", "jws"]
        }
    }

    /// The names of the link code in an answer.
    var linkFields: [String] {
        switch self {
        case .samples: ["code"]
        case .attributeTables: ["link"]
        case .both: ["code", "link"]
        }
    }
}
