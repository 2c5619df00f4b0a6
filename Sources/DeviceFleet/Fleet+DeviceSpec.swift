import RegcodeEngine

extension Fleet {
    /// A device to add: its settings, stable id, stored state and scenario.
    public struct DeviceSpec: Sendable {
        public var settings: DeviceSettings
        public var deviceID: String
        public var snapshot: DeviceSnapshot
        public var scenario: Scenario
        public var seed: UInt64
        /// Timing of the `cycle` scenario (defaults when nil).
        public var cycle: CyclePlan?

        public init(
            settings: DeviceSettings,
            deviceID: String,
            snapshot: DeviceSnapshot = DeviceSnapshot(),
            scenario: Scenario = .login,
            seed: UInt64,
            cycle: CyclePlan? = nil
        ) {
            self.settings = settings
            self.deviceID = deviceID
            self.snapshot = snapshot
            self.scenario = scenario
            self.seed = seed
            self.cycle = cycle
        }
    }
}
