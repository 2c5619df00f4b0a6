import DeviceRegistry
import RegcodeEngine
import RegcodeSupport
import Yams

/// A fleet's `poll:` while it is read: the policy, and `on_expiry` and `renewals`, which are combined once both are
/// known.
struct PollSettings {
    var policy: PollPolicy
    var onExpiry: String?
    var renewals: Int?
}

/// The keys of `poll:`.
extension ConfigurationKeys {
    typealias PollKey = ConfigurationKey<PollSettings>

    static let poll: [PollKey] = [
        // Applied before the other keys by `readPoll`; here it is only named.
        .custom(
            "preset",
            .choice(PollPreset.allCases.map(\.rawValue)),
            "A named baseline the other keys refine: Adobe's guidance, the AccessEnabler SDK's timer, or a misbehaving client.",
            default: { settings in PollPreset.allCases.first { $0.policy == settings.policy }?.rawValue ?? "none" },
            read: { _, _, _, _ throws(ConfigurationError) in }
        ),
        .duration("interval", \.policy.interval, "Base interval between polls (Adobe: every 3–5 seconds or more)."),
        .custom(
            "jitter",
            .double(0...0.5),
            "Relative jitter applied to each interval: 0.1 means ±10 %.",
            default: { ConfigurationValueKind.number($0.policy.jitter) },
            read: { settings, node, path, reader throws(ConfigurationError) in
                settings.policy.jitter = try reader.double(node, path, range: 0...0.5, note: "0.1 = ±10 %")
            }
        ),
        .duration("first_poll_delay", \.policy.firstPollDelay, "Delay from showing the code to the first poll."),
        .custom(
            "backoff_base",
            .duration(bound: nil),
            "Start of the error backoff window.",
            default: { $0.policy.backoffBase.map(DurationParser.format) ?? "the interval" },
            read: { settings, node, path, reader throws(ConfigurationError) in
                settings.policy.backoffBase = try reader.duration(node, path)
            }
        ),
        .duration("backoff_cap", \.policy.backoffCap, "Upper bound of the error backoff window."),
        .duration("min_throttle_wait", \.policy.minimumThrottleWait, "Shortest wait after a 429, whatever `Retry-After` says."),
        PollKey.bool("honour_throttle", \.policy.honoursThrottle, "Whether 429 and `Retry-After` slow the device down.")
            .alias("honor_throttle"),
        .custom(
            "max_consecutive_errors",
            .optionalInt(1...1_000_000),
            "Consecutive failed polls after which the device gives up.",
            default: { $0.policy.maxConsecutiveErrors.map(String.init) ?? "none (until the code expires)" },
            read: { settings, node, path, reader throws(ConfigurationError) in
                settings.policy.maxConsecutiveErrors = node.null != nil ? nil : try reader.int(node, path, range: 1...1_000_000)
            }
        ),
        .int("code_request_retries", \.policy.codeRequestRetries, 0...100, "Transient failures retried when requesting a code."),
        .int(
            "stage_retries",
            \.policy.stageRetries,
            0...100,
            "Transient failures (429, 5xx, network) retried at every other stage before the device reports the failure."
        ),
        .int(
            "action_retries",
            \.policy.actionRetries,
            0...100,
            "Retries of a call (poll excepted) whose enhanced error asks for them (`action` `retry` or `retry-after`)."
        ),
        .duration("stage_backoff_base", \.policy.stageBackoffBase, "Start of the back-off window of those retries."),
        .duration("stage_backoff_cap", \.policy.stageBackoffCap, "Upper bound of the back-off window of those retries."),
        .int(
            "code_recoveries",
            \.policy.codeRecoveries,
            0...100,
            "New codes a login asks for when the backend has forgotten the polled code, before the login fails."
        ),
        .bool("misbehaving", \.policy.misbehaving, "Marks a deliberately misbehaving client, which may poll faster than the 3 s floor."),
        .custom(
            "on_expiry",
            .choice(["stop", "renew"]),
            "What a device does when its code expires unanswered: stop, or request a fresh code (`renewals` times).",
            default: { settings in
                if case .renew = settings.policy.onExpiry { return "renew" }
                return "stop"
            },
            read: { settings, node, path, reader throws(ConfigurationError) in
                settings.onExpiry = try reader.string(node, path).lowercased()
            }
        ),
        .custom(
            "renewals",
            .int(0...1000),
            "Fresh codes a login asks for when its code expires; without `on_expiry`, more than 0 means renew.",
            default: { settings in
                if case .renew(let times) = settings.policy.onExpiry { return String(times) }
                return "0 (1 with on_expiry: renew)"
            },
            read: { settings, node, path, reader throws(ConfigurationError) in
                settings.renewals = try reader.int(node, path, range: 0...1000)
            }
        ),
    ]

    /// `poll:` of a fleet: the preset first, then the other keys whatever their order, then `on_expiry` with
    /// `renewals`, then the policy's own checks.
    @Sendable static func readPoll(
        _ fleet: inout FleetConfiguration,
        _ node: Node,
        _ prefix: String,
        _ reader: ConfigurationReader
    ) throws(ConfigurationError) {
        let pairs = try reader.mapping(node, prefix)
        var settings = PollSettings(policy: fleet.poll)
        if let presetNode = pairs.first(where: { $0.0 == "preset" })?.1 {
            let preset: PollPreset = try reader.choice(presetNode, "\(prefix).preset", ignoringCase: true)
            settings.policy = preset.policy
        }
        try reader.apply(poll, pairs, prefix: prefix, to: &settings)
        switch settings.onExpiry {
        case nil:
            if let renewals = settings.renewals { settings.policy.onExpiry = renewals > 0 ? .renew(times: renewals) : .stop }
        case "stop": settings.policy.onExpiry = .stop
        case "renew": settings.policy.onExpiry = .renew(times: settings.renewals ?? 1)
        case let other?: throw reader.fail("\(prefix).on_expiry", "'\(other)' is not stop or renew")
        }
        if let problem = settings.policy.validationErrors().first {
            throw reader.fail(prefix, problem)
        }
        fleet.poll = settings.policy
    }
}
