import Hummingbird
import Logging
import RegcodeSupport
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The live fault settings, the seeded generator and the counters; shared by every request.
///
/// A lock rather than an actor: it sits on every API request and each operation is a few arithmetic steps.
final class FaultInjector: Sendable {
    private struct Locked {
        var configuration: FaultConfiguration
        var generator: SplitMix64
        var stats: SimulatorStats
    }

    private let locked: Mutex<Locked>

    init(configuration: FaultConfiguration, seed: UInt64?) {
        var system = SystemRandomNumberGenerator()
        self.locked = Mutex(
            Locked(configuration: configuration, generator: SplitMix64(seed: seed ?? system.next()), stats: .empty)
        )
    }

    /// The settings in force.
    var configuration: FaultConfiguration {
        self.locked.withLock { $0.configuration }
    }

    /// Replaces the settings (already validated by the caller).
    func replace(_ configuration: FaultConfiguration) {
        self.locked.withLock { $0.configuration = configuration }
    }

    /// Decides latency and a response fault for one request of `endpointClass`. `tokenExpiry` only applies to
    /// `protected` calls; elsewhere its share of the draw means "no fault".
    func plan(for endpointClass: EndpointClass, protected: Bool) -> FaultPlan {
        self.locked.withLock { locked in
            let rates = locked.configuration.rates(for: endpointClass)
            var plan = FaultPlan()
            let fixed = max(rates.latencyMs ?? 0, 0)
            let spread = max(rates.latencySpreadMs ?? 0, 0)
            if fixed > 0 || spread > 0 {
                let extra = spread > 0 ? Int(locked.generator.next() % UInt64(spread + 1)) : 0
                let total = fixed + extra
                if total > 0 {
                    plan.latency = .milliseconds(total)
                    Self.count(.latency, endpointClass, in: &locked.stats)
                }
            }
            if let spike = rates.latencySpike, spike > 0, locked.generator.unit() < spike {
                plan.latency = (plan.latency ?? .zero) + .milliseconds(max(rates.latencySpikeMs ?? 5000, 0))
                Self.count(.latencySpike, endpointClass, in: &locked.stats)
            }
            let faults = rates.responseFaults.filter { $0.1 > 0 }
            guard !faults.isEmpty else { return plan }
            var draw = locked.generator.unit()
            for (kind, probability) in faults {
                guard draw < probability else {
                    draw -= probability
                    continue
                }
                switch kind {
                case .drop: plan.outcome = .drop
                case .error5xx:
                    let statuses = rates.error5xxStatuses ?? [500, 502, 503]
                    let index = statuses.count > 1 ? Int(locked.generator.next() % UInt64(statuses.count)) : 0
                    plan.outcome = .error5xx(statuses.isEmpty ? 500 : statuses[index])
                case .error4xx:
                    let statuses = rates.error4xxStatuses ?? [403]
                    let index = statuses.count > 1 ? Int(locked.generator.next() % UInt64(statuses.count)) : 0
                    plan.outcome = .error4xx(statuses.isEmpty ? 403 : statuses[index])
                case .throttle429: plan.outcome = .throttle429(retryAfter: nil)
                case .throttle429RetryAfter: plan.outcome = .throttle429(retryAfter: max(rates.retryAfterSeconds ?? 1, 0))
                case .malformed: plan.outcome = .malformed
                case .tokenExpiry:
                    guard protected else { return plan }
                    plan.outcome = .tokenExpiry
                case .earlyExpiry, .latency, .latencySpike: return plan
                }
                if let action = rates.errorAction {
                    switch plan.outcome {
                    case .error5xx(let status), .error4xx(let status):
                        plan.enhancedError = InjectedEnhancedError(
                            action: action,
                            code: rates.errorCode ?? InjectedEnhancedError.defaultCode(action: action, status: status),
                            retryAfterSeconds: action == "retry-after" ? max(rates.retryAfterSeconds ?? 1, 0) : nil
                        )
                    default: break
                    }
                }
                Self.count(kind, endpointClass, in: &locked.stats)
                return plan
            }
            return plan
        }
    }

    /// When a new code should die early (earlyExpiry fault): an offset from issue time in 0..<`ttlMillis`, else `nil`.
    func earlyExpiryOffset(ttlMillis: Int64) -> Int64? {
        self.locked.withLock { locked in
            let probability = locked.configuration.rates(for: .sessions).earlyExpiry ?? 0
            guard probability > 0, locked.generator.unit() < probability else { return nil }
            Self.count(.earlyExpiry, .sessions, in: &locked.stats)
            return Int64(locked.generator.unit() * Double(max(ttlMillis, 0)))
        }
    }

    /// Counts one answered request.
    func record(_ endpointClass: EndpointClass, status: String) {
        self.locked.withLock { $0.stats.requests[endpointClass, default: [:]][status, default: 0] += 1 }
    }

    /// A snapshot of the counters.
    var stats: SimulatorStats {
        self.locked.withLock { $0.stats }
    }

    /// Zeroes the counters.
    func resetStats() {
        self.locked.withLock { $0.stats = .empty }
    }

    private static func count(_ kind: FaultKind, _ endpointClass: EndpointClass, in stats: inout SimulatorStats) {
        stats.faults[kind, default: 0] += 1
        stats.faultsByClass[endpointClass, default: [:]][kind, default: 0] += 1
    }
}
