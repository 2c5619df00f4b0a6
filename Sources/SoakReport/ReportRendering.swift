// Text, JSON and CSV renderings of a SoakReport.

import Foundation
import RegcodeSupport

extension SoakReport {
    /// The report as one JSON object: `fleet` and `devices`, snake_case keys, milliseconds.
    ///
    /// Every key is always present (`null` when a figure has no values), in a fixed order; when the
    /// request log was read, `failed_onboardings` and, in `fleet` and each device, `onboarding` and
    /// `requests` (and a device's `state`) are added.
    public func json(pretty: Bool = true) -> String {
        var json = JSONWriter(layout: pretty ? .indented(2) : .compact)
        json.object { json in
            json.key("generated_at_ms")
            json.int(generatedAtMs)
            json.key("generated_at")
            json.string(UTCText.iso(generatedAtMs))
            json.key("since_ms")
            json.optional(sinceMs)
            json.key("events_loaded")
            json.bool(eventsLoaded)
            json.key("percentile_method")
            json.string("nearest-rank")
            json.key("fleet")
            json.object { json in
                json.key("devices")
                json.int(Int64(devices.count))
                Self.writeMembers(fleet, to: &json)
                if requestsLoaded {
                    json.key("onboarding")
                    Self.writeOnboarding(onboarding, device: nil, to: &json)
                    json.key("requests")
                    Self.writeRequests(requests, to: &json)
                }
            }
            json.key("devices")
            json.array { json in
                for device in devices {
                    json.object { json in
                        json.key("device")
                        json.string(device.device)
                        Self.writeMembers(device.figures, to: &json)
                        if requestsLoaded {
                            json.key("state")
                            if let state = device.state { json.string(state) } else { json.null() }
                            json.key("onboarding")
                            Self.writeOnboarding(device.onboarding, device: device, to: &json)
                            json.key("requests")
                            Self.writeRequests(device.requests, to: &json)
                        }
                    }
                }
            }
            if requestsLoaded {
                json.key("failed_onboardings")
                json.array { json in
                    for failed in failedOnboardings {
                        Self.writeFailedOnboarding(failed, to: &json)
                    }
                }
            }
        }
        return json.text
    }

    /// `onboarding`: the fleet's counts, or one device's (with `got_code` and its last failure).
    private static func writeOnboarding(_ figures: OnboardingFigures, device: DeviceReport?, to json: inout JSONWriter) {
        json.object { json in
            if let device {
                json.key("got_code")
                json.bool(device.failedOnboarding == nil)
            } else {
                json.key("devices_with_code")
                json.int(Int64(figures.devicesWithCode))
                json.key("failed_onboardings")
                json.int(Int64(figures.failedOnboardings))
            }
            json.key("registrations_ok")
            json.int(Int64(figures.registrations))
            json.key("re_registrations")
            json.int(Int64(figures.reRegistrations))
            json.key("codes_issued")
            json.optional(figures.codesIssued)
            json.key("new_codes")
            json.optional(figures.newCodes)
        }
    }

    /// `requests`: totals and one object per stage.
    private static func writeRequests(_ figures: RequestFigures, to json: inout JSONWriter) {
        json.object { json in
            json.key("total")
            json.int(Int64(figures.requests))
            json.key("retried")
            json.int(Int64(figures.retried))
            json.key("by_stage")
            json.object { json in
                for stage in figures.stages {
                    json.key(stage.stage)
                    json.object { json in
                        for (key, value) in [
                            ("requests", stage.requests), ("ok", stage.ok), ("throttled_429", stage.throttled),
                            ("server_5xx", stage.serverErrors), ("transport_errors", stage.transportErrors),
                            ("client_errors", stage.clientErrors), ("other", stage.other), ("retried", stage.retried),
                        ] {
                            json.key(key)
                            json.int(Int64(value))
                        }
                        json.key("outcomes")
                        json.object { json in
                            for (outcome, value) in orderedRequestOutcomes(stage) {
                                json.key(outcome)
                                json.int(Int64(value))
                            }
                        }
                        json.key("latency_ms")
                        writeDistribution(stage.latency, to: &json)
                    }
                }
            }
        }
    }

    private static func writeFailedOnboarding(_ failed: FailedOnboarding, to json: inout JSONWriter) {
        json.object { json in
            json.key("device")
            json.string(failed.device)
            json.key("state")
            if let state = failed.state { json.string(state) } else { json.null() }
            json.key("requests")
            json.int(Int64(failed.requests))
            json.key("failure_events")
            json.int(Int64(failed.failureEvents))
            json.key("last_failure")
            if let event = failed.lastFailure {
                json.object { json in
                    json.key("error_id")
                    json.string(event.errorId)
                    json.key("message")
                    if let message = event.message { json.string(message) } else { json.null() }
                    json.key("time_ms")
                    json.int(event.timeMs)
                }
            } else {
                json.null()
            }
            json.key("last_failed_request")
            if let request = failed.lastFailedRequest {
                json.object { json in
                    json.key("stage")
                    json.string(request.stage)
                    json.key("endpoint")
                    json.string(request.endpoint)
                    json.key("sent_ms")
                    json.int(request.sentMs)
                    json.key("http_status")
                    json.optional(request.httpStatus)
                    json.key("outcome")
                    json.string(request.outcome)
                    json.key("error_code")
                    if let code = request.errorCode { json.string(code) } else { json.null() }
                }
            } else {
                json.null()
            }
        }
    }

    private static func writeDistribution(_ d: Distribution, to json: inout JSONWriter) {
        json.object { json in
            json.key("count")
            json.int(Int64(d.count))
            json.key("min")
            json.optional(d.min)
            json.key("p50")
            json.optional(d.p50)
            json.key("p95")
            json.optional(d.p95)
            json.key("p99")
            json.optional(d.p99)
            json.key("max")
            json.optional(d.max)
            json.key("mean")
            json.optional(d.mean)
        }
    }

    /// Known request outcomes first (in ``requestOutcomeKinds`` order), then others alphabetically.
    static func orderedRequestOutcomes(_ stage: StageFigures) -> [(String, Int)] {
        let known = requestOutcomeKinds.filter { stage.outcomes[$0] != nil }
        let others = stage.outcomes.keys.filter { !requestOutcomeKinds.contains($0) }.sorted()
        return (known + others).map { ($0, stage.outcomes[$0] ?? 0) }
    }

    private static func writeMembers(_ figures: PollFigures, to json: inout JSONWriter) {
        func count(_ key: String, _ value: Int) {
            json.key(key)
            json.int(Int64(value))
        }
        func distribution(_ key: String, _ d: Distribution) {
            json.key(key)
            writeDistribution(d, to: &json)
        }
        count("polls", figures.polls)
        count("codes", figures.codes)
        distribution("polls_per_code", figures.pollsPerCode)
        distribution("achieved_interval_ms", figures.achievedInterval)
        distribution("planned_interval_ms", figures.plannedInterval)
        distribution("lateness_ms", figures.lateness)
        distribution("latency_ms", figures.latency)
        count("throttled_429", figures.throttled)
        count("backoffs", figures.backoffs)
        json.key("outcomes")
        json.object { json in
            for (outcome, value) in orderedOutcomes(figures) {
                json.key(outcome)
                json.int(Int64(value))
            }
        }
        json.key("http_statuses")
        json.object { json in
            for status in figures.httpStatuses.keys.sorted() {
                json.key(String(status))
                json.int(Int64(figures.httpStatuses[status] ?? 0))
            }
            if figures.withoutHTTPStatus > 0 {
                json.key("none")
                json.int(Int64(figures.withoutHTTPStatus))
            }
        }
        json.key("code_fates")
        json.object { json in
            json.key("authenticated")
            json.int(Int64(figures.authenticatedCodes))
            json.key("expired")
            json.int(Int64(figures.expiredCodes))
            json.key("ended")
            json.int(Int64(figures.endedCodes))
            json.key("open")
            json.int(Int64(figures.openCodes))
        }
        count("authenticated_codes", figures.authenticatedCodes)
        distribution("time_to_authenticate_ms", figures.timeToAuthenticate)
        json.key("expiries")
        json.object { json in
            json.key("expired_codes")
            json.int(Int64(figures.expiredCodes))
            json.key("code_invalid_polls")
            json.int(Int64(figures.codeInvalid))
            json.key("reg410_events")
            json.optional(figures.expiryEvents)
            json.key("reg500_events")
            json.optional(figures.failureEvents)
        }
        json.key("first_sent_ms")
        json.optional(figures.firstSentMs)
        json.key("last_sent_ms")
        json.optional(figures.lastSentMs)
    }

    /// Known outcomes first (in ``outcomeKinds`` order), then any others alphabetically.
    static func orderedOutcomes(_ figures: PollFigures) -> [(String, Int)] {
        let known = outcomeKinds.filter { figures.outcomes[$0] != nil }
        let others = figures.outcomes.keys.filter { !outcomeKinds.contains($0) }.sorted()
        return (known + others).map { ($0, figures.outcomes[$0] ?? 0) }
    }

    // MARK: CSV

    /// One row per device plus a `fleet` row (first), with a header; RFC 4180 quoting.
    ///
    /// `scope` is `fleet` or `device` (so a device may be called "fleet"). HTTP-status and outcome
    /// columns are those occurring in the report, so the columns are stable within one report.
    /// When the request log was read, onboarding columns and eight columns per stage follow
    /// (`registration_requests`, `registration_ok`, `registration_429`, `registration_5xx`,
    /// `registration_transport_errors`, `registration_client_errors`, `registration_other`,
    /// `registration_retried`, …); on the fleet row `devices_with_code` and `failed_onboardings` are
    /// counts, on a device row 1 or 0.
    public func csv() -> String {
        typealias Column = (String, (PollFigures) -> String)
        func count(_ value: Int) -> String { String(value) }
        func number(_ value: Double?) -> String { value.map(NumberText.json) ?? "" }
        func distribution(_ name: String, _ pick: @escaping (PollFigures) -> Distribution, unit: String = "_ms") -> [Column] {
            [
                ("\(name)_count", { count(pick($0).count) }),
                ("\(name)_min\(unit)", { number(pick($0).min) }),
                ("\(name)_p50\(unit)", { number(pick($0).p50) }),
                ("\(name)_p95\(unit)", { number(pick($0).p95) }),
                ("\(name)_p99\(unit)", { number(pick($0).p99) }),
                ("\(name)_max\(unit)", { number(pick($0).max) }),
                ("\(name)_mean\(unit)", { number(pick($0).mean) }),
            ]
        }
        var columns: [Column] = [
            ("polls", { count($0.polls) }),
            ("codes", { count($0.codes) }),
            ("polls_per_code_mean", { number($0.pollsPerCode.mean) }),
            ("polls_per_code_max", { number($0.pollsPerCode.max) }),
        ]
        columns += distribution("achieved_interval", \.achievedInterval)
        columns += distribution("planned_interval", \.plannedInterval)
        columns += distribution("lateness", \.lateness)
        columns += distribution("latency", \.latency)
        columns += [
            ("throttled_429", { count($0.throttled) }),
            ("backoffs", { count($0.backoffs) }),
            ("authenticated_codes", { count($0.authenticatedCodes) }),
        ]
        columns += distribution("time_to_authenticate", \.timeToAuthenticate)
        columns += [
            ("expired_codes", { count($0.expiredCodes) }),
            ("ended_codes", { count($0.endedCodes) }),
            ("open_codes", { count($0.openCodes) }),
            ("code_invalid_polls", { count($0.codeInvalid) }),
            ("reg410_events", { $0.expiryEvents.map(String.init) ?? "" }),
            ("reg500_events", { $0.failureEvents.map(String.init) ?? "" }),
            ("first_sent_ms", { $0.firstSentMs.map(String.init) ?? "" }),
            ("last_sent_ms", { $0.lastSentMs.map(String.init) ?? "" }),
        ]
        for (outcome, _) in Self.orderedOutcomes(fleet) {
            columns.append(("outcome_" + outcome.replacingDashes(), { count($0.outcomes[outcome] ?? 0) }))
        }
        for status in fleet.httpStatuses.keys.sorted() {
            columns.append(("http_\(status)", { count($0.httpStatuses[status] ?? 0) }))
        }
        columns.append(("http_none", { count($0.withoutHTTPStatus) }))

        typealias RequestColumn = (String, (DeviceReport) -> String)
        var requestColumns: [RequestColumn] = []
        if requestsLoaded {
            requestColumns = [
                ("state", { $0.state ?? "" }),
                ("devices_with_code", { count($0.onboarding.devicesWithCode) }),
                ("failed_onboardings", { count($0.onboarding.failedOnboardings) }),
                ("registrations_ok", { count($0.onboarding.registrations) }),
                ("re_registrations", { count($0.onboarding.reRegistrations) }),
                ("codes_issued", { $0.onboarding.codesIssued.map(String.init) ?? "" }),
                ("new_codes", { $0.onboarding.newCodes.map(String.init) ?? "" }),
                ("requests", { count($0.requests.requests) }),
                ("requests_retried", { count($0.requests.retried) }),
            ]
            for stage in requests.stages.map(\.stage) {
                let prefix = stage.replacingDashes()
                let figures: [(String, (StageFigures) -> Int)] = [
                    ("requests", \.requests), ("ok", \.ok), ("429", \.throttled), ("5xx", \.serverErrors),
                    ("transport_errors", \.transportErrors), ("client_errors", \.clientErrors), ("other", \.other),
                    ("retried", \.retried),
                ]
                for (suffix, pick) in figures {
                    requestColumns.append(("\(prefix)_\(suffix)", { $0.requests.stage(stage).map { count(pick($0)) } ?? "0" }))
                }
            }
            requestColumns += [
                ("last_failure_id", { $0.failedOnboarding?.lastFailure?.errorId ?? "" }),
                ("last_failure_message", { $0.failedOnboarding?.lastFailure?.message ?? "" }),
            ]
        }

        var lines = [(["scope", "device"] + columns.map(\.0) + requestColumns.map(\.0)).map(Self.csvField).joined(separator: ",")]
        let fleetRow = DeviceReport(device: "", figures: fleet, requests: requests, onboarding: onboarding)
        let scoped = [("fleet", fleetRow)] + devices.map { ("device", $0) }
        for (scope, report) in scoped {
            let fields = [scope, report.device] + columns.map { $0.1(report.figures) } + requestColumns.map { $0.1(report) }
            lines.append(fields.map(Self.csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // MARK: Text

    /// A readable summary: the fleet's figures, then (when the request log was read) onboarding,
    /// requests by stage and failed onboardings, then one table row per device.
    public func text() -> String {
        var lines: [String] = []
        lines.append("regcoded soak report, generated \(UTCText.readable(generatedAtMs))")
        var window = sinceMs.map { "since \(UTCText.readable($0))" } ?? "whole log"
        if let first = fleet.firstSentMs, let last = fleet.lastSentMs {
            window += "; polls sent \(UTCText.readable(first)) to \(UTCText.readable(last))"
        }
        lines.append("window: \(window)")
        lines.append("percentiles: nearest rank; intervals, lateness and latency in ms or s")
        lines.append("")
        lines.append("FLEET (\(devices.count) device\(devices.count == 1 ? "" : "s"))")
        lines += Self.textBlock(fleet, eventsLoaded: eventsLoaded).map { "  " + $0 }
        lines.append("")
        if requestsLoaded {
            lines += requestSections()
        }
        lines.append("DEVICES")
        var header = [
            "DEVICE", "POLLS", "CODES", "AUTH", "EXPIRED", "TTA P50", "INTERVAL P50", "PLANNED P50",
            "LATE P50", "LATE P99", "LATE MAX", "429", "BACKOFFS", StatusEventRecord.expired, StatusEventRecord.failed,
        ]
        if requestsLoaded {
            header += ["STATE", "REQUESTS", "REQ 429", "REQ 5XX", "RE-REG", "NEW CODES"]
        }
        let rows = devices.map { device -> [String] in
            let f = device.figures
            var row = [
                Self.printable(device.device), String(f.polls), String(f.codes), String(f.authenticatedCodes), String(f.expiredCodes),
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
                    Self.printable(stage.stage), String(stage.requests), String(stage.ok), String(stage.throttled),
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
        var text = "\(request.stage) \(request.httpStatus.map(String.init) ?? "-") \(request.outcome)"
        if let code = request.errorCode { text += " (\(code))" }
        return printable(text)
    }

    private static func textBlock(_ f: PollFigures, eventsLoaded: Bool) -> [String] {
        func spread(_ d: Distribution, withMin: Bool = false) -> String {
            guard d.count > 0 else { return "n=0" }
            var parts = ["n=\(d.count)"]
            if withMin { parts.append("min \(NumberText.duration(d.min))") }
            parts += [
                "p50 \(NumberText.duration(d.p50))", "p95 \(NumberText.duration(d.p95))",
                "p99 \(NumberText.duration(d.p99))", "max \(NumberText.duration(d.max))",
            ]
            return parts.joined(separator: "  ")
        }
        let perCode =
            f.codes == 0
            ? ""
            : " (\(f.codes) codes; per code mean \(NumberText.fixed(f.pollsPerCode.mean ?? 0, maxDecimals: 2)), max \(NumberText.fixed(f.pollsPerCode.max ?? 0, maxDecimals: 0)))"
        var statuses = f.httpStatuses.keys.sorted().map { "\($0) \(f.httpStatuses[$0] ?? 0)" }
        if f.withoutHTTPStatus > 0 { statuses.append("none \(f.withoutHTTPStatus)") }
        let outcomes = orderedOutcomes(f).filter { $0.1 > 0 }.map { "\($0.0) \($0.1)" }
        var expiries = "\(f.expiredCodes) expired code\(f.expiredCodes == 1 ? "" : "s"), \(f.codeInvalid) code-invalid"
        if eventsLoaded {
            expiries += ", REG410 events \(f.expiryEvents ?? 0), REG500 events \(f.failureEvents ?? 0)"
        }
        let rows: [(String, String)] = [
            ("polls", "\(f.polls)\(perCode)"),
            ("achieved interval", spread(f.achievedInterval)),
            ("planned interval", spread(f.plannedInterval)),
            ("lateness", spread(f.lateness, withMin: true)),
            ("latency", spread(f.latency)),
            ("429s", String(f.throttled)),
            ("backoffs", String(f.backoffs)),
            (
                "authenticated",
                "\(f.authenticatedCodes) code\(f.authenticatedCodes == 1 ? "" : "s"); time to authenticate \(spread(f.timeToAuthenticate))"
            ),
            ("expiries", expiries),
            (
                "codes",
                "\(f.authenticatedCodes) authenticated, \(f.expiredCodes) expired, \(f.endedCodes) ended otherwise, \(f.openCodes) still polling"
            ),
            ("outcomes", outcomes.isEmpty ? "-" : outcomes.joined(separator: ", ")),
            ("HTTP statuses", statuses.isEmpty ? "-" : statuses.joined(separator: ", ")),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }
    }

    /// Device names come from the database: control characters would garble a terminal.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}

extension String {
    fileprivate func replacingDashes() -> String {
        String(map { $0 == "-" ? "_" : $0 })
    }
}
