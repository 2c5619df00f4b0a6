import ControlRPC
import RegcodeSupport

/// What a lab's console needs beyond the AccessEnabler calls: a device's recent polls, live fleet figures, and
/// approving a code on the embedded simulator.
extension ControlMethods {
    static let lab: [ControlMethod] = [
        ControlMethod(
            "devices.polls",
            "A device's latest polls, newest first.",
            parameters: [.device, ControlParameter("limit", .integer, "At most this many (1–1000, default 50).")],
            result: "{polls: [{code, sentAt, plannedAt, latencyMs, httpStatus, outcome, nextDelayMs}]}"
        ) { handler, params throws(RPCError) in try await handler.devicesPolls(params) },
        ControlMethod(
            "devices.polled",
            "The devices that polled after since (ms): each one's new polls, latest poll, status and outcome; now is the next since.",
            parameters: [ControlParameter("since", .integer, required: true, "Epoch milliseconds, e.g. the previous answer's now.")],
            result: "{now, devices: [{device, code, newPolls, lastPoll, lastHttpStatus, lastOutcome}]}"
        ) { handler, params throws(RPCError) in handler.devicesPolled(since: try params.optionalInt("since") ?? 0) },
        ControlMethod(
            "fleets.stats",
            "Per fleet: devices by state, polls per second, 429s and errors per minute, totals; with series, the last minute second by second.",
            parameters: [
                ControlParameter(
                    "series",
                    .boolean,
                    "Add series: per-second polls, throttled, errors, logins, latenessP50/P99 and latencyP50/P99 (ms, bin bounds) of the last windowSeconds."
                )
            ],
            result:
                "{windowSeconds, fleets: [{name, devices, states, pollsPerSecond, throttledPerMinute, errorsPerMinute, polls, throttled, errors, series?}], totals}"
        ) { handler, params throws(RPCError) in await handler.fleetsStats(series: try params.optionalBool("series") ?? false) },
        ControlMethod(
            "simulator.approve",
            "Approves a code on the embedded simulator, as a user on the second screen would.",
            parameters: [
                ControlParameter("code", .string, required: true, "The registration code."),
                ControlParameter("mvpd", .string, "The MVPD to sign in with (default: the device's selection)."),
            ],
            result: "{approved, code, mvpd}"
        ) { handler, params throws(RPCError) in try await handler.simulatorApprove(params) },
    ]
}
