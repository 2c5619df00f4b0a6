import DeviceFleet
import RegcodeEngine
import RegcodeStore
import ServiceLifecycle

/// What start-up brought up.
package struct StartReport: Sendable {
    /// A device resuming a code that has not expired, for the operator's terminal.
    package struct ResumedCode: Sendable {
        package var device: String
        package var code: IssuedCode
        /// Where the code is entered, when the device names it (an OAuth device's `verification_uri`).
        package var verificationURI: String?
    }

    /// Devices running now.
    package var started = 0
    /// Devices their fleet's `ramp` holds back (``DeviceRegistry/ramp()`` starts them).
    package var ramping = 0
    package var resumedCodes: [ResumedCode] = []
    /// OAuth devices resuming a grant (their tokens), for the operator's terminal: signed in, no new code.
    package var resumedGrants: [String] = []
    /// Requests the previous run left in flight, now logged as `interrupted`.
    package var interrupted = RegcodeStore.InterruptedRequests()
}

extension DeviceRegistry {
    /// Start-up: every configured and stored device is reconciled (stored identity, state and seed kept; devices no
    /// longer configured forgotten unless added over the socket), rows written in one transaction, and every device
    /// not held back by a ramp started; the registry then counts as up.
    /// - Parameter nowEpochMs: when given, codes still valid at that time are listed in the report.
    package func start(nowEpochMs: Int64? = nil) async throws(DeviceRegistryError) -> StartReport {
        let stored: [StoredDevice]
        let interrupted: RegcodeStore.InterruptedRequests
        do {
            // Before any device sends again: what is left in flight is the previous run's.
            interrupted = try await store.recordInterruptedRequests()
            stored = try await store.loadDevices()
        } catch {
            throw .storeFailure(error)
        }
        if interrupted.total > 0 {
            logger.notice(
                "requests in flight when the daemon last stopped got no answer; logged as interrupted",
                metadata: [
                    "polls": "\(interrupted.polls)", "requests": "\(interrupted.requests)",
                    "stages": "\(interrupted.byStage.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: ","))",
                ]
            )
        }
        addressPools.reserve(stored.compactMap(\.clientAddress))
        for device in stored where device.addedAtRuntime { setAddedFleet(device.fleet, of: device.name) }
        var position: [String: Int] = [:]
        position.reserveCapacity(stored.count)
        for (index, device) in stored.enumerated() where position[device.name] == nil { position[device.name] = index }
        var changes: [DeviceChange] = []
        changes.reserveCapacity(stored.count)
        var report = StartReport()
        report.interrupted = interrupted
        let catalog = self.catalog
        do {
            try DeviceReconciler().plan(wanted: wantedDevices(catalog), stored: stored, running: [:], runtimeSettings: runtimeSettingsAndCycle) {
                plan in
                switch plan {
                case .start(let planned, let settings, let cycle, let save):
                    let device = try addressed(planned)
                    var change = DeviceChange(name: device.name, stop: false)
                    // Only a new device or a newly given address is written: rewriting every stored device made a
                    // restart with 10,000 devices take seconds.
                    if save || device.clientAddress != planned.clientAddress {
                        change.row = .save(device)
                        change.previous = position[device.name].map { stored[$0] }
                        if device.clientAddress != planned.clientAddress { change.takenAddress = device.clientAddress }
                    }
                    let spec: Spec = device.spec(settings: settings, cycle: cycle)
                    if let nowEpochMs, let code = spec.snapshot.code, code.expiresEpochMs > nowEpochMs {
                        report.resumedCodes.append(
                            .init(device: device.name, code: code, verificationURI: spec.snapshot.oauth?.code?.verificationURI)
                        )
                    }
                    if nowEpochMs != nil, spec.snapshot.oauth?.tokens != nil { report.resumedGrants.append(device.name) }
                    // A device resuming a pending code is not held back: its code is already ticking.
                    if spec.snapshot.code == nil, let fleet = catalog.fleet(forDevice: device.name), let ramp = fleet.ramp, ramp > .zero {
                        ramps[fleet.name, default: (ramp, [])].specs.append(spec)
                        report.ramping += 1
                    } else {
                        change.start = spec
                        report.started += 1
                    }
                    changes.append(change)
                case .restart(let device, _, _):
                    throw DeviceRegistryError.inconsistent("nothing runs at start-up, yet '\(device.name)' was to restart")
                case .keep:
                    break
                case .remove(let name):
                    changes.append(DeviceChange(name: name, stop: false, row: .remove, forgetStats: true))
                    logger.info("device no longer configured; removed", metadata: ["device": "\(name)"])
                }
            }
        } catch let error as DeviceRegistryError {
            throw error
        } catch {
            throw .inconsistent("\(error)")
        }
        try await change(changes)
        devicesUp.value = true
        return report
    }

    /// Starts the devices held back at start-up evenly over their fleet's `ramp`, fleets side by side; returns when
    /// all have started or the process stops.
    package func ramp() async {
        let ramps = self.ramps
        self.ramps = [:]
        await withDiscardingTaskGroup { group in
            for (name, plan) in ramps {
                group.addTask { await self.ramp(fleet: name, over: plan.ramp, plan.specs) }
            }
        }
    }

    private func ramp(fleet name: String, over ramp: Duration, _ specs: [Spec]) async {
        let step = ramp / max(1, specs.count)
        logger.info("ramping up", metadata: ["fleet": "\(name)", "devices": "\(specs.count)", "over": "\(ramp)"])
        for spec in specs {
            do {
                // Written at start-up already: only the fleet entry is new.
                try await change([DeviceChange(name: spec.settings.name, stop: false, start: spec)])
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: step) }
            } catch {
                return
            }
        }
    }
}
