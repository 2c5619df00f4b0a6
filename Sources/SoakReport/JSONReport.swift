import RegcodeRecords
import RegcodeSupport

// The JSON rendering of a SoakReport.

extension SoakReport {
    /// The report as one JSON object: `fleet` and `devices`, snake_case keys, milliseconds.
    ///
    /// Every key is always present (`null` when a figure has no values), in a fixed order; when the
    /// request log was read, `failed_onboardings` and, in `fleet` and each device, `onboarding` and
    /// `requests` (and a device's `state`) are added. `trouble` (the headline sentences, devices
    /// without a code, 429s and 5xx by stage with polls as the stage `poll`, the timeline and the
    /// trouble windows) and `fleets` (every figure per fleet) are always there, as are each device's
    /// `fleet` and `trouble`; `throttled_429` of the poll figures still counts poll 429s only.
    /// The poll figures (fleet, each device, each fleet) hold `polls_per_login` (polls per authenticated code) and
    /// `device_flow` (`slow_down_answers`, `early_polls`, `early_polls_after_slow_down`, `denied_codes`: the OAuth
    /// device grant's, all 0 for Adobe devices); `code_fates` has `denied` beside `expired`.
    ///
    /// With `thresholds`, `thresholds` (each with its value and result) and `passed` come first.
    package func json(pretty: Bool = true, thresholds: [ThresholdResult]? = nil) -> String {
        var json = JSONWriter(layout: pretty ? .indented(2) : .compact)
        json.object { json in
            if let thresholds {
                json.member("passed", thresholds.allPassed)
                json.key("thresholds")
                thresholds.write(to: &json)
            }
            writeHeader(to: &json)
            json.key("fleet")
            json.object { json in
                json.member("devices", Int64(devices.count))
                Self.writeMembers(fleet, to: &json)
                json.key("logins")
                if let logins { logins.write(to: &json) } else { json.null() }
                if requestsLoaded {
                    json.key("onboarding")
                    Self.writeOnboarding(onboarding, device: nil, to: &json)
                    json.key("requests")
                    Self.writeRequests(requests, to: &json)
                }
            }
            json.key("devices")
            json.array { json in
                for device in devices {
                    json.object { json in
                        json.member("device", device.device)
                        Self.writeMembers(device.figures, to: &json)
                        json.member("fleet", device.fleet)
                        json.key("trouble")
                        Self.writeDeviceTrouble(device.trouble, to: &json)
                        if requestsLoaded {
                            json.key("state")
                            if let state = device.state { json.string(state) } else { json.null() }
                            json.key("onboarding")
                            Self.writeOnboarding(device.onboarding, device: device, to: &json)
                            json.key("requests")
                            Self.writeRequests(device.requests, to: &json)
                        }
                    }
                }
            }
            json.key("trouble")
            writeTrouble(to: &json)
            json.key("fleets")
            json.array { json in
                for group in fleets {
                    json.object { json in
                        json.member("fleet", group.fleet)
                        json.key("trouble")
                        json.object { json in Self.writeTroubleFigures(group.trouble, to: &json) }
                        Self.writeMembers(group.figures, to: &json)
                        if requestsLoaded {
                            json.key("requests")
                            Self.writeRequests(group.requests, to: &json)
                        }
                    }
                }
            }
            if requestsLoaded {
                json.key("failed_onboardings")
                json.array { json in
                    for failed in failedOnboardings {
                        Self.writeFailedOnboarding(failed, to: &json)
                    }
                }
            }
        }
        return json.text
    }

    /// `trouble`: what went wrong, fleet-wide (see ``headline``), with the timeline and windows.
    private func writeTrouble(to json: inout JSONWriter) {
        json.object { json in
            json.key("headline")
            json.array { json in
                for sentence in headline { json.string(sentence) }
            }
            Self.writeTroubleFigures(trouble.figures, to: &json)
            json.key("never_got_code_devices")
            json.array { json in
                for device in devices where !device.trouble.gotCode {
                    json.object { json in
                        json.member("device", device.device)
                        json.member("fleet", device.fleet)
                        json.key("stopped_at")
                        if let stage = device.trouble.stoppedAt { json.string(stage.rawValue) } else { json.null() }
                        json.key("status")
                        if let status = device.trouble.stopStatus { json.string(status) } else { json.null() }
                        json.key("last_error")
                        if let error = device.trouble.lastError { json.string(error) } else { json.null() }
                    }
                }
            }
            json.member("bucket_ms", trouble.bucketMs)
            json.key("trouble_share")
            json.raw(NumberText.json(Self.troubleShare))
            json.key("windows")
            json.array { json in
                for window in trouble.windows {
                    json.object { json in
                        json.member("label", window.label)
                        json.member("start_ms", window.startMs)
                        json.member("end_ms", window.endMs)
                        for (key, value) in [
                            ("requests", window.requests), ("throttled_429", window.throttled), ("server_5xx", window.serverErrors),
                            ("other_errors", window.otherErrors),
                        ] {
                            json.key(key)
                            json.int(Int64(value))
                        }
                        json.key("worst_stage")
                        if let stage = window.worstStage { json.string(stage.rawValue) } else { json.null() }
                        json.key("fleets")
                        json.array { json in
                            for fleet in window.fleets { json.string(fleet) }
                        }
                    }
                }
            }
        }
    }

    /// The members of a ``TroubleFigures``: counts, where devices stopped, by stage, timeline.
    private static func writeTroubleFigures(_ t: TroubleFigures, to json: inout JSONWriter) {
        for (key, value) in [
            ("devices", t.devices), ("devices_with_code", t.devicesWithCode), ("never_got_code", t.neverGotCode.count),
            ("throttled_429", t.throttled), ("server_5xx", t.serverErrors), ("errors", t.failed),
        ] {
            json.key(key)
            json.int(Int64(value))
        }
        json.key("stopped_at")
        json.array { json in
            for stop in t.stops {
                json.object { json in
                    json.key("stage")
                    if let stage = stop.stage { json.string(stage.rawValue) } else { json.null() }
                    json.key("status")
                    if let status = stop.status { json.string(status) } else { json.null() }
                    json.key("devices")
                    json.array { json in
                        for device in stop.devices { json.string(device) }
                    }
                }
            }
        }
        json.key("by_stage")
        json.object { json in
            for stage in t.stages {
                json.key(stage.stage.rawValue)
                json.object { json in
                    for (key, value) in [
                        ("requests", stage.requests), ("errors", stage.failed), ("throttled_429", stage.throttled),
                        ("server_5xx", stage.serverErrors),
                    ] {
                        json.key(key)
                        json.int(Int64(value))
                    }
                }
            }
        }
        json.key("timeline")
        json.array { json in
            for bucket in t.timeline {
                json.object { json in
                    json.member("start_ms", bucket.startMs)
                    for (key, value) in [
                        ("requests", bucket.requests), ("throttled_429", bucket.throttled), ("server_5xx", bucket.serverErrors),
                        ("other_errors", bucket.otherErrors),
                    ] {
                        json.key(key)
                        json.int(Int64(value))
                    }
                }
            }
        }
    }

    private static func writeDeviceTrouble(_ t: DeviceTrouble, to json: inout JSONWriter) {
        json.object { json in
            json.member("got_code", t.gotCode)
            json.key("stopped_at")
            if let stage = t.stoppedAt { json.string(stage.rawValue) } else { json.null() }
            json.key("stop_status")
            if let status = t.stopStatus { json.string(status) } else { json.null() }
            json.key("last_error")
            if let error = t.lastError { json.string(error) } else { json.null() }
            for (key, value) in [("throttled_429", t.throttled), ("server_5xx", t.serverErrors), ("errors", t.errors)] {
                json.key(key)
                json.int(Int64(value))
            }
        }
    }

    /// `onboarding`: the fleet's counts, or one device's (with `got_code` and its last failure).
    private static func writeOnboarding(_ figures: OnboardingFigures, device: DeviceReport?, to json: inout JSONWriter) {
        json.object { json in
            if let device {
                json.member("got_code", device.failedOnboarding == nil)
            } else {
                json.member("devices_with_code", Int64(figures.devicesWithCode))
                json.member("failed_onboardings", Int64(figures.failedOnboardings))
            }
            json.member("registrations_ok", Int64(figures.registrations))
            json.member("re_registrations", Int64(figures.reRegistrations))
            json.member("codes_issued", optional: figures.codesIssued)
            json.member("new_codes", optional: figures.newCodes)
        }
    }

    /// `requests`: totals and one object per stage.
    private static func writeRequests(_ figures: RequestFigures, to json: inout JSONWriter) {
        json.object { json in
            json.member("total", Int64(figures.requests))
            json.member("retried", Int64(figures.retried))
            json.key("by_stage")
            json.object { json in
                for stage in figures.stages {
                    json.key(stage.stage.rawValue)
                    json.object { json in
                        for (key, value) in [
                            ("requests", stage.requests), (RequestOutcome.ok.rawValue, stage.ok), ("throttled_429", stage.throttled),
                            ("server_5xx", stage.serverErrors), ("transport_errors", stage.transportErrors),
                            ("client_errors", stage.clientErrors), ("other", stage.other), ("retried", stage.retried),
                        ] {
                            json.key(key)
                            json.int(Int64(value))
                        }
                        json.key("outcomes")
                        json.object { json in
                            for (outcome, value) in orderedRequestOutcomes(stage) {
                                json.key(outcome.rawValue)
                                json.int(Int64(value))
                            }
                        }
                        json.key("latency_ms")
                        writeDistribution(stage.latency, to: &json)
                    }
                }
            }
        }
    }

    private static func writeFailedOnboarding(_ failed: FailedOnboarding, to json: inout JSONWriter) {
        json.object { json in
            json.member("device", failed.device)
            json.key("state")
            if let state = failed.state { json.string(state) } else { json.null() }
            json.member("requests", Int64(failed.requests))
            json.member("failure_events", Int64(failed.failureEvents))
            json.key("last_failure")
            if let event = failed.lastFailure {
                json.object { json in
                    json.member("error_id", event.errorId)
                    json.key("message")
                    if let message = event.message { json.string(message) } else { json.null() }
                    json.member("time_ms", event.timeMs)
                }
            } else {
                json.null()
            }
            json.key("last_failed_request")
            if let request = failed.lastFailedRequest {
                json.object { json in
                    json.member("stage", request.stage.rawValue)
                    json.member("endpoint", request.endpoint)
                    json.member("sent_ms", request.sentEpochMs)
                    json.member("http_status", optional: request.httpStatus)
                    json.member("outcome", request.outcome.rawValue)
                    json.key("error_code")
                    if let code = request.errorCode { json.string(code) } else { json.null() }
                }
            } else {
                json.null()
            }
        }
    }

    private static func writeDistribution(_ d: Distribution, to json: inout JSONWriter) {
        json.object { json in
            json.member("count", Int64(d.count))
            json.member("min", optional: d.min)
            json.member("p50", optional: d.p50)
            json.member("p95", optional: d.p95)
            json.member("p99", optional: d.p99)
            json.member("max", optional: d.max)
            json.member("mean", optional: d.mean)
        }
    }

    /// Known request outcomes first (in ``requestOutcomeKinds`` order), then others alphabetically.
    static func orderedRequestOutcomes(_ stage: StageFigures) -> [(RequestOutcome, Int)] {
        let known = requestOutcomeKinds.filter { stage.outcomes[$0] != nil }
        let others = stage.outcomes.keys.filter { !requestOutcomeKinds.contains($0) }.sorted { $0.rawValue < $1.rawValue }
        return (known + others).map { ($0, stage.outcomes[$0] ?? 0) }
    }

    private static func writeMembers(_ figures: PollFigures, to json: inout JSONWriter) {
        func count(_ key: String, _ value: Int) {
            json.key(key)
            json.int(Int64(value))
        }
        func distribution(_ key: String, _ d: Distribution) {
            json.key(key)
            writeDistribution(d, to: &json)
        }
        count("polls", figures.polls)
        count("codes", figures.codes)
        distribution("polls_per_code", figures.pollsPerCode)
        distribution("polls_per_login", figures.pollsPerLogin)
        distribution("achieved_interval_ms", figures.achievedInterval)
        distribution("planned_interval_ms", figures.plannedInterval)
        distribution("lateness_ms", figures.lateness)
        distribution("latency_ms", figures.latency)
        count("throttled_429", figures.throttled)
        count("backoffs", figures.backoffs)
        json.key("outcomes")
        json.object { json in
            for (outcome, value) in orderedOutcomes(figures) {
                json.key(outcome.rawValue)
                json.int(Int64(value))
            }
        }
        json.key("http_statuses")
        json.object { json in
            for status in figures.httpStatuses.keys.sorted() {
                json.key(String(status))
                json.int(Int64(figures.httpStatuses[status] ?? 0))
            }
            if figures.withoutHTTPStatus > 0 {
                json.member("none", Int64(figures.withoutHTTPStatus))
            }
        }
        json.key("code_fates")
        json.object { json in
            for fate in CodeFate.allCases {
                json.key(fate.rawValue)
                json.int(Int64(figures.codes(fate)))
            }
        }
        count("authenticated_codes", figures.authenticatedCodes)
        distribution("time_to_authenticate_ms", figures.timeToAuthenticate)
        json.key("expiries")
        json.object { json in
            json.member("expired_codes", Int64(figures.expiredCodes))
            json.member("code_invalid_polls", Int64(figures.codeInvalid))
            json.member("reg410_events", optional: figures.expiryEvents)
            json.member("reg500_events", optional: figures.failureEvents)
        }
        json.key("device_flow")
        json.object { json in
            json.member("slow_down_answers", Int64(figures.slowDownAnswers))
            json.member("early_polls", Int64(figures.earlyPolls))
            json.member("early_polls_after_slow_down", Int64(figures.earlyPollsAfterSlowDown))
            json.member("denied_codes", Int64(figures.deniedCodes))
        }
        json.member("first_sent_ms", optional: figures.firstSentMs)
        json.member("last_sent_ms", optional: figures.lastSentMs)
    }

    /// Known outcomes first (in ``outcomeKinds`` order), then any others alphabetically.
    static func orderedOutcomes(_ figures: PollFigures) -> [(PollOutcome, Int)] {
        let known = outcomeKinds.filter { figures.outcomes[$0] != nil }
        let others = figures.outcomes.keys.filter { !outcomeKinds.contains($0) }.sorted { $0.rawValue < $1.rawValue }
        return (known + others).map { ($0, figures.outcomes[$0] ?? 0) }
    }

    /// The members before the figures: when, over what, how percentiles are taken, and the generator's health.
    func writeHeader(to json: inout JSONWriter) {
        json.member("generated_at_ms", generatedAtMs)
        json.member("generated_at", UTCText.iso(generatedAtMs))
        json.member("since_ms", optional: sinceMs)
        json.member("events_loaded", eventsLoaded)
        json.member("percentile_method", "nearest-rank")
        json.key("generator")
        writeGenerator(to: &json)
    }

    /// `generator`: the bound and the windows in which the emulator fell behind its own schedule.
    func writeGenerator(to json: inout JSONWriter) {
        json.object { json in
            json.member("lateness_bound_ms", Self.generatorLatenessBoundMs)
            json.member("behind", !generatorWindows.isEmpty)
            json.key("windows")
            json.array { json in
                for window in generatorWindows {
                    json.object { json in
                        json.member("label", window.label)
                        json.member("start_ms", window.startMs)
                        json.member("end_ms", window.endMs)
                        json.member("polls", Int64(window.polls))
                        json.member("late_polls", Int64(window.latePolls))
                        json.member("lateness_p99_ms", window.latenessP99Ms)
                        json.member("worst_lateness_ms", window.worstLatenessMs)
                    }
                }
            }
        }
    }
}
