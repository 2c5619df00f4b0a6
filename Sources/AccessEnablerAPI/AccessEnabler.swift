/// AccessEnabler (iOS/tvOS spellings) constants the emulated devices report.
package enum AccessEnabler {
    /// The `status` argument of `setRequestorComplete` and `setAuthenticationStatus`.
    package static let statusSuccess: Int64 = 1
    package static let statusError: Int64 = 0

    /// `getMetadata:` opcodes (`METADATA_*`) and key-dictionary keys.
    package enum MetadataOpCode: Int64, Sendable, CaseIterable {
        /// Authentication expiry (`TTL_AUTHN`).
        case authenticationTTL = 0
        /// Authorization expiry for `resource_id` (`TTL_AUTHZ`).
        case authorizationTTL = 1
        /// The device id (`DEVICEID`).
        case deviceID = 2
        /// User metadata named by `user_metadata_name`.
        case userMetadata = 3
    }

    package static let metadataOpCodeKey = "opCode"
    package static let metadataResourceIDKey = "resource_id"
    package static let metadataUserMetaKey = "user_metadata_name"
    /// `METADATA_KEY_INVALID`: the key reported for a dictionary without a known opcode.
    package static let metadataKeyInvalid: Int64 = 255

    /// iOS tracking arrays carry strings: booleans as YES/NO, missing values as None.
    package static let trackingYes = "YES"
    package static let trackingNo = "NO"
    package static let trackingNone = "None"
}
