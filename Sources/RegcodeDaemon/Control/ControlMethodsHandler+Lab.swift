import ControlRPC
import DeviceEvents
import Foundation
import RegcodeEngine
import RegcodeRecords
import RegcodeSupport

/// What a lab's console needs beyond the AccessEnabler calls: live fleet figures, a device's recent polls, and
/// approving a code on the embedded simulator.
extension ControlMethodsHandler {
    /// The answer when the backend is not the embedded simulator: approving belongs to the real backend's page.
    static func noEmbeddedSimulator() -> RPCError {
        RPCError(
            code: 1006,
            message: "no embedded simulator: approve the code on the backend's own activation page",
            data: ["reason": "backend", "backend": "external"]
        )
    }

    func devicesPolls(_ params: RPCParams) async throws(RPCError) -> JSONValue {
        let name = try params.string("device")
        let limit = try params.optionalInt("limit") ?? 50
        guard (1...1000).contains(limit) else { throw .invalidParams("'limit' must be 1…1000", data: ["member": "limit"]) }
        let polls: [PollAttempt]
        do {
            polls = try await context.devices.recentPolls(of: name, limit: Int(limit))
        } catch {
            throw Self.rpcError(error)
        }
        return [
            "device": .string(name),
            "polls": .array(
                polls.map { poll in
                    [
                        "code": .string(poll.code),
                        "sentAt": .int(poll.sentEpochMs),
                        "plannedAt": .int(poll.plannedEpochMs),
                        "latencyMs": .double((poll.latencyMs * 10).rounded() / 10),
                        "httpStatus": poll.httpStatus.map { .int(Int64($0)) } ?? .null,
                        "outcome": .string(poll.outcome.rawValue),
                        "nextDelayMs": poll.nextDelayMs.map(JSONValue.int) ?? .null,
                    ]
                }
            ),
        ]
    }

    /// `devices.polled`: the devices that polled after `since` (ms), so a console's rows follow the polls between
    /// two full lists; `now` is the next call's `since`.
    func devicesPolled(since: Int64) -> JSONValue {
        // A poll is stored (and noted) after it was sent: `now` a little in the past catches one sent just before.
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let devices = context.status.liveStats.polled(after: since).sorted { $0.device < $1.device }.map { polled -> JSONValue in
            [
                "device": .string(polled.device),
                "code": .string(polled.note.code),
                "newPolls": .int(Int64(polled.note.polls(after: since))),
                "lastPoll": .int(polled.note.lastPollMs),
                "lastHttpStatus": polled.note.httpStatus.map { .int(Int64($0)) } ?? .null,
                "lastOutcome": polled.outcome?.jsonValue ?? .null,
            ]
        }
        return ["now": .int(now), "devices": .array(devices)]
    }

    func fleetsStats(series: Bool = false) async -> JSONValue {
        let byFleet = await context.devices.phaseCountsByFleet(noFleet: LiveStats.noFleet)
        let counters = context.status.liveStats.counters()
        let nowSecond = Int64(Date().timeIntervalSince1970)
        var names = Set(byFleet.keys).union(counters.keys)
        // Configured fleets show even before their first device exists (a ramp, or count 0).
        for fleet in context.devices.catalog.fleets { names.insert(fleet.name) }
        var total = LiveStats.Counters()
        var totalStates: [String: Int64] = [:]
        var fleets: [JSONValue] = []
        for name in names.sorted() {
            var figures = LiveStats.figures(counters[name], nowSecond: nowSecond)
            let phases = byFleet[name] ?? [:]
            var states: [String: JSONValue] = [:]
            for (phase, count) in phases {
                states[phase.rawValue] = .int(Int64(count))
                totalStates[phase.rawValue, default: 0] += Int64(count)
            }
            figures["name"] = .string(name)
            figures["devices"] = .int(Int64(phases.values.reduce(0, +)))
            figures["states"] = .object(states)
            if series { figures["series"] = LiveStats.series(counters[name], nowSecond: nowSecond) }
            fleets.append(.object(figures))
            if let fleetCounters = counters[name] { total.merge(fleetCounters) }
        }
        var totals = LiveStats.figures(total, nowSecond: nowSecond)
        totals["devices"] = .int(totalStates.values.reduce(0, +))
        totals["states"] = .object(totalStates.mapValues(JSONValue.int))
        if series { totals["series"] = LiveStats.series(total, nowSecond: nowSecond) }
        return ["windowSeconds": .int(Int64(LiveStats.windowSeconds)), "fleets": .array(fleets), "totals": .object(totals)]
    }

    func simulatorApprove(_ params: RPCParams) async throws(RPCError) -> JSONValue {
        let code = try params.string("code")
        let mvpd = try params.optionalString("mvpd")
        guard let simulator = context.simulator else { throw Self.noEmbeddedSimulator() }
        do {
            let approvedWith = try simulator.approve(code: code, mvpd: mvpd)
            return ["approved": true, "code": .string(code.uppercased()), "mvpd": .string(approvedWith)]
        } catch {
            switch error {
            case .unknownCode:
                throw .invalidParams("no code \(code.uppercased()) was issued", data: ["member": "code", "reason": "unknown_code"])
            case .codeGone:
                throw .conflict("the code \(code.uppercased()) has expired or was replaced by a newer one", data: ["reason": "code_expired"])
            case .unknownMVPD(let mvpd):
                throw .invalidParams("the MVPD '\(mvpd)' is not configured on the simulator", data: ["member": "mvpd", "reason": "unknown_mvpd"])
            case .alreadyCompleted(let mvpd):
                throw .conflict("the code \(code.uppercased()) was already approved with \(mvpd)", data: ["reason": "already_completed"])
            }
        }
    }
}
