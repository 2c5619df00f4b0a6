import DeviceFleet
import RegcodeEngine
import RegcodeStore

/// One device's part in a change of fleet and store.
struct DeviceChange: Sendable {
    enum Row: Sendable {
        /// The row stays as it is.
        case keep
        case save(StoredDevice)
        case remove
        /// The row as the device's queued steps left it, made into the new row and what starts: read only once they
        /// are stored.
        case rebuild(@Sendable (StoredDevice) throws(DeviceRegistryError) -> (StoredDevice, Fleet.DeviceSpec))
    }

    var name: String
    /// Whether the device may be running: it leaves the fleet and its queued steps are stored first.
    var stop = true
    var row: Row = .keep
    /// What joins the fleet once the row is written; nil: the device stays out.
    var start: Fleet.DeviceSpec?
    /// Whether the device's live figures (last outcome, fleet) are forgotten: it is gone or starts afresh.
    var forgetStats = false
    /// The row before the change (nil: none), written back if the device cannot join the fleet.
    var previous: StoredDevice?
    /// The address this change handed out (given back if the device cannot join the fleet).
    var takenAddress: String?
    /// The fleet of a device added over the socket (recorded before it starts, so its first step is counted there).
    var addedFleet: String?
}

extension DeviceRegistry {
    /// The only code that changes fleet and store together: devices leave the fleet, their already-queued steps are
    /// stored (so none lands on the new row), rows are written, devices join the fleet, live figures follow. A device
    /// that cannot join rolls the batch back: no fleet entry of it stays, its row is as before, its address is free.
    func change(_ changes: [DeviceChange]) async throws(DeviceRegistryError) {
        if let busy = changes.first(where: { changing.contains($0.name) }) { throw .busy(busy.name) }
        for change in changes { changing.insert(change.name) }
        defer { for change in changes { changing.remove(change.name) } }
        for change in changes where change.stop { _ = await fleet.remove(change.name) }
        for change in changes where change.stop { await barrier.flushed(device: change.name) }
        let changes = try await rebuilt(changes)
        do {
            try await write(changes)
        } catch {
            throw .storeFailure(error)
        }
        for change in changes where change.addedFleet != nil { setAddedFleet(change.addedFleet, of: change.name) }
        let specs = changes.compactMap(\.start)
        do {
            if !specs.isEmpty { try await fleet.add(contentsOf: specs) }
        } catch {
            await rollBack(changes, after: error)
            throw DeviceRegistryError(error)
        }
        for change in changes where change.forgetStats { liveStats.forget(change.name) }
    }

    /// The changes with every ``DeviceChange/Row/rebuild(_:)`` made from the stored row (read now, after the barrier).
    private func rebuilt(_ changes: [DeviceChange]) async throws(DeviceRegistryError) -> [DeviceChange] {
        var changes = changes
        for index in changes.indices {
            guard case .rebuild(let build) = changes[index].row else { continue }
            // The device's own rows only: a reset of one device among tens of thousands reads one device.
            let stored: StoredDevice?
            do {
                stored = try await store.loadDevice(named: changes[index].name)
            } catch {
                throw .storeFailure(error)
            }
            guard let row = stored else {
                throw .inconsistent("device '\(changes[index].name)' has no stored record")
            }
            let (record, spec) = try build(row)
            changes[index].row = .save(record)
            changes[index].start = spec
            changes[index].previous = row
        }
        return changes
    }

    /// Writes rows in one transaction where it can: removals, then saves.
    private func write(_ changes: [DeviceChange]) async throws {
        var saves: [StoredDevice] = []
        for change in changes {
            switch change.row {
            case .keep, .rebuild: continue
            case .save(let device): saves.append(device)
            case .remove: _ = try await store.removeDevice(named: change.name)
            }
        }
        if saves.count == 1 {
            try await store.saveDevice(saves[0])
        } else if !saves.isEmpty {
            try await store.saveDevices(saves)
        }
    }

    /// Undoes what ``change(_:)`` did before the fleet refused: the batch's devices leave the fleet, rows written are
    /// restored, addresses handed out are free again, figures of devices that never ran are forgotten.
    private func rollBack(_ changes: [DeviceChange], after error: FleetError) async {
        // A device of that name the fleet already ran is not this change's to remove.
        var duplicate: String?
        if case .duplicateDevice(let name) = error { duplicate = name }
        for change in changes where change.start != nil && change.name != duplicate { _ = await fleet.remove(change.name) }
        for change in changes {
            guard case .save = change.row else { continue }
            do {
                if let previous = change.previous {
                    try await store.saveDevice(previous)
                } else {
                    _ = try await store.removeDevice(named: change.name)
                }
            } catch {
                logger.error("could not restore a device's row", metadata: ["device": "\(change.name)", "error": "\(error)"])
            }
            if let address = change.takenAddress { addressPools.release(address) }
            if change.addedFleet != nil, change.previous == nil { setAddedFleet(nil, of: change.name) }
            if change.previous == nil { liveStats.forget(change.name) }
        }
        logger.warning("devices could not join the fleet; change rolled back", metadata: ["devices": "\(changes.count)"])
    }
}
