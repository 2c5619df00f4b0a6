import RegcodeSupport

// The HTML page's device-state timeline: per device, when it polled a code and how the code ended.

extension SoakReport {
    // MARK: Timeline

    private struct Segment {
        /// What a segment shows; the raw value names its CSS class (`seg-polling`, …).
        enum Kind: String {
            case polling
            case authenticated
            case expired
            case denied
        }

        var x0: Double
        var x1: Double
        var kind: Kind
        var codes: [String]
        var polls: Int
        var fromMs: Int64
        var toMs: Int64
    }

    func timeline(maxRows: Int) -> String {
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
                    "<rect class=\"seg-\(segment.kind.rawValue)\" x=\"\(Markup.coordinate(segment.x0))\" y=\"\(Markup.coordinate(top + 2))\" width=\"\(Markup.coordinate(max(segment.x1 - segment.x0, 1.5)))\" height=\"\(Markup.coordinate(rowHeight - 4))\"><title>\(HTML.escape(title(device: device, segment: segment)))</title></rect>"
            }
        }
        svg += "</svg>\n"
        // Only OAuth device grant codes are denied: the swatch is drawn when one was.
        let deniedLegend =
            fleet.deniedCodes > 0 ? #"<span><span class="swatch" style="background:var(--planned)"></span>denied by the user</span>"# : ""
        var html = """
            <div class="legend"><span><span class="swatch" style="background:var(--accent)"></span>polling a code (first to last poll)</span>\
            <span><span class="swatch" style="background:var(--ok)"></span>authenticated</span>\
            <span><span class="swatch" style="background:var(--bad)"></span>expired or failed</span>\
            \(deniedLegend)</div>

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
                    kind: .polling,
                    codes: [code.code],
                    polls: code.polls,
                    fromMs: code.firstSentMs,
                    toMs: code.lastSentMs
                )
            )
            let after: Segment.Kind
            switch code.fate {
            case .authenticated: after = .authenticated
            case .expired: after = .expired
            case .denied: after = .denied
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
        case .polling: return "\(device): polling \(codesText), \(segment.polls) poll\(segment.polls == 1 ? "" : "s"), \(span)"
        case .authenticated: return "\(device): authenticated with \(codesText), \(span)"
        case .expired: return "\(device): \(codesText) expired or failed, \(span)"
        case .denied: return "\(device): \(codesText) denied by the user, \(span)"
        }
    }
}
