import AccessEnablerAPI
import RegcodeEngine
import RegcodeSupport

/// What last happened to a device, in a word and a line: the console's and `regcodectl devices`' "last outcome".
///
/// Read from the steps the engine produces (requests, polls, callbacks), the latest one winning, so a device that
/// failed to register and then registered shows the success, and a code that expired says so.
struct LastOutcome: Sendable, Equatable {
    /// Milliseconds since the epoch.
    var at: Int64
    /// `ok`, `authenticated`, `pending`, `expired`, `error`, or a request or poll outcome (`throttled`, `server-error`, …).
    var kind: String
    var text: String
    /// The Adobe error code or status id behind it, when there is one.
    var why: String?

    var jsonValue: JSONValue {
        ["at": .int(at), "kind": .string(kind), "text": .string(text), "why": why.map(JSONValue.string) ?? .null]
    }

    /// The outcome a step leaves a device with; nil when the step says nothing new (storage-only steps, diagnostics).
    static func of(_ step: DeviceStep) -> LastOutcome? {
        var outcome: LastOutcome?
        for request in step.requests where request.outcome != .abandoned {
            let status = request.httpStatus.map(String.init) ?? "no answer"
            let text =
                request.outcome == .ok
                ? "\(request.stage.rawValue) ok"
                : "\(request.stage.rawValue) \(status)\(Self.retry(request.retryDelayMs))"
            outcome = LastOutcome(at: request.sentEpochMs, kind: request.outcome.rawValue, text: text, why: request.errorCode)
        }
        for poll in step.polls where poll.outcome != .abandoned {
            let status = poll.httpStatus.map(String.init) ?? "no answer"
            let retry = poll.outcome == .pending || poll.outcome == .authenticated ? "" : Self.retry(poll.nextDelayMs)
            outcome = LastOutcome(
                at: poll.sentEpochMs,
                kind: poll.outcome.rawValue,
                text: "poll \(status) \(poll.outcome.rawValue)\(retry)",
                why: nil
            )
        }
        for event in step.events {
            if let described = Self.describe(event, step: step) { outcome = described }
        }
        return outcome
    }

    private static func describe(_ event: DeviceEvent, step: DeviceStep) -> LastOutcome? {
        let at = step.epochMs
        switch event {
        case .setAuthenticationStatus(1, _):
            let mvpd = step.snapshot?.profile?.mvpd
            return LastOutcome(at: at, kind: "authenticated", text: mvpd.map { "authenticated (\($0))" } ?? "authenticated", why: nil)
        case .setAuthenticationStatus(_, let code) where code != .none && code != .userNotAuthenticated:
            return LastOutcome(at: at, kind: "error", text: "not authenticated", why: code.rawValue)
        case .status(let report) where report.id == .registrationCode:
            return LastOutcome(at: at, kind: "pending", text: "code \(report.message ?? "") issued", why: nil)
        case .status(let report) where report.id == .registrationCodeExpired:
            return LastOutcome(at: at, kind: "expired", text: "code expired", why: report.id.rawValue)
        case .status(let report) where report.level == .error:
            return LastOutcome(at: at, kind: "error", text: report.message ?? report.id.rawValue, why: report.id.rawValue)
        case .setToken(_, let resource):
            return LastOutcome(at: at, kind: "ok", text: "authorized \(resource)", why: nil)
        case .tokenRequestFailed(let resource, let code, let description):
            return LastOutcome(at: at, kind: "error", text: "not authorized \(resource): \(description)", why: code.rawValue)
        default:
            return nil
        }
    }

    private static func retry(_ delayMs: Int64?) -> String {
        guard let delayMs else { return "" }
        let seconds = Double(delayMs) / 1000
        return seconds < 10 ? " (retry in \((seconds * 10).rounded() / 10) s)" : " (retry in \(Int(seconds.rounded())) s)"
    }
}
