import RegcodeSupport

// The self-contained HTML page: inline CSS and SVG only, nothing fetched from anywhere.

extension SoakReport {
    /// Device rows the state timeline draws by default; further devices are counted, not drawn.
    public static let defaultTimelineRows = 200

    /// The product's lateness target (p99 under 50 ms), drawn as a reference line.
    static let latenessTargetMs = 50.0

    /// A self-contained HTML page: what went wrong in words, headline cards, errors and 429s over
    /// time with the trouble windows, the fleets, errors by stage, the sortable device table, the
    /// interval histogram and lateness over time (per fleet), the device-state timeline (at most
    /// `timelineRows` devices), and requests by stage and failed onboardings (when the request log
    /// was read).
    ///
    /// It loads nothing from anywhere (inline CSS, SVG and one small script that sorts the device
    /// table); it follows the viewer's light or dark scheme.
    public func html(timelineRows: Int = SoakReport.defaultTimelineRows) -> String {
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

    private func cards() -> String {
        let f = fleet
        var cards: [(label: String, value: String, sub: String, warn: Bool)] = []
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
        let pollStage = t.stage("poll")
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
        if requestsLoaded {
            let o = onboarding
            cards.append(
                (
                    "Failed onboardings", String(o.failedOnboardings), "\(o.devicesWithCode) of \(devices.count) devices got a code",
                    o.failedOnboardings > 0
                )
            )
            cards.append(
                (
                    "Re-registrations", String(o.reRegistrations),
                    "\(o.registrations) registrations ok · new codes \(o.newCodes.map(String.init) ?? "-")", false
                )
            )
            let throttled = requests.stages.reduce(0) { $0 + $1.throttled }
            let serverErrors = requests.stages.reduce(0) { $0 + $1.serverErrors }
            let transport = requests.stages.reduce(0) { $0 + $1.transportErrors }
            cards.append(
                (
                    "Other requests", String(requests.requests),
                    "429s \(throttled) · 5xx \(serverErrors) · transport \(transport) · retried \(requests.retried)", false
                )
            )
        }
        var html = "<div class=\"cards\">\n"
        for card in cards {
            html +=
                "<div class=\"card\(card.warn ? " warn" : "")\"><div class=\"label\">\(HTML.escape(card.label))</div><div class=\"value\">\(HTML.escape(card.value))</div><div class=\"sub\">\(HTML.escape(card.sub))</div></div>\n"
        }
        return html + "</div>\n"
    }

    // MARK: Interval histogram

    func intervalHistogram(series: ReportSeries, figures: PollFigures, width: Double = 960, height: Double = 300) -> String {
        let achieved = series.achievedIntervals
        let planned = series.plannedIntervals
        guard let achievedMin = achieved.first else {
            return "<p class=\"note\">No code was polled twice in this window, so there are no intervals.</p>\n"
        }
        let low = min(achievedMin, planned.first ?? achievedMin)
        // The top 1 % is folded into a count rather than stretching the axis for a few stragglers.
        var high = max(NearestRank.percentile(99, ofSorted: achieved) ?? achievedMin, NearestRank.percentile(99, ofSorted: planned) ?? low)
        if high <= low { high = low + 1 }
        let binWidth = max(Ticks.nice(low: 0, high: high - low, target: 40).step.rounded(.up), 1)
        let start = (low / binWidth).rounded(.down) * binWidth
        let binCount = Int(((high - start) / binWidth).rounded(.down)) + 1
        func histogram(_ values: [Double]) -> (bins: [Int], above: Int) {
            var bins = [Int](repeating: 0, count: binCount)
            var above = 0
            for value in values {
                let index = Int(((value - start) / binWidth).rounded(.down))
                if index >= binCount { above += 1 } else { bins[max(index, 0)] += 1 }
            }
            return (bins, above)
        }
        let achievedBins = histogram(achieved)
        let plannedBins = histogram(planned)
        let end = start + Double(binCount) * binWidth
        let peak = Double(max(achievedBins.bins.max() ?? 0, plannedBins.bins.max() ?? 0, 1))
        let yTicks = Ticks.nice(low: 0, high: peak, target: 5)
        let yStep = max(yTicks.step.rounded(.up), 1)
        let yTop = (peak / yStep).rounded(.up) * yStep
        var frame = PlotFrame(xRange: start...end, yRange: 0...yTop)
        frame.width = width
        frame.height = height

        let inSeconds = end - start >= 2000 || start >= 2000
        let xTicks = Ticks.nice(low: start, high: end, target: 8).values.map { value in
            (value, inSeconds ? NumberText.fixed(value / 1000, maxDecimals: 3) : NumberText.fixed(value, maxDecimals: 0))
        }
        let yLabels = stride(from: 0.0, through: yTop, by: yStep).map { ($0, NumberText.fixed($0, maxDecimals: 0)) }
        var svg = frame.open(label: "Histogram of achieved intervals between polls of one code, with the planned intervals")
        svg += frame.axes(
            xTicks: xTicks,
            yTicks: yLabels,
            xTitle: "interval between consecutive polls of one code (\(inSeconds ? "s" : "ms"))",
            yTitle: "polls"
        )
        for (index, count) in achievedBins.bins.enumerated() where count > 0 {
            let x0 = frame.x(start + Double(index) * binWidth)
            let x1 = frame.x(start + Double(index + 1) * binWidth)
            let y = frame.y(Double(count))
            let from = NumberText.duration(start + Double(index) * binWidth)
            let to = NumberText.duration(start + Double(index + 1) * binWidth)
            svg +=
                "<rect class=\"bar\" x=\"\(Markup.coordinate(x0 + 0.5))\" y=\"\(Markup.coordinate(y))\" width=\"\(Markup.coordinate(max(x1 - x0 - 1, 0.5)))\" height=\"\(Markup.coordinate(frame.y(0) - y))\"><title>\(HTML.escape("\(from) to \(to): \(count) achieved, \(plannedBins.bins[index]) planned"))</title></rect>"
        }
        if !planned.isEmpty {
            // The planned distribution as a step outline over the bars.
            var path = "M\(Markup.coordinate(frame.x(start))) \(Markup.coordinate(frame.y(0)))"
            for (index, count) in plannedBins.bins.enumerated() {
                let y = Markup.coordinate(frame.y(Double(count)))
                path += " V\(y) H\(Markup.coordinate(frame.x(start + Double(index + 1) * binWidth)))"
            }
            path += " V\(Markup.coordinate(frame.y(0)))"
            svg += "<path class=\"planned\" d=\"\(path)\"/>"
            if let p50 = figures.plannedInterval.p50 {
                let x = Markup.coordinate(frame.x(p50))
                svg +=
                    "<line class=\"marker\" x1=\"\(x)\" x2=\"\(x)\" y1=\"\(Markup.coordinate(frame.top))\" y2=\"\(Markup.coordinate(frame.y(0)))\"/>"
                let anchor = frame.x(p50) > frame.left + frame.plotWidth * 0.75 ? "end" : "start"
                let dx = anchor == "end" ? -4.0 : 4.0
                svg +=
                    "<text class=\"marker-label\" x=\"\(Markup.coordinate(frame.x(p50) + dx))\" y=\"\(Markup.coordinate(frame.top + 10))\" text-anchor=\"\(anchor)\">planned p50 \(HTML.escape(NumberText.duration(p50)))</text>"
            }
        }
        svg += "</svg>\n"
        var html =
            "<div class=\"legend\"><span><span class=\"swatch\" style=\"background:var(--accent)\"></span>achieved (sent − previous sent)</span><span><span class=\"swatch\" style=\"background:var(--planned)\"></span>planned (the wait chosen after the previous poll), outline and p50</span></div>\n"
        html += svg
        var notes = ["\(achieved.count) intervals, bins of \(NumberText.duration(binWidth))."]
        if achievedBins.above + plannedBins.above > 0 {
            notes.append(
                "Above \(NumberText.duration(end)) and not drawn: \(achievedBins.above) achieved, \(plannedBins.above) planned (longest achieved \(NumberText.duration(achieved.last)), e.g. backoffs and 429 waits)."
            )
        }
        return html + "<p class=\"note\">\(HTML.escape(notes.joined(separator: " ")))</p>\n"
    }

    // MARK: Lateness over time

    /// Above this many polls the chart draws per-column median and maximum instead of every poll.
    static let scatterLimit = 4000

    func latenessChart(series: ReportSeries, figures: PollFigures, width: Double = 960, height: Double = 300) -> String {
        let points = series.lateness
        guard let first = points.first, let last = points.last,
            let p99 = figures.lateness.p99, let latest = figures.lateness.max, let earliest = figures.lateness.min
        else {
            return "<p class=\"note\">No polls in this window.</p>\n"
        }
        var xLow = Double(first.sentMs)
        var xHigh = Double(last.sentMs)
        if xHigh - xLow < 1000 {
            xLow -= 500
            xHigh += 500
        }
        // A few very late polls would flatten everything else; they are pinned to the top edge.
        var yHigh = min(latest, max(p99 * 3, p99 + 20))
        let yLow = min(0, earliest)
        if yHigh <= yLow { yHigh = yLow + 1 }
        let yTicks = Ticks.nice(low: yLow, high: yHigh, target: 5)
        yHigh = (yHigh / yTicks.step).rounded(.up) * yTicks.step
        var frame = PlotFrame(xRange: xLow...xHigh, yRange: yLow...yHigh)
        frame.width = width
        frame.height = height
        let xTicks = Ticks.time(fromMs: Int64(xLow.rounded(.up)), toMs: Int64(xHigh), target: 7).map { (Double($0.ms), $0.label) }
        let yLabels = Ticks.nice(low: yLow, high: yHigh, target: 5).values.map { ($0, NumberText.fixed($0, maxDecimals: 1)) }

        var svg = frame.open(label: "Poll lateness over time with the p99 line")
        svg += frame.axes(xTicks: xTicks, yTicks: yLabels, xTitle: "time sent (UTC)", yTitle: "lateness, sent − planned (ms)")
        var clipped = 0
        func clampedY(_ lateness: Double) -> Double {
            if lateness > yHigh {
                clipped += 1
                return frame.y(yHigh)
            }
            return frame.y(lateness)
        }
        let legend: String
        if points.count <= Self.scatterLimit {
            var dots = ""
            var over = ""
            for point in points {
                let lateness = Double(point.latenessMs)
                let segment = "M\(Markup.coordinate(frame.x(Double(point.sentMs)))) \(Markup.coordinate(clampedY(lateness)))h0"
                if lateness > yHigh { over += segment } else { dots += segment }
            }
            svg += "<path class=\"dots\" d=\"\(dots)\"/>"
            if !over.isEmpty { svg += "<path class=\"dots clipped\" d=\"\(over)\"/>" }
            legend = "<span><span class=\"swatch\" style=\"background:var(--accent)\"></span>one dot per poll</span>"
        } else {
            // Per column of a few pixels: median and p99, so a dense log stays a readable picture
            // (a per-column maximum would be mostly noise from the slowest 1 %).
            let columns = Int(frame.plotWidth / 4)
            var buckets = [[Double]](repeating: [], count: columns)
            for point in points {
                let position = (Double(point.sentMs) - xLow) / (xHigh - xLow)
                let index = min(max(Int(position * Double(columns)), 0), columns - 1)
                buckets[index].append(Double(point.latenessMs))
            }
            var median = ""
            var high = ""
            var previousFilled = false
            for (index, bucket) in buckets.enumerated() {
                guard !bucket.isEmpty else {
                    previousFilled = false
                    continue
                }
                let sorted = bucket.sorted()
                let x = Markup.coordinate(frame.left + (Double(index) + 0.5) * frame.plotWidth / Double(columns))
                let command = previousFilled ? "L" : "M"
                median += "\(command)\(x) \(Markup.coordinate(clampedY(NearestRank.percentile(50, ofSorted: sorted) ?? 0)))"
                high += "\(command)\(x) \(Markup.coordinate(clampedY(NearestRank.percentile(99, ofSorted: sorted) ?? 0)))"
                previousFilled = true
            }
            clipped = points.filter { Double($0.latenessMs) > yHigh }.count
            svg += "<path class=\"line-high\" d=\"\(high)\"/><path class=\"line-median\" d=\"\(median)\"/>"
            let width = HTML.escape(NumberText.duration((xHigh - xLow) / Double(columns)))
            legend =
                "<span><span class=\"swatch\" style=\"background:var(--accent)\"></span>median per \(width) column</span><span><span class=\"swatch\" style=\"background:var(--planned)\"></span>p99 per column</span>"
        }
        if Self.latenessTargetMs <= yHigh {
            let y = Markup.coordinate(frame.y(Self.latenessTargetMs))
            svg +=
                "<line class=\"target\" x1=\"\(Markup.coordinate(frame.left))\" x2=\"\(Markup.coordinate(frame.left + frame.plotWidth))\" y1=\"\(y)\" y2=\"\(y)\"/>"
            svg +=
                "<text class=\"tick\" x=\"\(Markup.coordinate(frame.left + 4))\" y=\"\(Markup.coordinate(frame.y(Self.latenessTargetMs) - 4))\">target p99 50 ms</text>"
        }
        let p99Y = frame.y(min(p99, yHigh))
        svg +=
            "<line class=\"p99\" x1=\"\(Markup.coordinate(frame.left))\" x2=\"\(Markup.coordinate(frame.left + frame.plotWidth))\" y1=\"\(Markup.coordinate(p99Y))\" y2=\"\(Markup.coordinate(p99Y))\"/>"
        svg +=
            "<text class=\"p99-label\" x=\"\(Markup.coordinate(frame.left + frame.plotWidth - 4))\" y=\"\(Markup.coordinate(p99Y - 4))\" text-anchor=\"end\">p99 \(HTML.escape(NumberText.duration(p99)))</text>"
        svg += "</svg>\n"
        var html =
            "<div class=\"legend\">\(legend)<span><span class=\"swatch\" style=\"background:var(--bad)\"></span>p99 of the polls drawn (dashed)</span></div>\n"
            + svg
        var note = "\(points.count) polls; lateness min \(NumberText.duration(earliest)), max \(NumberText.duration(latest))."
        if clipped > 0 { note += " \(clipped) poll\(clipped == 1 ? "" : "s") later than \(NumberText.duration(yHigh)) drawn at the top edge." }
        html += "<p class=\"note\">\(HTML.escape(note))</p>\n"
        return html
    }

    // MARK: Timeline

    private struct Segment {
        var x0: Double
        var x1: Double
        var kind: String
        var codes: [String]
        var polls: Int
        var fromMs: Int64
        var toMs: Int64
    }

    private func timeline(maxRows: Int) -> String {
        guard let firstCode = codes.first else {
            return "<p class=\"note\">No codes were polled in this window.</p>\n"
        }
        let startMs = codes.map(\.firstSentMs).min() ?? firstCode.firstSentMs
        var endMs = codes.map(\.lastSentMs).max() ?? firstCode.lastSentMs
        if endMs - startMs < 1000 { endMs = startMs + 1000 }
        var codesByDevice: [String: [CodeSummary]] = [:]
        for code in codes { codesByDevice[code.device, default: []].append(code) }
        // With named fleets, a fleet's devices are drawn together (fleets in table order).
        let fleetRank = Dictionary(fleets.enumerated().map { ($0.element.fleet, $0.offset) }, uniquingKeysWith: { first, _ in first })
        let rowsDevices = devices.enumerated()
            .sorted { (fleetRank[$0.element.fleet] ?? 0, $0.offset) < (fleetRank[$1.element.fleet] ?? 0, $1.offset) }
            .map(\.element.device).filter { codesByDevice[$0] != nil }
        let shown = Array(rowsDevices.prefix(maxRows))
        let omitted = rowsDevices.count - shown.count

        let rowHeight = 16.0
        var frame = PlotFrame(xRange: Double(startMs)...Double(endMs), yRange: 0...1)
        frame.left = 170
        frame.height = frame.top + rowHeight * Double(max(shown.count, 1)) + frame.bottom
        let xTicks = Ticks.time(fromMs: startMs, toMs: endMs, target: 7).map { (Double($0.ms), $0.label) }
        var svg = frame.open(label: "Timeline of device states: polling, authenticated, expired or failed")
        svg += frame.axes(xTicks: xTicks, yTicks: [], xTitle: "time (UTC)", yTitle: "")
        for (row, device) in shown.enumerated() {
            let top = frame.top + Double(row) * rowHeight
            let name = device.count > 24 ? String(device.prefix(23)) + "…" : device
            svg +=
                "<text class=\"row-label\" x=\"\(Markup.coordinate(frame.left - 6))\" y=\"\(Markup.coordinate(top + rowHeight / 2))\" text-anchor=\"end\" dominant-baseline=\"middle\">\(HTML.escape(name))<title>\(HTML.escape(device))</title></text>"
            for segment in segments(for: codesByDevice[device] ?? [], frame: frame, endMs: endMs) {
                svg +=
                    "<rect class=\"seg-\(segment.kind)\" x=\"\(Markup.coordinate(segment.x0))\" y=\"\(Markup.coordinate(top + 2))\" width=\"\(Markup.coordinate(max(segment.x1 - segment.x0, 1.5)))\" height=\"\(Markup.coordinate(rowHeight - 4))\"><title>\(HTML.escape(title(device: device, segment: segment)))</title></rect>"
            }
        }
        svg += "</svg>\n"
        var html = """
            <div class="legend"><span><span class="swatch" style="background:var(--accent)"></span>polling a code (first to last poll)</span>\
            <span><span class="swatch" style="background:var(--ok)"></span>authenticated</span>\
            <span><span class="swatch" style="background:var(--bad)"></span>expired or failed</span></div>

            """
        html += svg
        if !trouble.figures.neverGotCode.isEmpty {
            let count = trouble.figures.neverGotCode.count
            html +=
                "<p class=\"note\">Not drawn: \(count) device\(count == 1 ? "" : "s") that never got a code (see <a href=\"#devices\">the device table</a>).</p>\n"
        }
        if omitted > 0 {
            html +=
                "<p class=\"note\">\(omitted) more device\(omitted == 1 ? "" : "s") not drawn (the timeline shows the first \(shown.count) in name order).</p>\n"
        } else {
            html += "<p class=\"note\">Hover a segment for its code.</p>\n"
        }
        return html
    }

    /// The state segments of one device, merged where they would touch at this scale so that a
    /// long soak with thousands of codes per device stays a few hundred shapes per row.
    private func segments(for deviceCodes: [CodeSummary], frame: PlotFrame, endMs: Int64) -> [Segment] {
        var raw: [Segment] = []
        for (index, code) in deviceCodes.enumerated() {
            raw.append(
                Segment(
                    x0: frame.x(Double(code.firstSentMs)),
                    x1: frame.x(Double(code.lastSentMs)),
                    kind: "polling",
                    codes: [code.code],
                    polls: code.polls,
                    fromMs: code.firstSentMs,
                    toMs: code.lastSentMs
                )
            )
            let after: String
            switch code.fate {
            case .authenticated: after = "authenticated"
            case .expired: after = "expired"
            case .ended, .open: continue
            }
            let untilMs = index + 1 < deviceCodes.count ? deviceCodes[index + 1].firstSentMs : endMs
            raw.append(
                Segment(
                    x0: frame.x(Double(code.lastSentMs)),
                    x1: frame.x(Double(max(untilMs, code.lastSentMs))),
                    kind: after,
                    codes: [code.code],
                    polls: 0,
                    fromMs: code.lastSentMs,
                    toMs: max(untilMs, code.lastSentMs)
                )
            )
        }
        var merged: [Segment] = []
        for segment in raw {
            if var last = merged.last, last.kind == segment.kind, segment.x0 - last.x1 < 1 {
                last.x1 = max(last.x1, segment.x1)
                last.codes += segment.codes
                last.polls += segment.polls
                last.toMs = max(last.toMs, segment.toMs)
                merged[merged.count - 1] = last
            } else {
                merged.append(segment)
            }
        }
        return merged
    }

    private func title(device: String, segment: Segment) -> String {
        let span = "\(UTCText.readable(segment.fromMs)) to \(UTCText.readable(segment.toMs))"
        let codesText =
            segment.codes.count == 1
            ? "code \(segment.codes[0])"
            : "\(segment.codes.count) codes (\(segment.codes.prefix(5).joined(separator: ", "))\(segment.codes.count > 5 ? ", …" : ""))"
        switch segment.kind {
        case "polling": return "\(device): polling \(codesText), \(segment.polls) poll\(segment.polls == 1 ? "" : "s"), \(span)"
        case "authenticated": return "\(device): authenticated with \(codesText), \(span)"
        default: return "\(device): \(codesText) expired or failed, \(span)"
        }
    }

    // MARK: Requests by stage

    private func stageTable() -> String {
        let used = requests.stages.filter { $0.requests > 0 }
        guard !used.isEmpty else { return "<p class=\"note\">No requests other than polls in this window.</p>\n" }
        let headers = [
            "Stage", "Requests", "OK", "429s", "5xx", "Transport errors", "Client errors", "Other", "Retried", "Latency p50", "Latency p99",
        ]
        var html =
            "<div class=\"table-wrap\"><table>\n<thead><tr>" + headers.map { "<th>\(HTML.escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        for stage in used {
            let cells: [(String, Bool)] = [
                (stage.stage, false),
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

    private func failedOnboardingTable() -> String {
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

    private func definitions() -> String {
        let requestDefinitions =
            requestsLoaded
            ? """
            <li>Requests by stage: every backend request other than a poll, each retry counted; 429s are throttled answers, 5xx server errors, client errors 4xx answers other than 429 (including 401), other malformed or abandoned answers; retried counts requests after which the same request was tried again.</li>
            <li>Failed onboardings: devices that never got a code (none polled, shown by a REGCODE status, answered by a session request or stored), with their latest failure status and latest request that did not succeed.</li>
            <li>Re-registrations: registration requests answered ok beyond each device's first. New codes: REGCODE status events beyond each device's first.</li>

            """ : ""
        return """
            <h2>How the figures are computed</h2>
            <ul class="note">
            <li>Achieved interval: sent time of a poll minus the sent time of the previous poll of the same code. Planned interval: the wait the engine chose after that previous poll, counted from its answer; so after a normal answer the achieved interval also holds that poll's latency and lateness.</li>
            <li>Lateness: sent time minus planned time of each poll; it should never be negative.</li>
            <li>Backoffs: polls whose previous poll of the same code ended in server-error, transport-error, malformed, unauthorized or client-error and chose a next wait (a 401 answered by an immediate token refresh and retry is not a backoff).</li>
            <li>Time to authenticate: from the first poll of a code to the poll answered authenticated.</li>
            <li>Expired or failed: a REG410 event names the code, or its last poll scheduled no further poll without authenticating (including code-invalid).</li>
            <li>Percentiles use the nearest-rank method: the value at rank ⌈p·n/100⌉ of the sorted values.</li>
            \(requestDefinitions)</ul>

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
