import RegcodeRecords

// How the trouble figures are computed from the logs: every poll and request counted by stage, by
// time bucket, by fleet and by device; where the devices without a code stopped; the trouble windows.

extension SoakReport {
    /// Computes the trouble figures, per device, per fleet and fleet-wide. `fleetOf` maps every
    /// device name the report lists to its fleet.
    static func computeTrouble(
        polls: [PollRecord],
        requests: [RequestRecord],
        devices: inout [DeviceReport],
        fleetOf: [String: String],
        stageKinds: [RequestStage]
    ) -> (Trouble, [String: TroubleFigures]) {
        let items = requests.map(TroubleItem.init) + polls.map(TroubleItem.init)
        var tally = TroubleTally(times: items.map(\.sentMs), stageOrder: stageKinds + [.poll])
        for item in items { tally.add(item, fleet: fleetOf[item.device] ?? noFleetName) }
        tally.orderStages()
        tally.addDevices(&devices, requests: requests, fleetOf: fleetOf)
        return (Trouble(figures: tally.all, bucketMs: tally.bucketMs, windows: tally.windows()), tally.byFleet)
    }
}

/// One request or poll as the trouble figures count it: who, which stage, when, and how it went.
struct TroubleItem {
    var device: String
    var stage: RequestStage
    var sentMs: Int64
    /// Answered 429.
    var throttled: Bool
    /// Answered 5xx.
    var serverError: Bool
    /// An error outcome, a 429 or a 5xx.
    var error: Bool

    init(_ request: RequestRecord) {
        device = request.device
        stage = request.stage
        sentMs = request.sentEpochMs
        throttled = request.outcome == .throttled || request.httpStatus == 429
        serverError = request.outcome == .serverError || (500...599).contains(request.httpStatus ?? 0)
        error = SoakReport.errorRequestOutcomes.contains(request.outcome) || throttled || serverError
    }

    init(_ poll: PollRecord) {
        device = poll.device
        stage = .poll
        sentMs = poll.sentEpochMs
        throttled = poll.outcome == .throttled || poll.httpStatus == 429
        serverError = poll.outcome == .serverError || (500...599).contains(poll.httpStatus ?? 0)
        error = SoakReport.errorPollOutcomes.contains(poll.outcome) || throttled || serverError
    }
}

/// The trouble figures while they are counted: fleet-wide, per fleet and per device, with the errors of
/// each time bucket by stage and by fleet (what a trouble window was made of).
struct TroubleTally {
    /// A device without a code, grouped by the stage and status it stopped at.
    typealias Group = (key: String, stage: RequestStage?, status: String?, devices: [String])

    let bucketMs: Int64
    let origin: Int64
    let emptyTimeline: [TimeBucket]
    let stageOrder: [RequestStage]
    var all = TroubleFigures()
    var byFleet: [String: TroubleFigures] = [:]
    var stagesAll: [RequestStage: StageTrouble] = [:]
    var stagesByFleet: [String: [RequestStage: StageTrouble]] = [:]
    var deviceTrouble: [String: DeviceTrouble] = [:]
    var stageErrorsByBucket: [Int: [RequestStage: Int]] = [:]
    var fleetErrorsByBucket: [Int: [String: Int]] = [:]

    /// Buckets spanning `times` (the send times of every poll and request).
    init(times: [Int64], stageOrder: [RequestStage]) {
        let first = times.min() ?? 0
        let last = times.max() ?? 0
        let bucketMs = SoakReport.bucketWidth(spanMs: last - first)
        let origin = UTCText.floorDiv(first, bucketMs) * bucketMs
        let bucketCount = times.isEmpty ? 0 : Int((last - origin) / bucketMs) + 1
        self.bucketMs = bucketMs
        self.origin = origin
        self.stageOrder = stageOrder
        emptyTimeline = (0..<bucketCount).map { TimeBucket(startMs: origin + Int64($0) * bucketMs) }
        all.timeline = emptyTimeline
    }

    func bucketIndex(_ ms: Int64) -> Int { Int((ms - origin) / bucketMs) }

    mutating func add(_ item: TroubleItem, fleet fleetName: String) {
        var figures = byFleet[fleetName] ?? TroubleFigures()
        if figures.timeline.isEmpty { figures.timeline = emptyTimeline }
        func add(_ stage: inout StageTrouble) {
            stage.requests += 1
            if item.error { stage.failed += 1 }
            if item.throttled { stage.throttled += 1 }
            if item.serverError { stage.serverErrors += 1 }
        }
        add(&stagesAll[item.stage, default: StageTrouble(stage: item.stage)])
        add(&stagesByFleet[fleetName, default: [:]][item.stage, default: StageTrouble(stage: item.stage)])
        func count(_ bucket: inout TimeBucket) {
            bucket.requests += 1
            if item.throttled {
                bucket.throttled += 1
            } else if item.serverError {
                bucket.serverErrors += 1
            } else if item.error {
                bucket.otherErrors += 1
            }
        }
        let index = bucketIndex(item.sentMs)
        if item.error {
            stageErrorsByBucket[index, default: [:]][item.stage, default: 0] += 1
            fleetErrorsByBucket[index, default: [:]][fleetName, default: 0] += 1
        }
        count(&all.timeline[index])
        count(&figures.timeline[index])
        byFleet[fleetName] = figures
        var device = deviceTrouble[item.device] ?? DeviceTrouble()
        if item.throttled { device.throttled += 1 }
        if item.serverError { device.serverErrors += 1 }
        if item.error { device.errors += 1 }
        deviceTrouble[item.device] = device
    }

    /// Lists the stages with requests: known ones in order, then `poll`, then others alphabetically.
    mutating func orderStages() {
        func ordered(_ stages: [RequestStage: StageTrouble]) -> [StageTrouble] {
            let known = stageOrder.compactMap { stages[$0] }
            let others = stages.keys.filter { !stageOrder.contains($0) }.sorted { $0.rawValue < $1.rawValue }.compactMap { stages[$0] }
            return known + others
        }
        all.stages = ordered(stagesAll)
        for (name, stages) in stagesByFleet { byFleet[name]?.stages = ordered(stages) }
    }

    /// Each device's trouble: code or not, where it stopped, its last error; the devices without a code
    /// grouped by where they stopped, per fleet and fleet-wide.
    mutating func addDevices(_ devices: inout [DeviceReport], requests: [RequestRecord], fleetOf: [String: String]) {
        var lastRequest: [String: RequestRecord] = [:]
        var lastFailed: [String: RequestRecord] = [:]
        for request in requests {
            // The latest by send time; of equal times, the later logged.
            if lastRequest[request.device].map({ $0.sentEpochMs <= request.sentEpochMs }) ?? true { lastRequest[request.device] = request }
            if request.outcome != .ok, lastFailed[request.device].map({ $0.sentEpochMs <= request.sentEpochMs }) ?? true {
                lastFailed[request.device] = request
            }
        }
        var stopGroups: [String: [Group]] = [:]
        var allGroups: [Group] = []
        for index in devices.indices {
            let name = devices[index].device
            let fleetName = fleetOf[name] ?? noFleetName
            var trouble = deviceTrouble[name] ?? DeviceTrouble()
            trouble.lastError = lastFailed[name].map(SoakReport.describe)
            trouble.lastErrorShort = lastFailed[name].map(Self.shortDescription)
            var figures = byFleet[fleetName] ?? TroubleFigures()
            if figures.timeline.isEmpty { figures.timeline = emptyTimeline }
            figures.devices += 1
            all.devices += 1
            if let failed = devices[index].failedOnboarding {
                trouble.gotCode = false
                if let request = lastRequest[name] {
                    trouble.stoppedAt = request.stage
                    trouble.stopStatus = Self.stopStatus(of: request)
                } else {
                    trouble.stopStatus = failed.lastFailure?.errorId
                }
                figures.neverGotCode.append(name)
                all.neverGotCode.append(name)
                Self.note(&stopGroups[fleetName, default: []], trouble.stoppedAt, trouble.stopStatus, name)
                Self.note(&allGroups, trouble.stoppedAt, trouble.stopStatus, name)
            } else {
                figures.devicesWithCode += 1
                all.devicesWithCode += 1
            }
            byFleet[fleetName] = figures
            devices[index].trouble = trouble
        }
        all.stops = Self.stops(allGroups)
        for (name, groups) in stopGroups { byFleet[name]?.stops = Self.stops(groups) }
    }

    /// `registration 429 (error code)`: the outcome only without a status.
    static func shortDescription(_ request: RequestRecord) -> String {
        var text = "\(request.stage.rawValue) \(request.httpStatus.map(String.init) ?? request.outcome.rawValue)"
        if let code = request.errorCode { text += " (\(code))" }
        return text
    }

    /// Where a device's last request left it: `ok`, else the HTTP status, else the outcome.
    static func stopStatus(of request: RequestRecord) -> String {
        request.outcome == .ok ? RequestOutcome.ok.rawValue : (request.httpStatus.map(String.init) ?? request.outcome.rawValue)
    }

    static func note(_ groups: inout [Group], _ stage: RequestStage?, _ status: String?, _ device: String) {
        let key = "\(stage?.rawValue ?? "")\u{0}\(status ?? "")"
        if let index = groups.firstIndex(where: { $0.key == key }) {
            groups[index].devices.append(device)
        } else {
            groups.append((key, stage, status, [device]))
        }
    }

    /// The groups, largest first (of equal size, the first noted first).
    static func stops(_ groups: [Group]) -> [StopGroup] {
        groups.enumerated().sorted { ($1.element.devices.count, $0.offset) < ($0.element.devices.count, $1.offset) }
            .map { StopGroup(stage: $0.element.stage, status: $0.element.status, devices: $0.element.devices) }
    }

    /// The trouble windows of the fleet-wide timeline, each with its worst stage and its fleets.
    func windows() -> [TroubleWindow] {
        SoakReport.troubleWindows(
            timeline: all.timeline,
            bucketMs: bucketMs,
            stageErrors: { start, end in
                var counts: [RequestStage: Int] = [:]
                for index in bucketIndex(start)..<bucketIndex(end) { counts.merge(stageErrorsByBucket[index] ?? [:], uniquingKeysWith: +) }
                return counts.max { ($0.value, $1.key.rawValue) < ($1.value, $0.key.rawValue) }?.key
            },
            fleetErrors: { start, end in
                var counts: [String: Int] = [:]
                for index in bucketIndex(start)..<bucketIndex(end) { counts.merge(fleetErrorsByBucket[index] ?? [:], uniquingKeysWith: +) }
                return counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map(\.key)
            }
        )
    }
}
