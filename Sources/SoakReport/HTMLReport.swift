import RegcodeRecords
import RegcodeSupport

// The self-contained HTML page: inline CSS and SVG only, nothing fetched from anywhere.

extension SoakReport {
    /// Device rows the state timeline draws by default; further devices are counted, not drawn.
    package static let defaultTimelineRows = 200

    /// The product's lateness target (p99 under 50 ms), drawn as a reference line.
    static let latenessTargetMs = 50.0

    /// A self-contained HTML page: what went wrong in words, headline cards, errors and 429s over
    /// time with the trouble windows, the fleets, the OAuth device grant's figures per fleet (when the run has
    /// any), errors by stage, the sortable device table, the
    /// interval histogram and lateness over time (per fleet), the device-state timeline (at most
    /// `timelineRows` devices), and requests by stage and failed onboardings (when the request log
    /// was read).
    ///
    /// It loads nothing from anywhere (inline CSS, SVG and one small script that sorts the device
    /// table); it follows the viewer's light or dark scheme.
    package func html(timelineRows: Int = SoakReport.defaultTimelineRows) -> String {
        var page = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>regcoded soak report</title>
            <style>\(Self.css)\n\(Self.troubleCSS)</style>
            </head>
            <body>
            <main>

            """
        page += "<h1>regcoded soak report</h1>\n"
        var window = sinceMs.map { "since \(UTCText.readable($0))" } ?? "whole log"
        if let first = fleet.firstSentMs, let last = fleet.lastSentMs {
            window += " · polls sent \(UTCText.readable(first)) to \(UTCText.readable(last))"
        }
        page += "<p class=\"meta\">Generated \(HTML.escape(UTCText.readable(generatedAtMs))) · \(HTML.escape(window))</p>\n"
        page += summarySection()
        page += cards()
        page += "<h2>Errors and 429s over time</h2>\n" + errorCharts()
        if fleets.count > 1 || fleets.first?.fleet != noFleetName {
            page += "<h2>Fleets</h2>\n" + fleetTable()
        }
        page += deviceFlowTable()
        page += "<h2>Errors by stage</h2>\n" + troubleStageTable()
        page += "<h2>Devices</h2>\n" + deviceTable()
        page += "<h2>Interval between polls of a code</h2>\n"
        page += perFleet { series, figures, small in
            intervalHistogram(series: series, figures: figures, width: small ? 560 : 960, height: small ? 260 : 300)
        }
        page += "<h2>Lateness over time</h2>\n"
        page += perFleet { series, figures, small in
            latenessChart(series: series, figures: figures, width: small ? 560 : 960, height: small ? 260 : 300)
        }
        page += "<h2>Device states</h2>\n" + timeline(maxRows: max(timelineRows, 0))
        if requestsLoaded {
            page += "<h2>Requests by stage</h2>\n" + stageTable()
            page += "<h2>Failed onboardings</h2>\n" + failedOnboardingTable()
        }
        page += definitions()
        page += "</main>\n<script>\(Self.sortScript)</script>\n</body>\n</html>\n"
        return page
    }

    // MARK: Cards

    /// One headline figure: a label, the value, a line under it, and whether it warns.
    private typealias Card = (label: String, value: String, sub: String, warn: Bool)

    private func cards() -> String {
        let cards = pollCards() + (requestsLoaded ? requestCards() : [])
        var html = "<div class=\"cards\">\n"
        for card in cards {
            html +=
                "<div class=\"card\(card.warn ? " warn" : "")\"><div class=\"label\">\(HTML.escape(card.label))</div><div class=\"value\">\(HTML.escape(card.value))</div><div class=\"sub\">\(HTML.escape(card.sub))</div></div>\n"
        }
        return html + "</div>\n"
    }

    /// Devices, polls, logins, expiries, lateness, intervals, 429s, 5xx and latency.
    private func pollCards() -> [Card] {
        let f = fleet
        var cards: [Card] = []
        let t = trouble.figures
        cards.append(
            (
                "Devices", String(devices.count),
                "\(t.devicesWithCode) got a code · \(t.neverGotCode.count) never did · \(f.codes) code\(f.codes == 1 ? "" : "s") polled",
                !t.neverGotCode.isEmpty
            )
        )
        let perCode =
            f.pollsPerCode.mean.map {
                "\(NumberText.fixed($0, maxDecimals: 2)) per code, max \(NumberText.fixed(f.pollsPerCode.max ?? 0, maxDecimals: 0))"
            } ?? "no codes"
        cards.append(("Polls", String(f.polls), perCode, false))
        cards.append(
            (
                "Authenticated", String(f.authenticatedCodes),
                "time to authenticate p50 \(NumberText.duration(f.timeToAuthenticate.p50)), p95 \(NumberText.duration(f.timeToAuthenticate.p95))",
                false
            )
        )
        if let logins {
            let kinds = logins.byKind.map { "\($0.kind) \($0.count)" }.joined(separator: " · ")
            cards.append(("Logins", String(logins.total), kinds, false))
        }
        let expirySub =
            eventsLoaded
            ? "REG410 events \(f.expiryEvents ?? 0) · REG500 events \(f.failureEvents ?? 0)"
            : "from the poll log (events not read)"
        cards.append(("Expired / failed codes", String(f.expiredCodes), expirySub, false))
        let lateWarn = (f.lateness.p99 ?? 0) > Self.latenessTargetMs || (f.lateness.min ?? 0) < 0
        cards.append(
            (
                "Lateness p99", NumberText.duration(f.lateness.p99),
                "p50 \(NumberText.duration(f.lateness.p50)) · max \(NumberText.duration(f.lateness.max)) · min \(NumberText.duration(f.lateness.min))",
                lateWarn
            )
        )
        cards.append(
            (
                "Interval p50", NumberText.duration(f.achievedInterval.p50),
                "planned p50 \(NumberText.duration(f.plannedInterval.p50)) · achieved p99 \(NumberText.duration(f.achievedInterval.p99))", false
            )
        )
        let pollStage = t.stage(.poll)
        cards.append(
            (
                "429s", String(t.throttled),
                "polls \(pollStage?.throttled ?? 0) · other requests \(t.throttled - (pollStage?.throttled ?? 0)) · backoffs \(f.backoffs)",
                t.throttled > 0
            )
        )
        cards.append(
            (
                "5xx", String(t.serverErrors),
                "polls \(pollStage?.serverErrors ?? 0) · other requests \(t.serverErrors - (pollStage?.serverErrors ?? 0))", t.serverErrors > 0
            )
        )
        cards.append(
            (
                "Latency p99", NumberText.duration(f.latency.p99),
                "p50 \(NumberText.duration(f.latency.p50)) · max \(NumberText.duration(f.latency.max))", false
            )
        )
        return cards
    }

    /// Failed onboardings, re-registrations and the other requests (when the request log was read).
    private func requestCards() -> [Card] {
        let o = onboarding
        let throttled = requests.stages.reduce(0) { $0 + $1.throttled }
        let serverErrors = requests.stages.reduce(0) { $0 + $1.serverErrors }
        let transport = requests.stages.reduce(0) { $0 + $1.transportErrors }
        return [
            (
                "Failed onboardings", String(o.failedOnboardings), "\(o.devicesWithCode) of \(devices.count) devices got a code",
                o.failedOnboardings > 0
            ),
            (
                "Re-registrations", String(o.reRegistrations),
                "\(o.registrations) registrations ok · new codes \(o.newCodes.map(String.init) ?? "-")", false
            ),
            (
                "Other requests", String(requests.requests),
                "429s \(throttled) · 5xx \(serverErrors) · transport \(transport) · retried \(requests.retried)", false
            ),
        ]
    }

    private func definitions() -> String {
        let deviceFlowDefinitions =
            showsDeviceFlow
            ? """
            <li>Device flow (OAuth device grant): slow-down answers are polls answered slow_down (the next poll waits the longer interval; not an error, not a backoff). Early polls were sent before their planned time, the earliest the protocol allows; early after slow-down counts those of a code already answered slow_down. Denied codes ended access_denied; expired codes include those answered expired_token. Time to login is the time to authenticate; polls per login counts an authenticated code's polls up to its authenticated answer.</li>

            """ : ""
        let requestDefinitions =
            requestsLoaded
            ? """
            <li>Requests by stage: every backend request other than a poll, each retry counted; 429s are throttled answers, 5xx server errors, client errors 4xx answers other than 429 (including 401), other malformed, abandoned or interrupted (no answer: the daemon was killed with the request in flight); retried counts requests after which the same request was tried again.</li>
            <li>Failed onboardings: devices that never got a code (none polled, shown by a REGCODE status, answered by a session request or stored), with their latest failure status and latest request that did not succeed.</li>
            <li>Re-registrations: registration requests answered ok beyond each device's first. New codes: REGCODE status events beyond each device's first.</li>

            """ : ""
        return """
            <h2>How the figures are computed</h2>
            <ul class="note">
            <li>Achieved interval: sent time of a poll minus the sent time of the previous poll of the same code. Planned interval: the wait the engine chose after that previous poll, counted from its answer; so after a normal answer the achieved interval also holds that poll's latency and lateness.</li>
            <li>Lateness: sent time minus planned time of each poll. The planned time is the earliest the protocol allows, so a negative value is an early poll (only an OAuth device told to misbehave sends one); it is kept negative, never clamped.</li>
            <li>Backoffs: polls whose previous poll of the same code ended in server-error, transport-error, malformed, unauthorized or client-error and chose a next wait (a 401 answered by an immediate token refresh and retry is not a backoff).</li>
            <li>Time to authenticate: from the first poll of a code to the poll answered authenticated.</li>
            <li>Expired or failed: a REG410 event names the code, a poll of it was answered expired, or its last poll scheduled no further poll without authenticating or being denied (including code-invalid).</li>
            <li>Percentiles use the nearest-rank method: the value at rank ⌈p·n/100⌉ of the sorted values.</li>
            \(deviceFlowDefinitions)\(requestDefinitions)</ul>

            """
    }

    static let css = """
        :root{color-scheme:light dark;--bg:#ffffff;--fg:#1d2430;--muted:#5d6878;--grid:#e6e9ef;--card:#f5f7fa;--border:#d8dde6;\
        --accent:#2f6fdf;--planned:#d97706;--ok:#1f9d55;--bad:#d64545}
        @media (prefers-color-scheme:dark){:root{--bg:#14181f;--fg:#e6e9ef;--muted:#9aa4b5;--grid:#283039;--card:#1c222b;\
        --border:#303846;--accent:#6ea0ff;--planned:#ffa94d;--ok:#4cc38a;--bad:#ff6b6b}}
        body{margin:0;padding:24px;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
        main{max-width:1100px;margin:0 auto}
        h1{font-size:22px;margin:0 0 4px}
        h2{font-size:17px;margin:32px 0 8px}
        .meta,.note{color:var(--muted)}
        .note{font-size:13px}
        .cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:12px;margin-top:16px}
        .card{background:var(--card);border:1px solid var(--border);border-radius:10px;padding:12px 14px}
        .card .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
        .card .value{font-size:26px;font-weight:600;margin-top:2px;font-variant-numeric:tabular-nums}
        .card .sub{color:var(--muted);font-size:12px}
        .card.warn .value{color:var(--bad)}
        svg{width:100%;height:auto;display:block}
        svg text{fill:var(--fg);font-size:12px}
        svg .tick{fill:var(--muted);font-size:11px}
        svg .row-label{font-size:11px}
        svg .grid{stroke:var(--grid);stroke-width:1}
        svg .axis{stroke:var(--muted);stroke-width:1}
        svg .bar{fill:var(--accent);opacity:.85}
        svg .planned{fill:none;stroke:var(--planned);stroke-width:2}
        svg .marker{stroke:var(--planned);stroke-width:2;stroke-dasharray:6 4}
        svg .marker-label{fill:var(--planned)}
        svg .dots{fill:none;stroke:var(--accent);stroke-width:3;stroke-linecap:round;opacity:.6}
        svg .dots.clipped{stroke:var(--bad);opacity:1}
        svg .line-median{fill:none;stroke:var(--accent);stroke-width:1.5}
        svg .line-high{fill:none;stroke:var(--planned);stroke-width:1.2}
        svg .p99{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:6 4}
        svg .p99-label{fill:var(--bad)}
        svg .target{stroke:var(--muted);stroke-width:1;stroke-dasharray:2 4}
        svg .seg-polling{fill:var(--accent)}
        svg .seg-authenticated{fill:var(--ok)}
        svg .seg-expired{fill:var(--bad)}
        svg .seg-denied{fill:var(--planned)}
        .legend{display:flex;gap:16px;flex-wrap:wrap;color:var(--muted);font-size:12px;margin:4px 0}
        .swatch{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-2px;margin-right:4px}
        .table-wrap{overflow:auto;max-height:75vh;border:1px solid var(--border);border-radius:8px}
        table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums;font-size:13px}
        th,td{padding:4px 8px;border-bottom:1px solid var(--border);text-align:right;white-space:nowrap}
        th:first-child,td:first-child{text-align:left}
        th{position:sticky;top:0;background:var(--card)}
        td.warn{color:var(--bad);font-weight:600}
        """
}
