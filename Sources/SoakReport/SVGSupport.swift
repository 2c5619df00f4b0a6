import RegcodeSupport

/// Escaping and small drawing helpers for the HTML report.
enum Markup {
    /// A coordinate with at most one decimal.
    static func coordinate(_ value: Double) -> String {
        NumberText.fixed(value, maxDecimals: 1)
    }
}

/// Axis ticks at round values.
enum Ticks {
    /// About `target` ticks at multiples of 1, 2 or 5 × 10ⁿ covering `low…high`.
    static func nice(low: Double, high: Double, target: Int = 6) -> (step: Double, values: [Double]) {
        let span = max(high - low, 1e-9)
        let raw = span / Double(max(target, 1))
        var magnitude = 1.0
        while magnitude * 10 <= raw { magnitude *= 10 }
        while magnitude > raw { magnitude /= 10 }
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? magnitude * 10
        var values: [Double] = []
        var value = (low / step).rounded(.up) * step
        while value <= high + step * 1e-9 {
            values.append(value)
            value += step
        }
        return (step, values)
    }

    /// Time ticks (epoch ms) at round UTC clock steps, with labels suited to the span.
    static func time(fromMs low: Int64, toMs high: Int64, target: Int = 6) -> [(ms: Int64, label: String)] {
        let steps: [Int64] = [
            1000, 2000, 5000, 10_000, 15_000, 30_000,
            60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000,
            3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000,
            86_400_000, 172_800_000, 604_800_000,
        ]
        let span = max(high - low, 1)
        let step = steps.first { span / $0 <= Int64(target) } ?? (span / Int64(target) / 86_400_000 + 1) * 86_400_000
        var ticks: [(Int64, String)] = []
        var value = UTCText.floorDiv(low + step - 1, step) * step
        let multiDay = UTCText.floorDiv(low, 86_400_000) != UTCText.floorDiv(high, 86_400_000)
        while value <= high {
            let p = UTCText.parts(value)
            var label = "\(NumberText.twoDigits(p.hour)):\(NumberText.twoDigits(p.minute))"
            if step < 60_000 { label += ":\(NumberText.twoDigits(p.second))" }
            if multiDay && (step >= 86_400_000 || (p.hour == 0 && p.minute == 0)) {
                label = "\(NumberText.twoDigits(p.month))-\(NumberText.twoDigits(p.day))" + (step >= 86_400_000 ? "" : " " + label)
            }
            ticks.append((value, label))
            value += step
        }
        return ticks
    }
}

/// A plot area inside an SVG of fixed view-box size, mapping data to pixels.
struct PlotFrame {
    var width = 960.0
    var height = 300.0
    var left = 70.0
    var right = 20.0
    var top = 24.0
    var bottom = 52.0
    var xRange: ClosedRange<Double>
    var yRange: ClosedRange<Double>

    var plotWidth: Double { width - left - right }
    var plotHeight: Double { height - top - bottom }

    func x(_ value: Double) -> Double {
        let span = xRange.upperBound - xRange.lowerBound
        return left + (span > 0 ? (value - xRange.lowerBound) / span : 0.5) * plotWidth
    }

    func y(_ value: Double) -> Double {
        let span = yRange.upperBound - yRange.lowerBound
        return top + plotHeight - (span > 0 ? (value - yRange.lowerBound) / span : 0.5) * plotHeight
    }

    /// The opening tag; `label` is the accessible name.
    func open(label: String) -> String {
        "<svg viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"\(HTML.escape(label))\">"
    }

    /// Grid lines, tick labels and axis titles.
    func axes(xTicks: [(Double, String)], yTicks: [(Double, String)], xTitle: String, yTitle: String) -> String {
        var svg = ""
        let bottomY = Markup.coordinate(top + plotHeight)
        for (value, label) in yTicks {
            let py = Markup.coordinate(y(value))
            svg += "<line class=\"grid\" x1=\"\(Markup.coordinate(left))\" x2=\"\(Markup.coordinate(left + plotWidth))\" y1=\"\(py)\" y2=\"\(py)\"/>"
            svg +=
                "<text class=\"tick\" x=\"\(Markup.coordinate(left - 6))\" y=\"\(py)\" text-anchor=\"end\" dominant-baseline=\"middle\">\(HTML.escape(label))</text>"
        }
        for (value, label) in xTicks {
            let px = Markup.coordinate(x(value))
            svg += "<line class=\"grid\" x1=\"\(px)\" x2=\"\(px)\" y1=\"\(Markup.coordinate(top))\" y2=\"\(bottomY)\"/>"
            svg +=
                "<text class=\"tick\" x=\"\(px)\" y=\"\(Markup.coordinate(top + plotHeight + 16))\" text-anchor=\"middle\">\(HTML.escape(label))</text>"
        }
        svg +=
            "<line class=\"axis\" x1=\"\(Markup.coordinate(left))\" x2=\"\(Markup.coordinate(left + plotWidth))\" y1=\"\(bottomY)\" y2=\"\(bottomY)\"/>"
        svg +=
            "<line class=\"axis\" x1=\"\(Markup.coordinate(left))\" x2=\"\(Markup.coordinate(left))\" y1=\"\(Markup.coordinate(top))\" y2=\"\(bottomY)\"/>"
        if !xTitle.isEmpty {
            svg +=
                "<text class=\"title\" x=\"\(Markup.coordinate(left + plotWidth / 2))\" y=\"\(Markup.coordinate(height - 8))\" text-anchor=\"middle\">\(HTML.escape(xTitle))</text>"
        }
        guard !yTitle.isEmpty else { return svg }
        let middle = Markup.coordinate(top + plotHeight / 2)
        svg +=
            "<text class=\"title\" x=\"16\" y=\"\(middle)\" text-anchor=\"middle\" transform=\"rotate(-90 16 \(middle))\">\(HTML.escape(yTitle))</text>"
        return svg
    }
}
