import RegcodeSupport

// The HTML page's poll charts: the interval histogram and lateness over time.

extension SoakReport {
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
            svg += Self.plannedOutline(plannedBins.bins, start: start, binWidth: binWidth, p50: figures.plannedInterval.p50, frame: frame)
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

    /// The planned distribution as a step outline over the bars, and a marker at its p50.
    private static func plannedOutline(_ bins: [Int], start: Double, binWidth: Double, p50: Double?, frame: PlotFrame) -> String {
        var path = "M\(Markup.coordinate(frame.x(start))) \(Markup.coordinate(frame.y(0)))"
        for (index, count) in bins.enumerated() {
            let y = Markup.coordinate(frame.y(Double(count)))
            path += " V\(y) H\(Markup.coordinate(frame.x(start + Double(index + 1) * binWidth)))"
        }
        path += " V\(Markup.coordinate(frame.y(0)))"
        var svg = "<path class=\"planned\" d=\"\(path)\"/>"
        if let p50 {
            let x = Markup.coordinate(frame.x(p50))
            svg +=
                "<line class=\"marker\" x1=\"\(x)\" x2=\"\(x)\" y1=\"\(Markup.coordinate(frame.top))\" y2=\"\(Markup.coordinate(frame.y(0)))\"/>"
            let anchor = frame.x(p50) > frame.left + frame.plotWidth * 0.75 ? "end" : "start"
            let dx = anchor == "end" ? -4.0 : 4.0
            svg +=
                "<text class=\"marker-label\" x=\"\(Markup.coordinate(frame.x(p50) + dx))\" y=\"\(Markup.coordinate(frame.top + 10))\" text-anchor=\"\(anchor)\">planned p50 \(HTML.escape(NumberText.duration(p50)))</text>"
        }
        return svg
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
        // Polls later than the top of the axis are drawn at the top edge.
        let clipped = points.filter { Double($0.latenessMs) > yHigh }.count
        let plot =
            points.count <= Self.scatterLimit
            ? Self.latenessDots(points, frame: frame, yHigh: yHigh)
            : Self.latenessColumns(points, frame: frame, xRange: xLow...xHigh, yHigh: yHigh)
        svg += plot.svg + Self.latenessLines(frame: frame, yHigh: yHigh, p99: p99)
        let legend = plot.legend
        svg += "</svg>\n"
        var html =
            "<div class=\"legend\">\(legend)<span><span class=\"swatch\" style=\"background:var(--bad)\"></span>p99 of the polls drawn (dashed)</span></div>\n"
            + svg
        var note = "\(points.count) polls; lateness min \(NumberText.duration(earliest)), max \(NumberText.duration(latest))."
        if clipped > 0 { note += " \(clipped) poll\(clipped == 1 ? "" : "s") later than \(NumberText.duration(yHigh)) drawn at the top edge." }
        html += "<p class=\"note\">\(HTML.escape(note))</p>\n"
        return html
    }

    /// One dot per poll; those above `yHigh` at the top edge, in their own colour.
    private static func latenessDots(_ points: [LatenessPoint], frame: PlotFrame, yHigh: Double) -> (svg: String, legend: String) {
        var dots = ""
        var over = ""
        for point in points {
            let lateness = Double(point.latenessMs)
            let segment = "M\(Markup.coordinate(frame.x(Double(point.sentMs)))) \(Markup.coordinate(frame.y(min(lateness, yHigh))))h0"
            if lateness > yHigh { over += segment } else { dots += segment }
        }
        var svg = "<path class=\"dots\" d=\"\(dots)\"/>"
        if !over.isEmpty { svg += "<path class=\"dots clipped\" d=\"\(over)\"/>" }
        return (svg, "<span><span class=\"swatch\" style=\"background:var(--accent)\"></span>one dot per poll</span>")
    }

    /// Per column of a few pixels: median and p99, so a dense log stays a readable picture (a per-column
    /// maximum would be mostly noise from the slowest 1 %).
    private static func latenessColumns(
        _ points: [LatenessPoint],
        frame: PlotFrame,
        xRange: ClosedRange<Double>,
        yHigh: Double
    )
        -> (svg: String, legend: String)
    {
        let (xLow, xHigh) = (xRange.lowerBound, xRange.upperBound)
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
            median += "\(command)\(x) \(Markup.coordinate(frame.y(min(NearestRank.percentile(50, ofSorted: sorted) ?? 0, yHigh))))"
            high += "\(command)\(x) \(Markup.coordinate(frame.y(min(NearestRank.percentile(99, ofSorted: sorted) ?? 0, yHigh))))"
            previousFilled = true
        }
        let svg = "<path class=\"line-high\" d=\"\(high)\"/><path class=\"line-median\" d=\"\(median)\"/>"
        let width = HTML.escape(NumberText.duration((xHigh - xLow) / Double(columns)))
        let legend =
            "<span><span class=\"swatch\" style=\"background:var(--accent)\"></span>median per \(width) column</span><span><span class=\"swatch\" style=\"background:var(--planned)\"></span>p99 per column</span>"
        return (svg, legend)
    }

    /// The target line (when it is on the axis) and the p99 line of the polls drawn.
    private static func latenessLines(frame: PlotFrame, yHigh: Double, p99: Double) -> String {
        var svg = ""
        if latenessTargetMs <= yHigh {
            let y = Markup.coordinate(frame.y(latenessTargetMs))
            svg +=
                "<line class=\"target\" x1=\"\(Markup.coordinate(frame.left))\" x2=\"\(Markup.coordinate(frame.left + frame.plotWidth))\" y1=\"\(y)\" y2=\"\(y)\"/>"
            svg +=
                "<text class=\"tick\" x=\"\(Markup.coordinate(frame.left + 4))\" y=\"\(Markup.coordinate(frame.y(latenessTargetMs) - 4))\">target p99 50 ms</text>"
        }
        let p99Y = frame.y(min(p99, yHigh))
        svg +=
            "<line class=\"p99\" x1=\"\(Markup.coordinate(frame.left))\" x2=\"\(Markup.coordinate(frame.left + frame.plotWidth))\" y1=\"\(Markup.coordinate(p99Y))\" y2=\"\(Markup.coordinate(p99Y))\"/>"
        svg +=
            "<text class=\"p99-label\" x=\"\(Markup.coordinate(frame.left + frame.plotWidth - 4))\" y=\"\(Markup.coordinate(p99Y - 4))\" text-anchor=\"end\">p99 \(HTML.escape(NumberText.duration(p99)))</text>"
        return svg
    }
}
