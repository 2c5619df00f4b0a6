import RegcodeRecords

/// A soak report: figures for the fleet and for each device, computed from the poll log and,
/// optionally, the `status` events, the request log and the stored devices.
package struct SoakReport: Sendable, Equatable {
    /// When the report was made, milliseconds since the Unix epoch.
    package var generatedAtMs: Int64
    /// The start of the window the logs were read from, if one was given.
    package var sinceMs: Int64?
    /// Whether `status` events were read (else the event figures are `nil`).
    package var eventsLoaded: Bool
    /// Whether the request log was read. Only then do the renderings show requests by stage,
    /// onboarding figures and failed onboardings.
    package var requestsLoaded: Bool
    package var fleet: PollFigures
    /// The fleet's request log figures.
    package var requests: RequestFigures
    /// The fleet's onboarding figures.
    package var onboarding: OnboardingFigures
    /// Every device the logs or the devices table name (got a code or not), in natural name order
    /// (`stb-2` before `stb-10`).
    package var devices: [DeviceReport]
    /// The devices that never got a code, in natural name order.
    package var failedOnboardings: [FailedOnboarding]
    /// Every code, by device (natural order), then by first poll.
    package var codes: [CodeSummary]
    package var series: ReportSeries
    /// Devices without a code, 429s and 5xx by stage (polls included), errors over time and the
    /// trouble windows, fleet-wide.
    package var trouble: Trouble
    /// Every figure per fleet (`devices.fleet`), in natural name order with ``noFleetName`` last.
    package var fleets: [FleetReport]
    /// Logins by kind (regular, TempPass, degraded, single sign-on); nil when the login log was not read
    /// (a database older than the log).
    package var logins: LoginFigures?
    /// Whether OAuth devices (RFC 8628) made requests in the window: their device flow figures are then shown even
    /// when all are zero (a well-behaved fleet's `early_polls` 0 is a result, not an absence).
    package var hasOAuthDevices = false
    /// Where the emulator fell behind its own poll schedule (see ``generatorLatenessBoundMs``); empty when it
    /// kept up. Said first, before any figure about the backend.
    package var generatorWindows: [GeneratorWindow] = []

    /// Computes the report.
    /// - Parameters:
    ///   - polls: poll attempts, in any order; polls of one code are taken in `sent_at` order
    ///     (ties keep the given order).
    ///   - statusEvents: `status` events of the same window, or `nil` if the event log was not read.
    ///   - requests: requests other than polls of the same window, in any order, or `nil` if the
    ///     request log was not read.
    ///   - devices: the stored devices, or `nil` if they were not read.
    ///   - logins: logins of the same window, or `nil` if the login log was not read.
    ///   - generatedAtMs: the time to stamp the report with.
    ///   - sinceMs: the window start the logs were read from, if any.
    ///   - outcomeKinds: poll outcomes always listed (with zero counts); others that occur are added.
    ///   - stageKinds: request stages always listed; others that occur are added.
    ///   - requestOutcomeKinds: request outcomes always listed; others that occur are added.
    package init(
        polls: [PollRecord],
        statusEvents: [StatusEventRecord]?,
        requests: [RequestRecord]? = nil,
        devices deviceRecords: [DeviceRecord]? = nil,
        logins: [LoginRecord]? = nil,
        generatedAtMs: Int64,
        sinceMs: Int64? = nil,
        outcomeKinds: [PollOutcome] = SoakReport.outcomeKinds,
        stageKinds: [RequestStage] = SoakReport.stageKinds,
        requestOutcomeKinds: [RequestOutcome] = SoakReport.requestOutcomeKinds
    ) {
        self.generatedAtMs = generatedAtMs
        self.sinceMs = sinceMs
        eventsLoaded = statusEvents != nil
        requestsLoaded = requests != nil
        self.logins = logins.map(LoginFigures.init)

        let events = StatusEventTally(statusEvents ?? [])
        let allRequests = requests ?? []
        hasOAuthDevices = allRequests.contains { $0.endpoint.hasPrefix(Self.oauthEndpointPrefix) }
        let logs = DeviceLogs(polls: polls, requests: allRequests, deviceRecords: deviceRecords ?? [], eventDevices: events.devices)
        var assembly = ReportAssembly(
            kinds: ReportAssembly.Kinds(outcomes: outcomeKinds, stages: stageKinds, requestOutcomes: requestOutcomeKinds),
            eventsLoaded: statusEvents != nil
        )
        for name in logs.names {
            assembly.add(device: name, polls: logs.polls(of: name), requests: logs.requests(of: name), record: logs.records[name], events: events)
        }
        self.requests = assembly.fleetRequests.finish()
        self.onboarding = assembly.onboarding
        self.failedOnboardings = assembly.failedOnboardings

        var fleetFigures = assembly.fleet.finish()
        if statusEvents != nil {
            fleetFigures.expiryEvents = events.expiryEvents.values.reduce(0, +)
            fleetFigures.failureEvents = events.failureEvents.values.reduce(0, +)
        }
        self.fleet = fleetFigures
        var devices = assembly.devices
        let (trouble, troubleByFleet) = Self.computeTrouble(
            polls: polls,
            requests: allRequests,
            devices: &devices,
            fleetOf: assembly.fleetOf,
            stageKinds: stageKinds
        )
        self.trouble = trouble
        self.devices = devices
        self.codes = assembly.codes

        var series = ReportSeries()
        series.achievedIntervals = assembly.fleet.achieved
        series.plannedIntervals = assembly.fleet.planned
        series.lateness = polls.map { LatenessPoint(sentMs: $0.sentEpochMs, latenessMs: $0.sentEpochMs - $0.plannedEpochMs) }
        // The store returns polls in send order already; only sort (stably) when they are not.
        if !zip(series.lateness, series.lateness.dropFirst()).allSatisfy({ $0.sentMs <= $1.sentMs }) {
            series.lateness = series.lateness.enumerated()
                .sorted { ($0.element.sentMs, $0.offset) < ($1.element.sentMs, $1.offset) }
                .map(\.element)
        }
        self.series = series
        generatorWindows = Self.generatorWindows(lateness: series.lateness, bucketMs: trouble.bucketMs)
        fleets = assembly.fleetReports(devices: devices, polls: polls, series: series, trouble: troubleByFleet)
    }

    /// The lateness points of one fleet's polls, in send order.
    static func lateness(of polls: [PollRecord], in fleet: String, fleetOf: [String: String]) -> [LatenessPoint] {
        polls.enumerated().filter { (fleetOf[$0.element.device] ?? noFleetName) == fleet }
            .sorted { ($0.element.sentEpochMs, $0.offset) < ($1.element.sentEpochMs, $1.offset) }
            .map { LatenessPoint(sentMs: $0.element.sentEpochMs, latenessMs: $0.element.sentEpochMs - $0.element.plannedEpochMs) }
    }
}
