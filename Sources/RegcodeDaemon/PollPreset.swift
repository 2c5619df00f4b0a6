import RegcodeEngine

/// Named timing presets for fleets. The `misbehaving-*` ones are deliberately bad clients that a
/// backend should survive; they are marked misbehaving so they may break the 3 s floor.
package enum PollPreset: String, Sendable, CaseIterable {
    /// Adobe's REST v2 guidance: every 5 s, ±10 % jitter, backoff on errors, honour 429.
    case adobeV2 = "adobe-v2"
    /// The AccessEnabler SDK's own poll timer: every 10 s.
    case accessEnabler = "accessenabler"
    /// A fixed 5 s interval that ignores 429, Retry-After and errors (no jitter, no backoff).
    case misbehavingFixed = "misbehaving-fixed-ignore-429"
    /// Polls again as soon as each answer arrives, whatever it was.
    case misbehavingNoPause = "misbehaving-no-pause"
    /// No jitter and a synchronized start: every device of the fleet polls in lockstep.
    case misbehavingSynchronized = "misbehaving-synchronized"

    /// The policy the preset stands for; explicit keys in the config are applied on top.
    package var policy: PollPolicy {
        var policy = PollPolicy()
        switch self {
        case .adobeV2:
            break
        case .accessEnabler:
            policy.interval = .seconds(10)
        case .misbehavingFixed:
            policy.misbehaving = true
            policy.jitter = 0
            policy.honoursThrottle = false
            policy.minimumThrottleWait = .zero
            policy.backoffBase = policy.interval
            policy.backoffCap = policy.interval
        case .misbehavingNoPause:
            policy.misbehaving = true
            policy.interval = .zero
            policy.jitter = 0
            policy.honoursThrottle = false
            policy.minimumThrottleWait = .zero
            policy.backoffBase = .zero
            policy.backoffCap = .zero
        case .misbehavingSynchronized:
            policy.misbehaving = true
            policy.jitter = 0
        }
        return policy
    }

}
