import RegcodeRecords

// How a report is put together from the logs: the `status` events counted per device, each device's
// polls and requests in send order, and the device, fleet and fleet-wide figures collected device by device.

/// The `status` events of a window, counted per device.
struct StatusEventTally {
    /// `REG410` events per device, and the codes they name.
    var expiryEvents: [String: Int] = [:]
    var expiredByEvent: [String: Set<String>] = [:]
    /// `REG500` events per device.
    var failureEvents: [String: Int] = [:]
    /// `REGCODE` events per device: the codes it was shown.
    var codesShown: [String: Int] = [:]
    /// Failure events (see ``StatusEventRecord/isFailure``) per device: how many, and the latest by time
    /// (of equal times, the later given).
    var failures: [String: (count: Int, last: StatusEventRecord, at: (Int64, Int))] = [:]
    /// Every device an event names.
    var devices: Set<String> = []

    init(_ events: [StatusEventRecord]) {
        for (index, event) in events.enumerated() {
            devices.insert(event.device)
            if event.isFailure {
                let at = (event.timeMs, index)
                if let known = failures[event.device] {
                    let later = at > known.at
                    failures[event.device] = (known.count + 1, later ? event : known.last, later ? at : known.at)
                } else {
                    failures[event.device] = (1, event, at)
                }
            }
            switch event.errorId {
            case StatusEventRecord.expired:
                expiryEvents[event.device, default: 0] += 1
                if let code = event.code { expiredByEvent[event.device, default: []].insert(code) }
            case StatusEventRecord.failed:
                failureEvents[event.device, default: 0] += 1
            case StatusEventRecord.registrationCode:
                codesShown[event.device, default: 0] += 1
            default:
                continue
            }
        }
    }
}

/// The polls and requests of the window by device, and every device name the logs and the devices table hold.
struct DeviceLogs {
    private let allPolls: [PollRecord]
    private let allRequests: [RequestRecord]
    private var pollsByDevice: [String: [Int]] = [:]
    private var requestsByDevice: [String: [Int]] = [:]
    /// The stored devices by name.
    private(set) var records: [String: DeviceRecord] = [:]
    /// Every device, in natural name order.
    private(set) var names: [String] = []

    init(polls: [PollRecord], requests: [RequestRecord], deviceRecords: [DeviceRecord], eventDevices: Set<String>) {
        allPolls = polls
        allRequests = requests
        for (index, poll) in polls.enumerated() { pollsByDevice[poll.device, default: []].append(index) }
        for (index, request) in requests.enumerated() { requestsByDevice[request.device, default: []].append(index) }
        for record in deviceRecords { records[record.device] = record }
        names = Set(pollsByDevice.keys).union(eventDevices).union(requestsByDevice.keys).union(records.keys)
            .sorted(by: NaturalOrder.less)
    }

    /// The device's polls in send order (ties keep the given order).
    func polls(of device: String) -> [PollRecord] {
        (pollsByDevice[device] ?? []).sorted { (allPolls[$0].sentEpochMs, $0) < (allPolls[$1].sentEpochMs, $1) }.map { allPolls[$0] }
    }

    /// The device's requests in send order (ties keep the given order).
    func requests(of device: String) -> [RequestRecord] {
        (requestsByDevice[device] ?? []).sorted { (allRequests[$0].sentEpochMs, $0) < (allRequests[$1].sentEpochMs, $1) }.map { allRequests[$0] }
    }
}

/// Collects the figures device by device: each device's report, and the sums per fleet and fleet-wide.
struct ReportAssembly {
    /// The outcomes and stages always listed (with zero counts).
    struct Kinds {
        var outcomes: [PollOutcome]
        var stages: [RequestStage]
        var requestOutcomes: [RequestOutcome]
    }

    let kinds: Kinds
    let eventsLoaded: Bool
    var fleet: FigureAccumulator
    var fleetRequests: RequestAccumulator
    var onboarding = OnboardingFigures()
    var devices: [DeviceReport] = []
    var fleetOf: [String: String] = [:]
    var fleetAccumulators: [String: FigureAccumulator] = [:]
    var fleetRequestAccumulators: [String: RequestAccumulator] = [:]
    var codes: [CodeSummary] = []
    var failedOnboardings: [FailedOnboarding] = []

    init(kinds: Kinds, eventsLoaded: Bool) {
        self.kinds = kinds
        self.eventsLoaded = eventsLoaded
        fleet = FigureAccumulator(outcomeKinds: kinds.outcomes)
        fleetRequests = RequestAccumulator(stageKinds: kinds.stages, outcomeKinds: kinds.requestOutcomes)
        if eventsLoaded {
            onboarding.codesIssued = 0
            onboarding.newCodes = 0
        }
    }

    /// Adds one device: `polls` and `requests` are its own, in send order.
    mutating func add(device name: String, polls: [PollRecord], requests: [RequestRecord], record: DeviceRecord?, events: StatusEventTally) {
        var device = FigureAccumulator(outcomeKinds: kinds.outcomes)
        var figures = addCodes(of: polls, to: &device, expiredByEvent: events.expiredByEvent[name] ?? [])
        if eventsLoaded {
            figures.expiryEvents = events.expiryEvents[name] ?? 0
            figures.failureEvents = events.failureEvents[name] ?? 0
        }
        var requestFigures = RequestAccumulator(stageKinds: kinds.stages, outcomeKinds: kinds.requestOutcomes)
        for request in requests { requestFigures.add(request) }

        var deviceOnboarding = OnboardingFigures()
        deviceOnboarding.registrations = requests.filter { $0.stage == .registration && $0.outcome == .ok }.count
        deviceOnboarding.reRegistrations = max(deviceOnboarding.registrations - 1, 0)
        if eventsLoaded {
            let shown = events.codesShown[name] ?? 0
            deviceOnboarding.codesIssued = shown
            deviceOnboarding.newCodes = max(shown - 1, 0)
        }
        let gotCode =
            !polls.isEmpty || (events.codesShown[name] ?? 0) > 0 || (record?.codesIssued ?? 0) > 0
            || requests.contains { $0.stage == .session && $0.outcome == .ok }
        var failed: FailedOnboarding?
        if gotCode {
            deviceOnboarding.devicesWithCode = 1
        } else {
            deviceOnboarding.failedOnboardings = 1
            let failure = FailedOnboarding(
                device: name,
                state: record?.state,
                requests: requests.count,
                failureEvents: events.failures[name]?.count ?? 0,
                lastFailure: events.failures[name]?.last,
                lastFailedRequest: requests.last { $0.outcome != .ok }
            )
            failed = failure
            failedOnboardings.append(failure)
        }
        onboarding.merge(deviceOnboarding)

        var report = DeviceReport(
            device: name,
            figures: figures,
            state: record?.state,
            requests: requestFigures.finish(),
            onboarding: deviceOnboarding,
            failedOnboarding: failed
        )
        report.fleet = record?.fleet ?? noFleetName
        merge(report, device, requestFigures)
    }

    /// Adds the device's codes (its polls grouped by code, codes in order of first poll) and summarises its polls.
    private mutating func addCodes(of polls: [PollRecord], to device: inout FigureAccumulator, expiredByEvent: Set<String>) -> PollFigures {
        var codeOrder: [String] = []
        var pollsByCode: [String: [PollRecord]] = [:]
        for poll in polls {
            if pollsByCode[poll.code] == nil { codeOrder.append(poll.code) }
            pollsByCode[poll.code, default: []].append(poll)
        }
        for (position, code) in codeOrder.enumerated() {
            let summary = device.addCode(
                pollsByCode[code] ?? [],
                isLatestOfDevice: position == codeOrder.count - 1,
                expiredByEvent: expiredByEvent.contains(code)
            )
            codes.append(summary)
        }
        return device.finish()
    }

    /// Lists the device's report and adds its figures to its fleet's and to the fleet-wide ones.
    private mutating func merge(_ report: DeviceReport, _ device: FigureAccumulator, _ requestFigures: RequestAccumulator) {
        let fleetName = report.fleet
        fleetOf[report.device] = fleetName
        devices.append(report)
        fleet.merge(device)
        fleetRequests.merge(requestFigures)
        fleetAccumulators[fleetName, default: FigureAccumulator(outcomeKinds: kinds.outcomes)].merge(device)
        fleetRequestAccumulators[fleetName, default: RequestAccumulator(stageKinds: kinds.stages, outcomeKinds: kinds.requestOutcomes)]
            .merge(requestFigures)
    }

    /// Every figure per fleet, in natural name order with ``noFleetName`` last.
    func fleetReports(
        devices: [DeviceReport],
        polls: [PollRecord],
        series: ReportSeries,
        trouble: [String: TroubleFigures]
    )
        -> [FleetReport]
    {
        let fleetNames = Set(fleetOf.values).sorted { a, b in
            (a == noFleetName) != (b == noFleetName) ? b == noFleetName : NaturalOrder.less(a, b)
        }
        return fleetNames.map { name in
            var accumulator = fleetAccumulators[name] ?? FigureAccumulator(outcomeKinds: kinds.outcomes)
            var figures = accumulator.finish()
            if eventsLoaded {
                let members = devices.filter { $0.fleet == name }
                figures.expiryEvents = members.reduce(0) { $0 + ($1.figures.expiryEvents ?? 0) }
                figures.failureEvents = members.reduce(0) { $0 + ($1.figures.failureEvents ?? 0) }
            }
            var fleetSeries = ReportSeries()
            fleetSeries.achievedIntervals = accumulator.achieved
            fleetSeries.plannedIntervals = accumulator.planned
            fleetSeries.lateness = series.lateness.isEmpty ? [] : SoakReport.lateness(of: polls, in: name, fleetOf: fleetOf)
            let requests = fleetRequestAccumulators[name] ?? RequestAccumulator(stageKinds: kinds.stages, outcomeKinds: kinds.requestOutcomes)
            return FleetReport(
                fleet: name,
                figures: figures,
                requests: requests.finish(),
                trouble: trouble[name] ?? TroubleFigures(),
                series: fleetSeries
            )
        }
    }
}
