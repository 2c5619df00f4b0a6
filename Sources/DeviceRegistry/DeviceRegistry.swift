import DeviceEvents
import DeviceFleet
import Logging
import RegcodeEngine
import RegcodeStore
import Synchronization

/// What waits until a device's recorded steps are stored: the event pipeline (``EventPipeline/flushed(device:)``).
package protocol DeviceStepBarrier: Sendable {
    /// Returns once every step `device` recorded before the call is stored.
    func flushed(device: String) async
}

extension EventPipeline: DeviceStepBarrier {}

/// The owner of the device lifecycle: the catalog of configured fleets, the client-address pools, the devices added
/// over the socket and the start-up state.
///
/// A device's fleet entry and its store row change together in one place (``change(_:)``): the device leaves the
/// fleet, its queued steps are stored, its row is written, it joins the fleet again, and its live figures follow.
/// Start-up, ramps, reloads and the control calls all go through it.
package actor DeviceRegistry {
    package typealias Spec = Fleet.DeviceSpec

    let fleet: PartitionedFleet
    let store: RegcodeStore
    let barrier: any DeviceStepBarrier
    let liveStats: LiveStats
    let logger: Logger
    /// The shard the process started with: a reload keeps the slice.
    let shard: Shard?
    private let catalogState: Mutex<DeviceCatalog>
    /// The fleet of each device added over the socket (configured devices' fleets follow from their names).
    private let addedFleets = Mutex<[String: String]>([:])
    /// Set once every configured device that does not ramp exists: until then the control calls answer "starting".
    package nonisolated let devicesUp = SharedValue(false)
    /// The devices' client addresses (`bind`, `forwarded-for`); stored devices' addresses are reserved at start-up.
    var addressPools: ClientAddressPools
    /// Devices a change is under way for: a second change of one waits for none, it is refused.
    var changing: Set<String> = []
    /// Devices held back by their fleet's `ramp`, started by ``ramp()``.
    var ramps: [String: (ramp: Duration, specs: [Spec])] = [:]

    /// - Parameters:
    ///   - catalog: the configured fleets with their secrets.
    ///   - shard: the slice of the configured devices this process runs.
    ///   - barrier: what stores the fleet's steps (the event pipeline).
    package init(
        catalog: DeviceCatalog,
        shard: Shard?,
        fleet: PartitionedFleet,
        store: RegcodeStore,
        barrier: any DeviceStepBarrier,
        liveStats: LiveStats,
        logger: Logger
    ) {
        self.catalogState = Mutex(catalog)
        self.shard = shard
        self.fleet = fleet
        self.store = store
        self.barrier = barrier
        self.liveStats = liveStats
        self.logger = logger
        var pools = ClientAddressPools(shard: shard)
        pools.configure(catalog)
        self.addressPools = pools
    }

    /// The fleets as last (re)loaded.
    package nonisolated var catalog: DeviceCatalog { catalogState.withLock { $0 } }

    func replaceCatalog(_ catalog: DeviceCatalog) {
        catalogState.withLock { $0 = catalog }
        addressPools.configure(catalog)
    }

    /// The fleet a device belongs to: by its name for configured devices, as recorded for devices added over the socket.
    package nonisolated func fleetName(of device: String) -> String? {
        catalog.fleet(forDevice: device)?.name ?? addedFleets.withLock { $0[device] }
    }

    nonisolated func setAddedFleet(_ fleet: String?, of device: String) {
        addedFleets.withLock { $0[device] = fleet }
    }

    nonisolated func addedFleet(of device: String) -> String? {
        addedFleets.withLock { $0[device] }
    }

    /// Whether `address` is handed out (to a device, or reserved for a stored one) in `range`.
    package func isAddressTaken(_ address: String, range: String) -> Bool {
        addressPools.isTaken(address, range: range)
    }

    /// The cycle plan of a device's fleet: the one it was added to, else the one its name belongs to.
    nonisolated func cycle(of device: StoredDevice) -> CyclePlan? {
        let catalog = self.catalog
        return catalog.fleet(named: device.fleet ?? "")?.cycle ?? catalog.fleet(forDevice: device.name)?.cycle
    }

    /// `device` with its client address when its fleet's mode uses one (`bind`, `forwarded-for`): its stored one when
    /// it is of the fleet's addresses, else (a configured device) the one at its ordinal among the devices sharing
    /// those addresses, else the next free one. A `host` device keeps what it has: nothing reads it.
    func addressed(_ device: StoredDevice) throws(DeviceRegistryError) -> StoredDevice {
        let catalog = self.catalog
        let fleet = catalog.fleet(forDevice: device.name) ?? device.fleet.flatMap { catalog.fleet(named: $0) }
        guard let range = fleet?.clientAddress.addresses else { return device }
        if let address = device.clientAddress, addressPools.contains(address, range: range) { return device }
        var device = device
        let ordinal = device.addedAtRuntime ? nil : catalog.ordinal(ofDevice: device.name) { $0.clientAddress.addresses == range }
        guard let address = addressPools.take(range: range, ordinal: ordinal) else {
            throw .noFreeAddress(device: device.name, range: range)
        }
        device.clientAddress = address
        return device
    }

    /// Settings and cycle of a stored device added over the socket, with its fleet's secrets restored.
    nonisolated func runtimeSettingsAndCycle(_ device: StoredDevice) -> (DeviceSettings, CyclePlan?) {
        let catalog = self.catalog
        let template = device.fleet.flatMap { catalog.fleet(named: $0) } ?? catalog.fleets.first
        var settings = device.settings
        let secrets = template.flatMap { catalog.secrets[$0.name] } ?? FleetSecrets(softwareStatement: catalog.embeddedStatement)
        settings.softwareStatement = secrets.softwareStatement
        settings.signingKeys = secrets.signingKeys
        return (settings, template?.cycle)
    }

    /// The devices the configuration lists that this process runs, one at a time (start-up does not hold them all).
    nonisolated func wantedDevices(_ catalog: DeviceCatalog) -> some Sequence<WantedDevice> {
        let shard = self.shard
        return catalog.fleets.lazy.flatMap { fleet in
            fleet.deviceNames(in: shard).lazy.map { name in
                WantedDevice(
                    name: name,
                    settings: catalog.settings(for: name, fleet: fleet),
                    scenario: fleet.scenario,
                    fleet: fleet.name,
                    cycle: fleet.cycle
                )
            }
        }
    }
}
