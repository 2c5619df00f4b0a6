import Foundation
import RegcodeRecords
import RegcodeSupport

// The CSV rendering of a SoakReport: one row per device, the fleet and each configured fleet.

extension SoakReport {
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
    /// `all_errors`, `poll_5xx`, `poll_errors`), then the device flow columns (`polls_per_login_count`, `_p50`,
    /// `_p95`, `_max`, `_mean`, `slow_down_answers`, `early_polls`, `early_polls_after_slow_down`, `denied_codes`;
    /// always there, 0 for Adobe devices), and with named fleets one `group` row per fleet follows the devices (its
    /// `fleet` column names it).
    package func csv() -> String {
        let columns = Self.pollColumns(outcomes: Self.orderedOutcomes(fleet).map(\.0), statuses: fleet.httpStatuses.keys.sorted())
        let requestColumns = requestsLoaded ? Self.requestColumns(stages: requests.stages.map(\.stage)) : []
        let troubleColumns = Self.troubleColumns
        let flowColumns = Self.deviceFlowColumns
        let names: [String] =
            ["scope", "device"] + columns.map(\.0) + requestColumns.map(\.0) + troubleColumns.map(\.0) + flowColumns.map(\.0)
        var lines = [names.map(Self.csvField).joined(separator: ",")]
        for (scope, report, group) in csvRows() {
            var fields = [scope, report.device] + columns.map { $0.1(report.figures) } + requestColumns.map { $0.1(report) }
            fields += troubleColumns.map { $0.1(report, group) }
            fields += flowColumns.map { $0.1(report.figures) }
            lines.append(fields.map(Self.csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    private typealias PollColumn = (String, (PollFigures) -> String)
    private typealias RequestColumn = (String, (DeviceReport) -> String)
    /// On the fleet and group rows the group's trouble figures are given; on a device row, nil.
    private typealias TroubleColumn = (String, (DeviceReport, TroubleFigures?) -> String)

    /// The rows: the fleet first, then the devices, then (with named fleets) one `group` row per fleet.
    private func csvRows() -> [(String, DeviceReport, TroubleFigures?)] {
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
        return scoped
    }

    private static func count(_ value: Int) -> String { String(value) }

    /// The poll figures, then one column per outcome and per HTTP status of the report.
    private static func pollColumns(outcomes: [PollOutcome], statuses: [Int]) -> [PollColumn] {
        func number(_ value: Double?) -> String { value.map(NumberText.json) ?? "" }
        func distribution(_ name: String, _ pick: @escaping (PollFigures) -> Distribution, unit: String = "_ms") -> [PollColumn] {
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
        var columns: [PollColumn] = [
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
        for outcome in outcomes {
            columns.append(("outcome_" + outcome.rawValue.replacingDashes(), { count($0.outcomes[outcome] ?? 0) }))
        }
        for status in statuses {
            columns.append(("http_\(status)", { count($0.httpStatuses[status] ?? 0) }))
        }
        columns.append(("http_none", { count($0.withoutHTTPStatus) }))
        return columns
    }

    /// The OAuth device grant's figures and polls per login, after the trouble columns so that every earlier column
    /// keeps its position.
    private static var deviceFlowColumns: [PollColumn] {
        func number(_ value: Double?) -> String { value.map(NumberText.json) ?? "" }
        return [
            ("polls_per_login_count", { count($0.pollsPerLogin.count) }),
            ("polls_per_login_p50", { number($0.pollsPerLogin.p50) }),
            ("polls_per_login_p95", { number($0.pollsPerLogin.p95) }),
            ("polls_per_login_max", { number($0.pollsPerLogin.max) }),
            ("polls_per_login_mean", { number($0.pollsPerLogin.mean) }),
            ("slow_down_answers", { count($0.slowDownAnswers) }),
            ("early_polls", { count($0.earlyPolls) }),
            ("early_polls_after_slow_down", { count($0.earlyPollsAfterSlowDown) }),
            ("denied_codes", { count($0.deniedCodes) }),
        ]
    }

    /// Onboarding, then eight columns per stage, then the last failure.
    private static func requestColumns(stages: [RequestStage]) -> [RequestColumn] {
        var columns: [RequestColumn] = [
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
        for stage in stages {
            let prefix = stage.rawValue.replacingDashes()
            let figures: [(String, (StageFigures) -> Int)] = [
                ("requests", \.requests), (RequestOutcome.ok.rawValue, \.ok), ("429", \.throttled), ("5xx", \.serverErrors),
                ("transport_errors", \.transportErrors), ("client_errors", \.clientErrors), ("other", \.other),
                ("retried", \.retried),
            ]
            for (suffix, pick) in figures {
                columns.append(("\(prefix)_\(suffix)", { $0.requests.stage(stage).map { count(pick($0)) } ?? "0" }))
            }
        }
        columns += [
            ("last_failure_id", { $0.failedOnboarding?.lastFailure?.errorId ?? "" }),
            ("last_failure_message", { $0.failedOnboarding?.lastFailure?.message ?? "" }),
        ]
        return columns
    }

    /// Trouble columns, last so existing column positions stay. On the fleet and group rows `got_code`
    /// counts devices with a code; 429s and 5xx are over every stage, polls included.
    private static var troubleColumns: [TroubleColumn] {
        [
            ("fleet", { device, _ in device.fleet }),
            ("got_code", { device, group in group.map { String($0.devicesWithCode) } ?? (device.trouble.gotCode ? "1" : "0") }),
            ("never_got_code", { device, group in group.map { String($0.neverGotCode.count) } ?? (device.trouble.gotCode ? "0" : "1") }),
            ("stopped_at", { device, group in (group == nil ? device.trouble.stoppedAt : group?.stops.first?.stage)?.rawValue ?? "" }),
            ("stop_status", { device, group in (group == nil ? device.trouble.stopStatus : group?.stops.first?.status) ?? "" }),
            ("last_error", { device, group in group == nil ? device.trouble.lastError ?? "" : "" }),
            ("all_429", { device, group in String(group?.throttled ?? device.trouble.throttled) }),
            ("all_5xx", { device, group in String(group?.serverErrors ?? device.trouble.serverErrors) }),
            ("all_errors", { device, group in String(group?.failed ?? device.trouble.errors) }),
            // Request stages have their 429 and 5xx columns above, and `throttled_429` counts poll 429s.
            ("poll_5xx", { device, group in String(group.map { $0.stage(.poll)?.serverErrors ?? 0 } ?? pollServerErrors(device)) }),
            ("poll_errors", { device, group in String(group.map { $0.stage(.poll)?.failed ?? 0 } ?? pollErrors(device)) }),
        ]
    }

    private static func pollServerErrors(_ device: DeviceReport) -> Int {
        device.figures.httpStatuses.filter { (500...599).contains($0.key) }.values.reduce(0, +)
    }

    private static func pollErrors(_ device: DeviceReport) -> Int {
        errorPollOutcomes.reduce(0) { $0 + (device.figures.outcomes[$1] ?? 0) }
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

extension String {
    fileprivate func replacingDashes() -> String {
        String(map { $0 == "-" ? "_" : $0 })
    }
}
