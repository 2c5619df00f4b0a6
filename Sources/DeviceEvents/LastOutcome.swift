import AccessEnablerAPI
import RegcodeEngine
import RegcodeRecords
import RegcodeSupport

/// What last happened to a device, in a word and a line: the console's and `regcodectl devices`' "last outcome".
///
/// Read from the steps the engine produces (requests, polls, callbacks), the latest one winning, so a device that
/// failed to register and then registered shows the success, and a code that expired says so.
package struct LastOutcome: Sendable, Equatable {
    /// Milliseconds since the epoch.
    package var at: Int64
    /// `ok`, `authenticated`, `pending`, `expired`, `error`, or a request or poll outcome (`throttled`, `server-error`, …).
    package var kind: String
    /// The Adobe error code or status id behind it, when there is one.
    package var why: String?
    /// What ``text`` says, kept as figures: every poll of every device replaces its device's outcome, and only the
    /// few a console or `regcodectl devices` shows are ever put into words.
    private var detail: Detail

    private enum Detail: Sendable, Equatable {
        case text(String)
        case poll(httpStatus: Int?, outcome: PollOutcome, nextDelayMs: Int64?)
        case request(stage: RequestStage, httpStatus: Int?, failed: Bool, retryDelayMs: Int64?)
    }

    package init(at: Int64, kind: String, text: String, why: String?) {
        self.init(at: at, kind: kind, why: why, detail: .text(text))
    }

    private init(at: Int64, kind: String, why: String?, detail: Detail) {
        self.at = at
        self.kind = kind
        self.why = why
        self.detail = detail
    }

    package var text: String {
        switch detail {
        case .text(let text):
            return text
        case .poll(let httpStatus, let outcome, let nextDelayMs):
            let status = httpStatus.map(String.init) ?? "no answer"
            let retry = outcome == .pending || outcome == .authenticated ? "" : Self.retry(nextDelayMs)
            return "poll \(status) \(outcome.rawValue)\(retry)"
        case .request(let stage, let httpStatus, let failed, let retryDelayMs):
            guard failed else { return "\(stage.rawValue) ok" }
            return "\(stage.rawValue) \(httpStatus.map(String.init) ?? "no answer")\(Self.retry(retryDelayMs))"
        }
    }

    package var jsonValue: JSONValue {
        ["at": .int(at), "kind": .string(kind), "text": .string(text), "why": why.map(JSONValue.string) ?? .null]
    }

    /// The outcome a step leaves a device with; nil when the step says nothing new (storage-only steps, diagnostics).
    package static func of(_ step: DeviceStep) -> LastOutcome? {
        var outcome: LastOutcome?
        for request in step.requests where request.outcome != .abandoned {
            let detail = Detail.request(
                stage: request.stage,
                httpStatus: request.httpStatus,
                failed: request.outcome != .ok,
                retryDelayMs: request.retryDelayMs
            )
            outcome = LastOutcome(at: request.sentEpochMs, kind: request.outcome.rawValue, why: request.errorCode, detail: detail)
        }
        for poll in step.polls where poll.outcome != .abandoned {
            let detail = Detail.poll(httpStatus: poll.httpStatus, outcome: poll.outcome, nextDelayMs: poll.nextDelayMs)
            outcome = LastOutcome(at: poll.sentEpochMs, kind: poll.outcome.rawValue, why: nil, detail: detail)
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
        case .app(.signedIn(let profile)):
            return LastOutcome(at: at, kind: "authenticated", text: "authenticated (\(profile.mvpd))", why: nil)
        case .app(.sessionCreated(_, let code?, _)):
            return LastOutcome(at: at, kind: "pending", text: "code \(code) issued", why: nil)
        case .app(.sessionEnded(let reason, let error)):
            return LastOutcome(at: at, kind: reason == .expired ? "expired" : "error", text: "login \(reason.rawValue)", why: error?.code)
        case .app(.callFailed(let call, let error, let message)):
            return LastOutcome(at: at, kind: "error", text: "\(call): \(message)", why: error?.code)
        case .app(.decision(let decision)):
            return LastOutcome(
                at: at,
                kind: decision.authorized ? "ok" : "error",
                text: (decision.authorized ? "authorized " : "not authorized ") + decision.resource,
                why: decision.error?.code
            )
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
