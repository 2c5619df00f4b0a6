/// How a TempPass MVPD grants temporary access (Adobe's TempPass feature): basic (time only, per device) or
/// promotional (time and a number of resources, per device and per `AP-TempPass-Identity`).
package struct TempPassSettings: Sendable, Hashable, Codable {
    /// Seconds from the first authorization request (or session) of a device or identity until access ends.
    package var ttl: Int64
    /// Promotional TempPass: at most ``maxResources`` distinct resources, identity from `AP-TempPass-Identity`.
    package var promotional: Bool
    /// Distinct resources a promotional TempPass may authorize; `nil` for basic TempPass.
    package var maxResources: Int?
    /// The picker name used when the MVPD is added to the MVPD list by the configuration file.
    package var displayName: String?

    /// A basic TempPass of `ttl` seconds, or a promotional one when `maxResources` is given.
    package init(ttl: Int64, maxResources: Int? = nil, displayName: String? = nil) {
        self.ttl = ttl
        self.promotional = maxResources != nil
        self.maxResources = maxResources
        self.displayName = displayName
    }

    private enum CodingKeys: String, CodingKey {
        case ttl, promotional, maxResources, displayName
    }

    /// `promotional` defaults to whether `maxResources` is given; a promotional TempPass needs `maxResources`.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.ttl = try container.decode(Int64.self, forKey: .ttl)
        self.maxResources = try container.decodeIfPresent(Int.self, forKey: .maxResources)
        self.promotional = try container.decodeIfPresent(Bool.self, forKey: .promotional) ?? (self.maxResources != nil)
        self.displayName = try container.decodeIfPresent(String.self, forKey: .displayName)
        guard self.ttl > 0 else {
            throw DecodingError.dataCorruptedError(forKey: .ttl, in: container, debugDescription: "ttl must be a positive number of seconds")
        }
        if self.promotional {
            guard let limit = self.maxResources, limit > 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .maxResources,
                    in: container,
                    debugDescription: "a promotional TempPass needs maxResources ≥ 1"
                )
            }
        } else if self.maxResources != nil {
            throw DecodingError.dataCorruptedError(
                forKey: .maxResources,
                in: container,
                debugDescription: "maxResources is for promotional TempPass only"
            )
        }
    }
}
