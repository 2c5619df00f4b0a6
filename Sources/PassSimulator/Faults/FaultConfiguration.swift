import Hummingbird
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Fault injection settings: an overall default plus per-class overrides.
///
/// JSON (for `PUT /_sim/faults` and `pass-sim --faults FILE`):
/// `{"default": {"error5xx": 0.05, "latencyMs": 50}, "poll": {"throttle429": 0.1}, "dcr": {…}}`; `all` is another
/// name for `default`. `{"decisions": {"error5xx": 1, "error5xxStatuses": [500], "errorAction": "none"}}` answers
/// every decision with Adobe's enhanced 500; `{"poll": {"error4xx": 1}}` every poll with an edge's HTML 403.
package struct FaultConfiguration: Sendable, Equatable {
    /// Settings for every class, unless the class overrides them.
    package var defaults: FaultRates
    /// Per-class overrides, field by field.
    package var classes: [EndpointClass: FaultRates]

    /// No faults anywhere.
    package init(defaults: FaultRates = .init(), classes: [EndpointClass: FaultRates] = [:]) {
        self.defaults = defaults
        self.classes = classes
    }

    /// The effective settings of `endpointClass`.
    package func rates(for endpointClass: EndpointClass) -> FaultRates {
        (self.classes[endpointClass] ?? FaultRates()).over(self.defaults)
    }

    /// Throws when a probability is outside 0…1, the response faults of a class add up to more than 1, a 5xx
    /// status is not 500…599, or a latency or `Retry-After` is negative.
    package func validate() throws(FaultConfigurationError) {
        for endpointClass in EndpointClass.allCases {
            let rates = self.rates(for: endpointClass)
            let probabilities =
                rates.responseFaults.map { ($0.0.rawValue, $0.1) } + [
                    ("earlyExpiry", rates.earlyExpiry ?? 0), ("latencySpike", rates.latencySpike ?? 0),
                ]
            for (name, value) in probabilities where !(0...1).contains(value) {
                throw FaultConfigurationError("\(name) of \(endpointClass.rawValue) must be between 0 and 1, not \(value)")
            }
            let total = rates.responseFaults.reduce(0) { $0 + $1.1 }
            if total > 1 + 1e-9 {
                throw FaultConfigurationError("the response fault probabilities of \(endpointClass.rawValue) add up to \(total), more than 1")
            }
            if let statuses = rates.error5xxStatuses, statuses.isEmpty || !statuses.allSatisfy({ (500...599).contains($0) }) {
                throw FaultConfigurationError("error5xxStatuses of \(endpointClass.rawValue) must be a non-empty list of 500…599")
            }
            // 429 has its own faults, 401 is `tokenExpiry`: a 4xx fault is any other client error.
            if let statuses = rates.error4xxStatuses,
                statuses.isEmpty || !statuses.allSatisfy({ (400...499).contains($0) && $0 != 429 && $0 != 401 })
            {
                throw FaultConfigurationError(
                    "error4xxStatuses of \(endpointClass.rawValue) must be a non-empty list of 400…499 without 401 and 429"
                )
            }
            if let action = rates.errorAction, action.isEmpty || action.contains(where: \.isWhitespace) {
                throw FaultConfigurationError("errorAction of \(endpointClass.rawValue) must be one word (Adobe's action, e.g. none, retry)")
            }
            if let code = rates.errorCode, code.isEmpty || code.contains(where: \.isWhitespace) {
                throw FaultConfigurationError("errorCode of \(endpointClass.rawValue) must be one word (an enhanced error code)")
            }
            if (rates.latencyMs ?? 0) < 0 || (rates.latencySpreadMs ?? 0) < 0 || (rates.latencySpikeMs ?? 0) < 0
                || (rates.retryAfterSeconds ?? 0) < 0
            {
                throw FaultConfigurationError("latencies and retryAfterSeconds of \(endpointClass.rawValue) must not be negative")
            }
        }
    }
}

extension FaultConfiguration: Codable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        var defaults = FaultRates()
        var classes: [EndpointClass: FaultRates] = [:]
        if container.contains(AnyCodingKey("default")) && container.contains(AnyCodingKey("all")) {
            throw DecodingError.dataCorruptedError(
                forKey: AnyCodingKey("all"),
                in: container,
                debugDescription: "\"all\" and \"default\" name the same settings; give one of them"
            )
        }
        for key in container.allKeys {
            if key.stringValue == "default" || key.stringValue == "all" {
                defaults = try container.decode(FaultRates.self, forKey: key)
            } else if let endpointClass = EndpointClass(name: key.stringValue) {
                classes[endpointClass] = try container.decode(FaultRates.self, forKey: key)
            } else {
                throw DecodingError.dataCorruptedError(
                    forKey: key,
                    in: container,
                    debugDescription: "unknown endpoint class \"\(key.stringValue)\" (expected default or all, "
                        + EndpointClass.allCases.map(\.rawValue).joined(separator: ", ") + ")"
                )
            }
        }
        self.init(defaults: defaults, classes: classes)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        try container.encode(self.defaults, forKey: AnyCodingKey("default"))
        for (endpointClass, rates) in self.classes {
            try container.encode(rates, forKey: AnyCodingKey(endpointClass.rawValue))
        }
    }
}
