// Text, JSON and CSV renderings of a SoakReport.

import Foundation
import RegcodeSupport

extension SoakReport {
    /// The report as one JSON object: `fleet` and `devices`, snake_case keys, milliseconds.
    ///
    /// Every key is always present (`null` when a figure has no values), in a fixed order; when the
    /// request log was read, `failed_onboardings` and, in `fleet` and each device, `onboarding` and
    /// `requests` (and a device's `state`) are added. `trouble` (the headline sentences, devices
    /// without a code, 429s and 5xx by stage with polls as the stage `poll`, the timeline and the
    /// trouble windows) and `fleets` (every figure per fleet) are always there, as are each device's
    /// `fleet` and `trouble`; `throttled_429` of the poll figures still counts poll 429s only.
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
                json.key("logins")
                if let logins { logins.write(to: &json) } else { json.null() }
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
                        json.key("fleet")
                        json.string(device.fleet)
                        json.key("trouble")
                        Self.writeDeviceTrouble(device.trouble, to: &json)
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
            json.key("trouble")
            writeTrouble(to: &json)
            json.key("fleets")
            json.array { json in
                for group in fleets {
                    json.object { json in
                        json.key("fleet")
                        json.string(group.fleet)
                        json.key("trouble")
                        json.object { json in Self.writeTroubleFigures(group.trouble, to: &json) }
                        Self.writeMembers(group.figures, to: &json)
                        if requestsLoaded {
                            json.key("requests")
                            Self.writeRequests(group.requests, to: &json)
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

    /// `trouble`: what went wrong, fleet-wide (see ``headline``), with the timeline and windows.
    private func writeTrouble(to json: inout JSONWriter) {
        json.object { json in
            json.key("headline")
            json.array { json in
                for sentence in headline { json.string(sentence) }
            }
            Self.writeTroubleFigures(trouble.figures, to: &json)
            json.key("never_got_code_devices")
            json.array { json in
                for device in devices where !device.trouble.gotCode {
                    json.object { json in
                        json.key("device")
                        json.string(device.device)
                        json.key("fleet")
                        json.string(device.fleet)
                        json.key("stopped_at")
                        if let stage = device.trouble.stoppedAt { json.string(stage) } else { json.null() }
                        json.key("status")
                        if let status = device.trouble.stopStatus { json.string(status) } else { json.null() }
                        json.key("last_error")
                        if let error = device.trouble.lastError { json.string(error) } else { json.null() }
                    }
                }
            }
            json.key("bucket_ms")
            json.int(trouble.bucketMs)
            json.key("trouble_share")
            json.raw(NumberText.json(Self.troubleShare))
            json.key("windows")
            json.array { json in
                for window in trouble.windows {
                    json.object { json in
                        json.key("label")
                        json.string(window.label)
                        json.key("start_ms")
                        json.int(window.startMs)
                        json.key("end_ms")
                        json.int(window.endMs)
                        for (key, value) in [
                            ("requests", window.requests), ("throttled_429", window.throttled), ("server_5xx", window.serverErrors),
                            ("other_errors", window.otherErrors),
                        ] {
                            json.key(key)
                            json.int(Int64(value))
                        }
                        json.key("worst_stage")
                        if let stage = window.worstStage { json.string(stage) } else { json.null() }
                        json.key("fleets")
                        json.array { json in
                            for fleet in window.fleets { json.string(fleet) }
                        }
                    }
                }
            }
        }
    }

    /// The members of a ``TroubleFigures``: counts, where devices stopped, by stage, timeline.
    private static func writeTroubleFigures(_ t: TroubleFigures, to json: inout JSONWriter) {
        for (key, value) in [
            ("devices", t.devices), ("devices_with_code", t.devicesWithCode), ("never_got_code", t.neverGotCode.count),
            ("throttled_429", t.throttled), ("server_5xx", t.serverErrors), ("errors", t.failed),
        ] {
            json.key(key)
            json.int(Int64(value))
        }
        json.key("stopped_at")
        json.array { json in
            for stop in t.stops {
                json.object { json in
                    json.key("stage")
                    if let stage = stop.stage { json.string(stage) } else { json.null() }
                    json.key("status")
                    if let status = stop.status { json.string(status) } else { json.null() }
                    json.key("devices")
                    json.array { json in
                        for device in stop.devices { json.string(device) }
                    }
                }
            }
        }
        json.key("by_stage")
        json.object { json in
            for stage in t.stages {
                json.key(stage.stage)
                json.object { json in
                    for (key, value) in [
                        ("requests", stage.requests), ("errors", stage.failed), ("throttled_429", stage.throttled),
                        ("server_5xx", stage.serverErrors),
                    ] {
                        json.key(key)
                        json.int(Int64(value))
                    }
                }
            }
        }
        json.key("timeline")
        json.array { json in
            for bucket in t.timeline {
                json.object { json in
                    json.key("start_ms")
                    json.int(bucket.startMs)
                    for (key, value) in [
                        ("requests", bucket.requests), ("throttled_429", bucket.throttled), ("server_5xx", bucket.serverErrors),
                        ("other_errors", bucket.otherErrors),
                    ] {
                        json.key(key)
                        json.int(Int64(value))
                    }
                }
            }
        }
    }

    private static func writeDeviceTrouble(_ t: DeviceTrouble, to json: inout JSONWriter) {
        json.object { json in
            json.key("got_code")
            json.bool(t.gotCode)
            json.key("stopped_at")
            if let stage = t.stoppedAt { json.string(stage) } else { json.null() }
            json.key("stop_status")
            if let status = t.stopStatus { json.string(status) } else { json.null() }
            json.key("last_error")
            if let error = t.lastError { json.string(error) } else { json.null() }
            for (key, value) in [("throttled_429", t.throttled), ("server_5xx", t.serverErrors), ("errors", t.errors)] {
                json.key(key)
                json.int(Int64(value))
            }
        }
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
    /// counts, on a device row 1 or 0. Trouble columns come last (`fleet`, `got_code`,
    /// `never_got_code`, `stopped_at`, `stop_status`, `last_error`, `all_429`, `all_5xx`,
    /// `all_errors`, `poll_5xx`, `poll_errors`), and with named fleets one `group` row per fleet
    /// follows the devices (its `fleet` column names it).
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

        // Trouble columns, last so existing column positions stay. On the fleet and group rows
        // `got_code` counts devices with a code; 429s and 5xx are over every stage, polls included.
        typealias TroubleColumn = (String, (DeviceReport, TroubleFigures?) -> String)
        func pollServerErrors(_ device: DeviceReport) -> Int {
            device.figures.httpStatuses.filter { (500...599).contains($0.key) }.values.reduce(0, +)
        }
        func pollErrors(_ device: DeviceReport) -> Int {
            Self.errorOutcomes.reduce(0) { $0 + (device.figures.outcomes[$1] ?? 0) }
        }
        let troubleColumns: [TroubleColumn] = [
            ("fleet", { (device: DeviceReport, _: TroubleFigures?) -> String in device.fleet }),
            (
                "got_code",
                { (device: DeviceReport, group: TroubleFigures?) -> String in
                    if let group { return String(group.devicesWithCode) }
                    return device.trouble.gotCode ? "1" : "0"
                }
            ),
            (
                "never_got_code",
                { (device: DeviceReport, group: TroubleFigures?) -> String in
                    if let group { return String(group.neverGotCode.count) }
                    return device.trouble.gotCode ? "0" : "1"
                }
            ),
            (
                "stopped_at",
                { (device: DeviceReport, group: TroubleFigures?) -> String in
                    (group == nil ? device.trouble.stoppedAt : group?.stops.first?.stage) ?? ""
                }
            ),
            (
                "stop_status",
                { (device: DeviceReport, group: TroubleFigures?) -> String in
                    (group == nil ? device.trouble.stopStatus : group?.stops.first?.status) ?? ""
                }
            ),
            ("last_error", { (device: DeviceReport, group: TroubleFigures?) -> String in group == nil ? device.trouble.lastError ?? "" : "" }),
            ("all_429", { (device: DeviceReport, group: TroubleFigures?) -> String in String(group?.throttled ?? device.trouble.throttled) }),
            ("all_5xx", { (device: DeviceReport, group: TroubleFigures?) -> String in String(group?.serverErrors ?? device.trouble.serverErrors) }),
            ("all_errors", { (device: DeviceReport, group: TroubleFigures?) -> String in String(group?.failed ?? device.trouble.errors) }),
            // Request stages have their 429 and 5xx columns above, and `throttled_429` counts poll 429s.
            (
                "poll_5xx",
                { (device: DeviceReport, group: TroubleFigures?) -> String in
                    String(group.map { $0.stage("poll")?.serverErrors ?? 0 } ?? pollServerErrors(device))
                }
            ),
            (
                "poll_errors",
                { (device: DeviceReport, group: TroubleFigures?) -> String in
                    String(group.map { $0.stage("poll")?.failed ?? 0 } ?? pollErrors(device))
                }
            ),
        ]

        let names: [String] = ["scope", "device"] + columns.map(\.0) + requestColumns.map(\.0) + troubleColumns.map(\.0)
        var lines = [names.map(Self.csvField).joined(separator: ",")]
        var fleetRow = DeviceReport(device: "", figures: fleet, requests: requests, onboarding: onboarding)
        fleetRow.fleet = ""
        var scoped: [(String, DeviceReport, TroubleFigures?)] = [("fleet", fleetRow, trouble.figures)]
        scoped += devices.map { ("device", $0, nil) }
        if fleets.count > 1 || fleets.first?.fleet != noFleetName {
            // One row per configured fleet, after the devices: the device column is empty.
            for group in fleets {
                var onboardingFigures = OnboardingFigures()
                for device in devices where device.fleet == group.fleet { onboardingFigures.merge(device.onboarding) }
                var row = DeviceReport(device: "", figures: group.figures, requests: group.requests, onboarding: onboardingFigures)
                row.fleet = group.fleet
                scoped.append(("group", row, group.trouble))
            }
        }
        for (scope, report, group) in scoped {
            var fields = [scope, report.device] + columns.map { $0.1(report.figures) } + requestColumns.map { $0.1(report) }
            fields += troubleColumns.map { $0.1(report, group) }
            lines.append(fields.map(Self.csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // MARK: Text

    /// A readable summary: what went wrong (``headline``) and the devices that never got a code,
    /// the fleet's figures, trouble by stage with the trouble windows, the fleets, then (when the
    /// request log was read) onboarding, requests by stage and failed onboardings, then one table
    /// row per device.
    public func text() -> String {
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
                [Self.printable(stage.stage), String(stage.requests), String(stage.failed), String(stage.throttled), String(stage.serverErrors)]
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
        if let stage = window.worstStage { text += "; mostly \(stage)" }
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
            ("poll 429s", String(f.throttled)),
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
