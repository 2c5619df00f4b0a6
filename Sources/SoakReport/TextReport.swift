import Foundation
import RegcodeSupport

// The text rendering of a SoakReport: the summary a terminal shows.

extension SoakReport {

    /// A readable summary: what went wrong (``headline``) and the devices that never got a code,
    /// the fleet's figures, the OAuth device grant's figures per fleet (when the run has any), trouble
    /// by stage with the trouble windows, the fleets, then (when the request log was read) onboarding,
    /// requests by stage and failed onboardings, then one table row per device.
    package func text() -> String {
        var lines: [String] = []
        lines.append("regcoded soak report, generated \(UTCText.readable(generatedAtMs))")
        var window = sinceMs.map { "since \(UTCText.readable($0))" } ?? "whole log"
        if let first = fleet.firstSentMs, let last = fleet.lastSentMs {
            window += "; polls sent \(UTCText.readable(first)) to \(UTCText.readable(last))"
        }
        lines.append("window: \(window)")
        lines += headline.enumerated().map { ($0.offset == 0 ? "trouble: " : "         ") + Self.printable($0.element) }
        let dead = trouble.figures.neverGotCode
        if !dead.isEmpty {
            // A few hundred names would push everything else off the screen; the rest are in FAILED ONBOARDINGS.
            var names = dead.prefix(100).map(Self.printable)
            if dead.count > 100 { names.append("… and \(dead.count - 100) more") }
            lines += Self.wrapped("never got a code: ", names)
        }
        lines.append("percentiles: nearest rank; intervals, lateness and latency in ms or s")
        lines.append("")
        lines.append("FLEET (\(devices.count) device\(devices.count == 1 ? "" : "s"))")
        lines += Self.textBlock(fleet, eventsLoaded: eventsLoaded).map { "  " + $0 }
        if let logins {
            lines.append("  logins: \(logins.summary)")
        }
        lines.append("")
        lines += deviceFlowTextSection()
        lines += troubleSections()
        if requestsLoaded {
            lines += requestSections()
        }
        lines.append("DEVICES")
        var header = [
            "DEVICE", "FLEET", "GOT CODE", "POLLS", "CODES", "AUTH", "EXPIRED", "TTA P50", "INTERVAL P50", "PLANNED P50",
            "LATE P50", "LATE P99", "LATE MAX", "429", "BACKOFFS", StatusEventRecord.expired, StatusEventRecord.failed,
        ]
        if requestsLoaded {
            header += ["STATE", "REQUESTS", "REQ 429", "REQ 5XX", "RE-REG", "NEW CODES"]
        }
        let rows = devices.map { device -> [String] in
            let f = device.figures
            var row = [
                Self.printable(device.device), Self.printable(device.fleet), device.trouble.gotCode ? "yes" : "no",
                String(f.polls), String(f.codes), String(f.authenticatedCodes), String(f.expiredCodes),
                NumberText.duration(f.timeToAuthenticate.p50), NumberText.duration(f.achievedInterval.p50),
                NumberText.duration(f.plannedInterval.p50), NumberText.duration(f.lateness.p50),
                NumberText.duration(f.lateness.p99), NumberText.duration(f.lateness.max), String(f.throttled),
                String(f.backoffs), f.expiryEvents.map(String.init) ?? "-", f.failureEvents.map(String.init) ?? "-",
            ]
            if requestsLoaded {
                let r = device.requests
                row += [
                    device.state.map(Self.printable) ?? "-", String(r.requests),
                    String(r.stages.reduce(0) { $0 + $1.throttled }), String(r.stages.reduce(0) { $0 + $1.serverErrors }),
                    String(device.onboarding.reRegistrations), device.onboarding.newCodes.map(String.init) ?? "-",
                ]
            }
            return row
        }
        lines.append(rows.isEmpty ? "(no polls logged in this window)" : TextTable.render(header: header, rows: rows))
        return lines.joined(separator: "\n") + "\n"
    }

    /// `prefix` then `items` joined by commas, wrapped at about 100 columns under the prefix.
    static func wrapped(_ prefix: String, _ items: [String]) -> [String] {
        var lines: [String] = []
        var line = prefix
        for (index, item) in items.enumerated() {
            let piece = item + (index == items.count - 1 ? "" : ",")
            if line.count > prefix.count && line.count + piece.count + 1 > 100 {
                lines.append(line)
                line = String(repeating: " ", count: prefix.count)
            }
            line += (line.count > prefix.count ? " " : "") + piece
        }
        lines.append(line)
        return lines
    }

    /// TROUBLE BY STAGE (with the trouble windows) and FLEETS, each followed by a blank line.
    private func troubleSections() -> [String] {
        var lines: [String] = []
        let t = trouble.figures
        lines.append("TROUBLE BY STAGE (\(t.throttled) 429s, \(t.serverErrors) 5xx, \(t.failed) errors in all)")
        if t.stages.isEmpty {
            lines.append("(no requests logged in this window)")
        } else {
            let rows = t.stages.map { stage -> [String] in
                [
                    Self.printable(stage.stage.rawValue), String(stage.requests), String(stage.failed), String(stage.throttled),
                    String(stage.serverErrors),
                ]
            }
            lines.append(TextTable.render(header: ["STAGE", "REQUESTS", "ERRORS", "429", "5XX"], rows: rows))
        }
        let bucket = NumberText.duration(Double(trouble.bucketMs))
        if trouble.windows.isEmpty {
            lines.append(
                "trouble windows: none (no \(bucket) bucket with \(Self.troubleMinimumErrors)+ errors making \(Int(Self.troubleShare * 100)) % or more of its requests)"
            )
        } else {
            lines.append(
                "trouble windows (\(bucket) buckets with \(Self.troubleMinimumErrors)+ errors making \(Int(Self.troubleShare * 100)) % or more of their requests):"
            )
            for window in trouble.windows {
                lines.append("  " + Self.printable(Self.describe(window, withDate: windowsSpanDays)))
            }
        }
        lines.append("")
        if fleets.count > 1 || fleets.first?.fleet != noFleetName {
            lines.append("FLEETS")
            let rows = fleets.map { f -> [String] in
                [
                    Self.printable(f.fleet), String(f.trouble.devices), String(f.trouble.devicesWithCode),
                    String(f.trouble.neverGotCode.count), f.trouble.stops.first.map { Self.printable($0.phrase) } ?? "-",
                    String(f.trouble.throttled), String(f.trouble.serverErrors), String(f.figures.polls),
                    NumberText.duration(f.figures.achievedInterval.p50), NumberText.duration(f.figures.lateness.p99),
                ]
            }
            let header = ["FLEET", "DEVICES", "GOT CODE", "NO CODE", "MOSTLY STOPPED AT", "429", "5XX", "POLLS", "INTERVAL P50", "LATE P99"]
            lines.append(TextTable.render(header: header, rows: rows))
            lines.append("")
        }
        return lines
    }

    /// `T1 12:00:05–12:01:30 (1m 25s): 340 429s, 2 5xx, 0 other errors of 400 requests; mostly registration; fleets a, b`.
    static func describe(_ window: TroubleWindow, withDate: Bool = false) -> String {
        var text =
            "\(window.label) \(clock(window.startMs, withDate: withDate))–\(clock(window.endMs, withDate: withDate)) (\(NumberText.duration(Double(window.endMs - window.startMs)))): "
            + "\(window.throttled) 429s, \(window.serverErrors) 5xx, \(window.otherErrors) other errors of \(window.requests) requests"
        if let stage = window.worstStage { text += "; mostly \(stage.rawValue)" }
        if !window.fleets.isEmpty { text += "; fleet\(window.fleets.count == 1 ? "" : "s") \(window.fleets.joined(separator: ", "))" }
        return text
    }

    /// ONBOARDING, REQUESTS BY STAGE and FAILED ONBOARDINGS, each followed by a blank line.
    private func requestSections() -> [String] {
        var lines: [String] = []
        let o = onboarding
        let codes =
            o.codesIssued.map {
                "\($0) REGCODE event\($0 == 1 ? "" : "s"), \(o.newCodes ?? 0) new code\(o.newCodes == 1 ? "" : "s") after each device's first"
            }
            ?? "events not read"
        let rows: [(String, String)] = [
            ("devices with a code", "\(o.devicesWithCode) of \(devices.count)"),
            ("failed onboardings", String(o.failedOnboardings)),
            ("registrations", "\(o.registrations) ok, \(o.reRegistrations) re-registration\(o.reRegistrations == 1 ? "" : "s")"),
            ("codes issued", codes),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        lines.append("ONBOARDING")
        lines += rows.map { "  " + $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }
        lines.append("")

        lines.append(
            "REQUESTS BY STAGE (\(requests.requests) request\(requests.requests == 1 ? "" : "s") other than polls, \(requests.retried) retried)"
        )
        let used = requests.stages.filter { $0.requests > 0 }
        if used.isEmpty {
            lines.append("(no requests logged in this window)")
        } else {
            let header = ["STAGE", "REQUESTS", "OK", "429", "5XX", "TRANSPORT", "4XX", "OTHER", "RETRIED", "LATENCY P50", "LATENCY P99"]
            let stageRows = used.map { stage -> [String] in
                [
                    Self.printable(stage.stage.rawValue), String(stage.requests), String(stage.ok), String(stage.throttled),
                    String(stage.serverErrors), String(stage.transportErrors), String(stage.clientErrors), String(stage.other),
                    String(stage.retried), NumberText.duration(stage.latency.p50), NumberText.duration(stage.latency.p99),
                ]
            }
            lines.append(TextTable.render(header: header, rows: stageRows))
        }
        lines.append("")

        lines.append("FAILED ONBOARDINGS (\(failedOnboardings.count) device\(failedOnboardings.count == 1 ? "" : "s") without a code)")
        if failedOnboardings.isEmpty {
            lines.append("(none: every device got a code)")
        } else {
            let header = ["DEVICE", "STATE", "REQUESTS", "LAST FAILED REQUEST", "LAST FAILURE", "MESSAGE"]
            let failureRows = failedOnboardings.map { failed -> [String] in
                [
                    Self.printable(failed.device), failed.state.map(Self.printable) ?? "-", String(failed.requests),
                    failed.lastFailedRequest.map(Self.describe) ?? "-", failed.lastFailure.map { Self.printable($0.errorId) } ?? "-",
                    failed.lastFailure?.message.map(Self.printable) ?? "-",
                ]
            }
            lines.append(TextTable.render(header: header, rows: failureRows))
        }
        lines.append("")
        return lines
    }

    /// `registration 400 client-error (invalid_request)`.
    static func describe(_ request: RequestRecord) -> String {
        var text = "\(request.stage.rawValue) \(request.httpStatus.map(String.init) ?? "-") \(request.outcome.rawValue)"
        if let code = request.errorCode { text += " (\(code))" }
        return printable(text)
    }

    private static func textBlock(_ f: PollFigures, eventsLoaded: Bool) -> [String] {
        func spread(_ d: Distribution, withMin: Bool = false, asCount: Bool = false) -> String {
            guard d.count > 0 else { return "n=0" }
            func value(_ v: Double?) -> String { asCount ? v.map { NumberText.fixed($0, maxDecimals: 0) } ?? "-" : NumberText.duration(v) }
            var parts = ["n=\(d.count)"]
            if withMin { parts.append("min \(value(d.min))") }
            parts += ["p50 \(value(d.p50))", "p95 \(value(d.p95))", "p99 \(value(d.p99))", "max \(value(d.max))"]
            return parts.joined(separator: "  ")
        }
        let perCode =
            f.codes == 0
            ? ""
            : " (\(f.codes) codes; per code mean \(NumberText.fixed(f.pollsPerCode.mean ?? 0, maxDecimals: 2)), max \(NumberText.fixed(f.pollsPerCode.max ?? 0, maxDecimals: 0)))"
        var statuses = f.httpStatuses.keys.sorted().map { "\($0) \(f.httpStatuses[$0] ?? 0)" }
        if f.withoutHTTPStatus > 0 { statuses.append("none \(f.withoutHTTPStatus)") }
        let outcomes = orderedOutcomes(f).filter { $0.1 > 0 }.map { "\($0.0.rawValue) \($0.1)" }
        var expiries = "\(f.expiredCodes) expired code\(f.expiredCodes == 1 ? "" : "s"), \(f.codeInvalid) code-invalid"
        if eventsLoaded {
            expiries += ", REG410 events \(f.expiryEvents ?? 0), REG500 events \(f.failureEvents ?? 0)"
        }
        let deviceFlow = f.hasDeviceFlowFigures
        let denied = deviceFlow ? " \(f.deniedCodes) denied," : ""
        var rows: [(String, String)] = [
            ("polls", "\(f.polls)\(perCode)"),
            ("achieved interval", spread(f.achievedInterval)),
            ("planned interval", spread(f.plannedInterval)),
            ("lateness", spread(f.lateness, withMin: true)),
            ("latency", spread(f.latency)),
            ("poll 429s", String(f.throttled)),
            ("backoffs", String(f.backoffs)),
            (
                CodeFate.authenticated.rawValue,
                "\(f.authenticatedCodes) code\(f.authenticatedCodes == 1 ? "" : "s"); time to authenticate \(spread(f.timeToAuthenticate))"
            ),
            ("expiries", expiries),
            (
                "codes",
                "\(f.authenticatedCodes) authenticated, \(f.expiredCodes) expired,\(denied) \(f.endedCodes) ended otherwise, \(f.openCodes) still polling"
            ),
            ("outcomes", outcomes.isEmpty ? "-" : outcomes.joined(separator: ", ")),
            ("HTTP statuses", statuses.isEmpty ? "-" : statuses.joined(separator: ", ")),
        ]
        if deviceFlow {
            func plural(_ count: Int) -> String { count == 1 ? "" : "s" }
            let perLogin = f.pollsPerLogin.count == 0 ? "" : "; polls per login \(spread(f.pollsPerLogin, asCount: true))"
            rows.append(
                (
                    "device flow",
                    "\(f.slowDownAnswers) slow-down answer\(plural(f.slowDownAnswers)), \(f.earlyPolls) early poll\(plural(f.earlyPolls)) (\(f.earlyPollsAfterSlowDown) after a slow-down), \(f.deniedCodes) denied code\(plural(f.deniedCodes))\(perLogin)"
                )
            )
        }
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }
    }

    /// Device names come from the database: control characters would garble a terminal.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}
