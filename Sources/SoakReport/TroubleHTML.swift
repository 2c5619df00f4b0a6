import RegcodeSupport

// The HTML page's trouble parts: the summary in words, errors over time with the trouble windows,
// the fleet and stage tables, the sortable device table and the per-fleet small multiples.

extension SoakReport {
    /// Fleets drawn as small multiples; more are listed in the fleet table only.
    static let maxChartFleets = 12

    /// Whether the devices belong to named fleets (then charts and tables are split per fleet).
    var hasNamedFleets: Bool {
        fleets.count > 1 || (fleets.first.map { $0.fleet != noFleetName } ?? false)
    }

    // MARK: Summary

    /// The first screen: what went wrong, in words.
    func summarySection() -> String {
        let sentences = headline
        let t = trouble.figures
        let bad = !t.neverGotCode.isEmpty || t.failed > 0 || !generatorWindows.isEmpty
        var html = "<section class=\"summary\(bad ? " bad" : " good")\" id=\"summary\">\n<h2>\(bad ? "What went wrong" : "No trouble")</h2>\n"
        html += "<p class=\"lead\">\(HTML.escape(sentences[0]))</p>\n"
        if sentences.count > 1 {
            html += "<ul>\n" + sentences.dropFirst().map { "<li>\(HTML.escape($0))</li>\n" }.joined() + "</ul>\n"
        }
        if !t.neverGotCode.isEmpty {
            let shown = t.neverGotCode.prefix(40)
            let more = t.neverGotCode.count > shown.count ? " … and \(t.neverGotCode.count - shown.count) more" : ""
            // Names do not break at their hyphens.
            let names = shown.map { "<span class=\"nw\">\(HTML.escape($0))</span>" }.joined(separator: ", ")
            html += "<p class=\"names\">Never got a code: \(names)\(HTML.escape(more)) (<a href=\"#devices\">device table</a>)</p>\n"
        }
        return html + "</section>\n"
    }

    // MARK: Errors over time

    /// One chart of the whole run, then (with named fleets) one per fleet on its own scale, with
    /// the trouble windows shaded and labelled in each.
    func errorCharts() -> String {
        let t = trouble.figures
        guard !t.timeline.isEmpty else { return "<p class=\"note\">No requests or polls in this window.</p>\n" }
        var html =
            "<div class=\"legend\"><span><span class=\"swatch\" style=\"background:var(--planned)\"></span>429</span><span><span class=\"swatch\" style=\"background:var(--bad)\"></span>5xx</span><span><span class=\"swatch\" style=\"background:var(--muted)\"></span>other errors (transport, malformed, 4xx)</span><span><span class=\"swatch window-swatch\"></span>trouble window (\(Self.troubleMinimumErrors)+ errors and ≥ \(Int(Self.troubleShare * 100)) % of a bucket's requests)</span></div>\n"
        html += errorChart(title: hasNamedFleets ? "All fleets" : nil, figures: t)
        if hasNamedFleets {
            for group in fleets.prefix(Self.maxChartFleets) {
                html += errorChart(title: "Fleet \(group.fleet)", figures: group.trouble)
            }
        }
        var note =
            "Times in UTC; buckets of \(NumberText.duration(Double(trouble.bucketMs))), polls and other requests together; each chart has its own scale."
        if trouble.windows.isEmpty {
            note += " No trouble window."
        } else {
            note += " " + trouble.windows.map { Self.describe($0, withDate: windowsSpanDays) }.joined(separator: ". ") + "."
        }
        if hasNamedFleets && fleets.count > Self.maxChartFleets {
            note += " \(fleets.count - Self.maxChartFleets) more fleets are in the fleet table only."
        }
        return html + "<p class=\"note\">\(HTML.escape(note))</p>\n"
    }

    private func errorChart(title: String?, figures: TroubleFigures) -> String {
        let buckets = figures.timeline
        guard let first = buckets.first, let last = buckets.last else { return "" }
        let bucketMs = trouble.bucketMs
        let xLow = Double(first.startMs)
        let xHigh = Double(last.startMs + bucketMs)
        let peak = Double(max(buckets.map(\.errors).max() ?? 0, 1))
        let yTicks = Ticks.nice(low: 0, high: peak, target: 3)
        let yStep = max(yTicks.step.rounded(.up), 1)
        let yTop = (peak / yStep).rounded(.up) * yStep
        var frame = PlotFrame(xRange: xLow...xHigh, yRange: 0...yTop)
        frame.height = 170
        frame.top = 22
        frame.bottom = 28
        let xTicks = Ticks.time(fromMs: first.startMs, toMs: last.startMs + bucketMs, target: 7).map { (Double($0.ms), $0.label) }
        let yLabels = stride(from: 0.0, through: yTop, by: yStep).map { ($0, NumberText.fixed($0, maxDecimals: 0)) }
        var svg = frame.open(label: "Errors and 429s per \(NumberText.duration(Double(bucketMs))) over time\(title.map { ", \($0)" } ?? "")")
        for window in trouble.windows {
            let x0 = frame.x(Double(window.startMs))
            let x1 = frame.x(Double(window.endMs))
            svg +=
                "<rect class=\"window\" x=\"\(Markup.coordinate(x0))\" y=\"\(Markup.coordinate(frame.top))\" width=\"\(Markup.coordinate(max(x1 - x0, 2)))\" height=\"\(Markup.coordinate(frame.plotHeight))\"><title>\(HTML.escape(Self.describe(window, withDate: windowsSpanDays)))</title></rect>"
            svg +=
                "<text class=\"window-label\" x=\"\(Markup.coordinate(x0 + 2))\" y=\"\(Markup.coordinate(frame.top - 5))\">\(HTML.escape(window.label))</text>"
        }
        svg += frame.axes(xTicks: xTicks, yTicks: yLabels, xTitle: "", yTitle: "errors")
        let width = frame.plotWidth / Double(buckets.count)
        for bucket in buckets where bucket.errors > 0 {
            let x = frame.x(Double(bucket.startMs)) + (width > 3 ? 0.5 : 0)
            let w = Markup.coordinate(max(width - (width > 3 ? 1 : 0), 0.8))
            var base = 0.0
            for (count, kind) in [(bucket.throttled, "e429"), (bucket.serverErrors, "e5xx"), (bucket.otherErrors, "eother")] where count > 0 {
                let y0 = frame.y(base)
                let y1 = frame.y(base + Double(count))
                svg +=
                    "<rect class=\"\(kind)\" x=\"\(Markup.coordinate(x))\" y=\"\(Markup.coordinate(y1))\" width=\"\(w)\" height=\"\(Markup.coordinate(y0 - y1))\"/>"
                base += Double(count)
            }
            let tip =
                "\(Self.clock(bucket.startMs)): \(bucket.throttled) 429s, \(bucket.serverErrors) 5xx, \(bucket.otherErrors) other errors of \(bucket.requests) requests"
            let top = frame.y(base)
            svg +=
                "<rect class=\"hit\" x=\"\(Markup.coordinate(x))\" y=\"\(Markup.coordinate(top))\" width=\"\(w)\" height=\"\(Markup.coordinate(frame.y(0) - top))\"><title>\(HTML.escape(tip))</title></rect>"
        }
        svg += "</svg>\n"
        var html = ""
        if let title {
            let summary =
                "\(figures.throttled) 429s, \(figures.serverErrors) 5xx; \(figures.devicesWithCode) of \(figures.devices) devices got a code"
            html += "<h3>\(HTML.escape(title)) <span class=\"h3-note\">\(HTML.escape(summary))</span></h3>\n"
        }
        return html + svg
    }

    // MARK: Small multiples

    /// One chart for the whole run, or (with named fleets) one per fleet on its own scale, so a
    /// misbehaving fleet does not flatten a well-behaved one.
    func perFleet(_ chart: (ReportSeries, PollFigures, Bool) -> String) -> String {
        guard hasNamedFleets else { return chart(series, fleet, false) }
        var html = "<div class=\"multiples\">\n"
        let shown = fleets.prefix(Self.maxChartFleets)
        for group in shown where group.figures.polls > 0 {
            html += "<div class=\"multiple\"><h3>Fleet \(HTML.escape(group.fleet))</h3>\n" + chart(group.series, group.figures, true) + "</div>\n"
        }
        html += "</div>\n"
        let silent = shown.filter { $0.figures.polls == 0 }.map(\.fleet)
        if !silent.isEmpty {
            html += "<p class=\"note\">No polls in fleet\(silent.count == 1 ? "" : "s") \(HTML.escape(silent.joined(separator: ", "))).</p>\n"
        }
        return html
    }

    /// Sorts `table.sortable` by the clicked header: numbers by `data-v`, text in natural order.
    static let sortScript = """
        document.querySelectorAll('table.sortable').forEach(function(table){\
        var heads=table.tHead.rows[0].cells;\
        Array.prototype.forEach.call(heads,function(th,column){\
        th.tabIndex=0;\
        var sort=function(){\
        var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);\
        var ascending=th.getAttribute('aria-sort')!=='ascending';\
        Array.prototype.forEach.call(heads,function(h){h.removeAttribute('aria-sort');});\
        th.setAttribute('aria-sort',ascending?'ascending':'descending');\
        var key=function(row){var cell=row.cells[column],v=cell.getAttribute('data-v');return v===null?cell.textContent:parseFloat(v);};\
        rows.sort(function(a,b){var x=key(a),y=key(b);\
        var d=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y),undefined,{numeric:true});\
        return ascending?d:-d;});\
        rows.forEach(function(row){body.appendChild(row);});};\
        th.addEventListener('click',sort);\
        th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();sort();}});\
        });});
        """

    static let troubleCSS = """
        .summary{border:1px solid var(--border);border-left:6px solid var(--ok);border-radius:10px;padding:10px 16px;margin-top:12px;background:var(--card)}
        .summary.bad{border-left-color:var(--bad)}
        .summary h2{margin:0 0 4px;font-size:17px}
        .summary .lead{font-size:18px;font-weight:600;margin:4px 0}
        .summary.bad .lead{color:var(--bad)}
        .summary ul{margin:4px 0;padding-left:20px}
        .summary .names{color:var(--muted);font-size:13px;margin:6px 0 0}
        .summary,.note{overflow-wrap:break-word}
        .nw{white-space:nowrap}
        a{color:var(--accent)}
        h3{font-size:14px;margin:14px 0 2px}
        .h3-note{font-weight:400;color:var(--muted);font-size:12px}
        .multiples{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(480px,100%),1fr));gap:8px 20px}
        .multiple{min-width:0}
        svg .window{fill:var(--bad);opacity:.12}
        svg .window-label{fill:var(--bad);font-size:12px;font-weight:600}
        .window-swatch{background:var(--bad);opacity:.25}
        svg .e429{fill:var(--planned)}
        svg .e5xx{fill:var(--bad)}
        svg .eother{fill:var(--muted)}
        svg .hit{fill:transparent}
        th{cursor:pointer;user-select:none}
        th[aria-sort=ascending]::after{content:" ▲";font-size:10px}
        th[aria-sort=descending]::after{content:" ▼";font-size:10px}
        .device-table td:nth-child(-n+5),.device-table th:nth-child(-n+5){text-align:left}
        .device-table td:first-child{position:sticky;left:0;background:var(--bg)}
        @media (max-width:600px){body{padding:10px}h1{font-size:19px}.cards{grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px}\
        .card .value{font-size:21px}.summary .lead{font-size:16px}\
        svg text{font-size:22px}svg .tick{font-size:18px}svg .row-label{font-size:13px}svg .window-label{font-size:24px}svg .marker-label{font-size:20px}\
        .multiple svg text,.multiple svg .marker-label{font-size:12px}.multiple svg .tick{font-size:11px}}
        """
}
