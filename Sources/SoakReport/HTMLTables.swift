import RegcodeSupport

// The HTML page's tables: fleets, errors by stage, the sortable device table, requests by stage and
// failed onboardings.

extension SoakReport {
    func fleetTable() -> String {
        let headers = [
            "Fleet", "Devices", "Got a code", "Never got a code", "Mostly stopped at", "429s", "5xx", "Errors", "Polls",
            "Interval p50", "Lateness p99",
        ]
        var html =
            "<div class=\"table-wrap\"><table>\n<thead><tr>" + headers.map { "<th>\(HTML.escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        for group in fleets {
            let t = group.trouble
            let cells: [(String, Bool)] = [
                (group.fleet, false), (String(t.devices), false), (String(t.devicesWithCode), false),
                (String(t.neverGotCode.count), !t.neverGotCode.isEmpty), (t.stops.first?.phrase ?? "-", !t.stops.isEmpty),
                (String(t.throttled), t.throttled > 0), (String(t.serverErrors), t.serverErrors > 0), (String(t.failed), t.failed > 0),
                (String(group.figures.polls), false), (NumberText.duration(group.figures.achievedInterval.p50), false),
                (NumberText.duration(group.figures.lateness.p99), (group.figures.lateness.p99 ?? 0) > Self.latenessTargetMs),
            ]
            html += "<tr class=\"fleet\">" + cells.map { "<td\($0.1 ? " class=\"warn\"" : "")>\(HTML.escape($0.0))</td>" }.joined() + "</tr>\n"
        }
        return html + "</tbody>\n</table></div>\n"
    }

    /// Requests, errors, 429s and 5xx per stage, polls included; with named fleets, 429s and 5xx per fleet too.
    func troubleStageTable() -> String {
        let stages = trouble.figures.stages
        guard !stages.isEmpty else { return "<p class=\"note\">No requests or polls in this window.</p>\n" }
        let shownFleets = hasNamedFleets ? Array(fleets.prefix(Self.maxChartFleets)) : []
        var headers = ["Stage", "Requests", "Errors", "429s", "5xx"]
        for group in shownFleets { headers.append("\(group.fleet): 429s / 5xx") }
        var html =
            "<div class=\"table-wrap\"><table>\n<thead><tr>" + headers.map { "<th>\(HTML.escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        for stage in stages {
            var cells: [(String, Bool)] = [
                (stage.stage.rawValue, false), (String(stage.requests), false), (String(stage.failed), stage.failed > 0),
                (String(stage.throttled), stage.throttled > 0), (String(stage.serverErrors), stage.serverErrors > 0),
            ]
            for group in shownFleets {
                let theirs = group.trouble.stage(stage.stage)
                let throttled = theirs?.throttled ?? 0
                let serverErrors = theirs?.serverErrors ?? 0
                cells.append(("\(throttled) / \(serverErrors)", throttled + serverErrors > 0))
            }
            html +=
                "<tr class=\"trouble-stage\">" + cells.map { "<td\($0.1 ? " class=\"warn\"" : "")>\(HTML.escape($0.0))</td>" }.joined() + "</tr>\n"
        }
        return html + "</tbody>\n</table></div>\n"
    }

    /// The device table, trouble columns first; a click on a header sorts it.
    func deviceTable() -> String {
        guard !devices.isEmpty else { return "<p class=\"note\">No devices in this window.</p>\n" }
        var headers = [
            "Device", "Fleet", "Got a code", "Stopped at", "Last error", "429s", "5xx", "Errors", "Polls", "Codes", "Auth",
            "Expired", "Time to auth p50", "Interval p50", "Planned p50", "Lateness p50", "Lateness p99", "Lateness max",
            "Lateness min", "Polls/code max", "Backoffs", StatusEventRecord.expired, StatusEventRecord.failed,
        ]
        if requestsLoaded {
            headers += ["State", "Requests", "Request 429s", "Request 5xx", "Re-registrations", "New codes"]
        }
        var html = "<div class=\"table-wrap device-table\" id=\"devices\"><table class=\"sortable\">\n<thead><tr>"
        html += headers.map { "<th title=\"Sort by \(HTML.escape($0))\">\(HTML.escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        // Sort keys: numbers as themselves, missing values below every number.
        func count(_ value: Int, warn: Bool = false) -> (String, String?, Bool) { (String(value), String(value), warn) }
        func duration(_ value: Double?, warn: Bool = false) -> (String, String?, Bool) {
            (NumberText.duration(value), value.map { NumberText.fixed($0, maxDecimals: 3) } ?? "-1e15", warn)
        }
        for device in devices {
            let f = device.figures
            let t = device.trouble
            let stopped = t.gotCode ? "-" : [t.stoppedAt?.rawValue ?? "no request", t.stopStatus].compactMap { $0 }.joined(separator: " ")
            var cells: [(String, String?, Bool)] = [
                (device.device, nil, false),
                (device.fleet, nil, false),
                (t.gotCode ? "yes" : "no", t.gotCode ? "1" : "0", !t.gotCode),
                (stopped, nil, !t.gotCode),
                (t.lastErrorShort ?? "-", nil, false),
                count(t.throttled, warn: t.throttled > 0),
                count(t.serverErrors, warn: t.serverErrors > 0),
                count(t.errors),
                count(f.polls),
                count(f.codes),
                count(f.authenticatedCodes),
                count(f.expiredCodes, warn: f.expiredCodes > 0),
                duration(f.timeToAuthenticate.p50),
                duration(f.achievedInterval.p50),
                duration(f.plannedInterval.p50),
                duration(f.lateness.p50),
                duration(f.lateness.p99, warn: (f.lateness.p99 ?? 0) > Self.latenessTargetMs),
                duration(f.lateness.max),
                duration(f.lateness.min, warn: (f.lateness.min ?? 0) < 0),
                (
                    f.pollsPerCode.max.map { NumberText.fixed($0, maxDecimals: 0) } ?? "-",
                    f.pollsPerCode.max.map { NumberText.fixed($0, maxDecimals: 0) } ?? "-1", false
                ),
                count(f.backoffs),
                (f.expiryEvents.map(String.init) ?? "-", f.expiryEvents.map(String.init) ?? "-1", false),
                (f.failureEvents.map(String.init) ?? "-", f.failureEvents.map(String.init) ?? "-1", (f.failureEvents ?? 0) > 0),
            ]
            if requestsLoaded {
                let r = device.requests
                cells += [
                    (device.state ?? "-", nil, device.failedOnboarding != nil),
                    count(r.requests),
                    count(r.stages.reduce(0) { $0 + $1.throttled }),
                    count(r.stages.reduce(0) { $0 + $1.serverErrors }),
                    count(device.onboarding.reRegistrations),
                    (device.onboarding.newCodes.map(String.init) ?? "-", device.onboarding.newCodes.map(String.init) ?? "-1", false),
                ]
            }
            html +=
                "<tr>"
                + cells.map { text, key, warn in
                    let attributes = (key.map { " data-v=\"\(HTML.escape($0))\"" } ?? "") + (warn ? " class=\"warn\"" : "")
                    return "<td\(attributes)>\(HTML.escape(text))</td>"
                }.joined() + "</tr>\n"
        }
        return html + "</tbody>\n</table></div>\n<p class=\"note\">Click a column header to sort; click again to reverse.</p>\n"
    }

    // MARK: Requests by stage

    func stageTable() -> String {
        let used = requests.stages.filter { $0.requests > 0 }
        guard !used.isEmpty else { return "<p class=\"note\">No requests other than polls in this window.</p>\n" }
        let headers = [
            "Stage", "Requests", "OK", "429s", "5xx", "Transport errors", "Client errors", "Other", "Retried", "Latency p50", "Latency p99",
        ]
        var html =
            "<div class=\"table-wrap\"><table>\n<thead><tr>" + headers.map { "<th>\(HTML.escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        for stage in used {
            let cells: [(String, Bool)] = [
                (stage.stage.rawValue, false),
                (String(stage.requests), false),
                (String(stage.ok), false),
                (String(stage.throttled), stage.throttled > 0),
                (String(stage.serverErrors), stage.serverErrors > 0),
                (String(stage.transportErrors), stage.transportErrors > 0),
                (String(stage.clientErrors), stage.clientErrors > 0),
                (String(stage.other), false),
                (String(stage.retried), false),
                (NumberText.duration(stage.latency.p50), false),
                (NumberText.duration(stage.latency.p99), false),
            ]
            html += "<tr class=\"stage\">" + cells.map { "<td\($0.1 ? " class=\"warn\"" : "")>\(HTML.escape($0.0))</td>" }.joined() + "</tr>\n"
        }
        return html + "</tbody>\n</table></div>\n"
    }

    // MARK: Failed onboardings

    func failedOnboardingTable() -> String {
        guard !failedOnboardings.isEmpty else { return "<p class=\"note\">Every device got a code.</p>\n" }
        let headers = ["Device", "State", "Requests", "Last failed request", "Last failure", "Message"]
        var html =
            "<div class=\"table-wrap\"><table>\n<thead><tr>" + headers.map { "<th>\(HTML.escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        for failed in failedOnboardings {
            let cells = [
                failed.device, failed.state ?? "-", String(failed.requests), failed.lastFailedRequest.map(Self.describe) ?? "-",
                failed.lastFailure?.errorId ?? "-", failed.lastFailure?.message ?? "-",
            ]
            html += "<tr class=\"failed\">" + cells.map { "<td>\(HTML.escape($0))</td>" }.joined() + "</tr>\n"
        }
        return html + "</tbody>\n</table></div>\n"
    }
}
