#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A client application registered through DCR (`POST /o/client/register`).
package struct RegisteredClient: Sendable {
    /// The issued `client_id`.
    package let clientId: String
    /// The issued `client_secret`; never logged.
    let clientSecret: String
    /// `software_id` of the software statement the client registered with.
    package let softwareId: String
    /// Redirect URIs echoed in the registration answer.
    package let redirectURIs: [String]
    /// `client_id_issued_at`, in epoch seconds.
    package let issuedAtSeconds: Int64
}
