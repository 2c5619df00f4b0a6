// What went wrong, in sentences: the first lines of every rendering.

extension SoakReport {
    /// The sentences that say what went wrong, most important first; one sentence when nothing did.
    package var headline: [String] {
        let t = trouble.figures
        var sentences: [String] = []
        if let generator = generatorSentence { sentences.append(generator) }
        if !t.neverGotCode.isEmpty {
            let stops = t.stops.map { "\($0.devices.count) stopped at \($0.phrase)" }
            sentences.append("\(t.neverGotCode.count) of \(t.devices) devices never got a code: \(stops.joined(separator: ", ")).")
        }
        if t.throttled > 0 {
            sentences.append("429s: \(t.throttled) (\(Self.byStage(t.stages, \.throttled))).")
        }
        if t.serverErrors > 0 {
            sentences.append("5xx: \(t.serverErrors) (\(Self.byStage(t.stages, \.serverErrors))).")
        }
        let other = t.failed - t.throttled - t.serverErrors
        if other > 0 {
            sentences.append(
                "Other errors: \(other) (\(Self.byStage(t.stages) { $0.failed - $0.throttled - $0.serverErrors }))."
            )
        }
        if !trouble.windows.isEmpty {
            let days = windowsSpanDays
            let spans = trouble.windows.prefix(3).map {
                "\($0.label) \(Self.clock($0.startMs, withDate: days))–\(Self.clock($0.endMs, withDate: days))"
            }
            let more = trouble.windows.count > 3 ? " and \(trouble.windows.count - 3) more" : ""
            sentences.append(
                "\(trouble.windows.count) trouble window\(trouble.windows.count == 1 ? "" : "s"): \(spans.joined(separator: ", "))\(more)."
            )
        }
        if fleets.count > 1 {
            let hurt = fleets.filter { !$0.trouble.neverGotCode.isEmpty || $0.trouble.failed > 0 }
            let quiet = fleets.filter { $0.trouble.neverGotCode.isEmpty && $0.trouble.failed == 0 }
            if !hurt.isEmpty && !quiet.isEmpty {
                sentences.append(
                    "Trouble in fleet\(hurt.count == 1 ? "" : "s") \(hurt.map(\.fleet).joined(separator: ", ")); no errors in \(quiet.map(\.fleet).joined(separator: ", "))."
                )
            }
        }
        if sentences.isEmpty {
            let polls = fleet.polls
            sentences.append(
                "No trouble: \(t.devicesWithCode) of \(t.devices) devices got a code; no 429s, 5xx or other errors in \(polls) poll\(polls == 1 ? "" : "s") and \(requests.requests) other request\(requests.requests == 1 ? "" : "s")."
            )
        }
        return sentences
    }

    /// `registration 240, poll 10`: the stages with a non-zero count, largest first.
    static func byStage(_ stages: [StageTrouble], _ pick: (StageTrouble) -> Int) -> String {
        stages.map { ($0.stage.rawValue, pick($0)) }.filter { $0.1 > 0 }
            .enumerated().sorted { ($1.element.1, $0.offset) < ($0.element.1, $1.offset) }
            .map { "\($0.element.0) \($0.element.1)" }.joined(separator: ", ")
    }

    /// `12:03:05` (UTC), or `01-15 12:03:05` with `withDate`.
    static func clock(_ ms: Int64, withDate: Bool = false) -> String {
        let p = UTCText.parts(ms)
        return (withDate ? "\(NumberText.twoDigits(p.month))-\(NumberText.twoDigits(p.day)) " : "") + UTCText.clock(p)
    }

    /// Whether the trouble windows fall on more than one UTC day (then their times carry the date).
    var windowsSpanDays: Bool {
        guard let first = trouble.windows.first, let last = trouble.windows.last else { return false }
        return UTCText.floorDiv(first.startMs, 86_400_000) != UTCText.floorDiv(last.endMs - 1, 86_400_000)
    }
}
