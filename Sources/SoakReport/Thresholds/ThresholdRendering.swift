import RegcodeSupport

// Threshold results as text (a block after the report), JSON and JUnit XML for CI systems.

extension [ThresholdResult] {
    /// Whether every threshold held (true when there are none).
    package var allPassed: Bool { allSatisfy(\.passed) }

    /// `Thresholds: 1 of 3 failed` and one line per threshold, failures marked.
    package var text: String {
        guard !isEmpty else { return "" }
        let failed = filter { !$0.passed }.count
        var lines = [failed == 0 ? "Thresholds: all \(count) passed" : "Thresholds: \(failed) of \(count) failed"]
        let width = map(\.threshold.description.count).max() ?? 0
        for result in self {
            let padding = String(repeating: " ", count: width - result.threshold.description.count)
            lines.append("  \(result.passed ? "pass" : "FAIL")  \(result.threshold.description)\(padding)  \(result.valueText)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes `[{expression, metric, fleet, value, passed, note}]`.
    package func write(to json: inout JSONWriter) {
        json.array { json in
            for result in self {
                json.object { json in
                    json.key("expression")
                    json.string(result.threshold.description)
                    json.key("metric")
                    json.string(result.threshold.metric.rawValue)
                    json.key("fleet")
                    if let fleet = result.threshold.fleet { json.string(fleet) } else { json.null() }
                    json.key("value")
                    json.optional(result.value)
                    json.key("passed")
                    json.bool(result.passed)
                    json.key("note")
                    if let note = result.note { json.string(note) } else { json.null() }
                }
            }
        }
    }

    /// A JUnit XML document: one test case per threshold, a failure element for each that failed.
    package func junit(suite: String = "regcoded soak thresholds") -> String {
        let failures = filter { !$0.passed }.count
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml += #"<testsuites name="\#(HTML.escape(suite))" tests="\#(count)" failures="\#(failures)">"# + "\n"
        xml += #"  <testsuite name="\#(HTML.escape(suite))" tests="\#(count)" failures="\#(failures)" errors="0" skipped="0">"# + "\n"
        for result in self {
            let name = HTML.escape(result.threshold.description)
            let classname = HTML.escape(result.threshold.fleet.map { "thresholds.fleet.\($0)" } ?? "thresholds")
            if result.passed {
                xml += #"    <testcase name="\#(name)" classname="\#(classname)"/>"# + "\n"
            } else {
                let message = HTML.escape("\(result.threshold.description) failed: \(result.valueText)")
                xml += #"    <testcase name="\#(name)" classname="\#(classname)">"# + "\n"
                xml += #"      <failure message="\#(message)" type="threshold">\#(message)</failure>"# + "\n"
                xml += "    </testcase>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }
}
