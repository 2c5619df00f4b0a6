import Hummingbird
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Counters reported by `GET /_sim/stats`.
public struct SimulatorStats: Sendable, Equatable, Codable {
    /// Requests by endpoint class, then by HTTP status (`"dropped"` for dropped connections).
    public var requests: [EndpointClass: [String: Int]]
    /// Injected faults by kind (every kind present, zeros included).
    public var faults: [FaultKind: Int]
    /// Injected faults by endpoint class, then kind.
    public var faultsByClass: [EndpointClass: [FaultKind: Int]]

    static var empty: SimulatorStats {
        SimulatorStats(
            requests: [:],
            faults: Dictionary(uniqueKeysWithValues: FaultKind.allCases.map { ($0, 0) }),
            faultsByClass: [:]
        )
    }
}
