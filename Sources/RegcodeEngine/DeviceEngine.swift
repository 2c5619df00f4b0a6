import AccessEnablerAPI
import Foundation
import RegcodeSupport

/// The sans-IO state machine of one emulated AccessEnabler device.
///
/// Inputs are commands, backend results and timer fires; outputs are ``DeviceAction``s. It never
/// sleeps or touches a socket, so one scheduler can drive thousands of them and tests can drive
/// one with a manual clock. At most one backend request is in flight per device: later calls
/// wait in a queue, which is also what keeps polling single-flight.
///
/// Where things are decided: onboarding (`setRequestor`) in `DeviceEngine+Onboarding`, the login
/// (provider, code request) in `DeviceEngine+Login`, the poll loop and each poll's outcome in
/// `DeviceEngine+Polling`, the request queue and DCR in `DeviceEngine+RequestPipeline`, and how a
/// failure becomes an AccessEnabler status id in `FailureMapping`.
package struct DeviceEngine: Sendable {
    package typealias Action = DeviceAction

    package let settings: DeviceSettings
    /// The persona's rules (``DevicePersona/rules``): where the two kinds of app differ.
    let rules: PersonaRules
    package let deviceID: String
    /// `X-Device-Info` of `settings.deviceInfo`, encoded once: every call sends it and `settings` never changes.
    let deviceInfoHeader: String
    /// The durable state; its `phase` is refreshed from ``phase`` whenever the engine persists.
    package internal(set) var snapshot: DeviceSnapshot

    let clock: any DeviceClock
    var rng: SplitMix64

    /// Whether the device has its MVPD list (`setRequestor`).
    var setup: Setup
    /// Where the login is.
    var login: LoginState = .idle
    /// Ids of logins, so answers and timers of an earlier login are recognised and ignored.
    var loginIDs: UInt64 = 0
    /// The single-flight request queue.
    var pipeline = RequestPipeline()

    // Entitlements (memory only: never in the snapshot).
    /// Keys given by the legacy `setRequestor(…secret:publicKey:)`; they replace `settings.signingKeys`.
    var runtimeSigningKeys: SigningKeys?
    /// Resources of `getAuthorization` calls waiting for the login they started.
    var pendingAuthorizations: [String] = []
    /// End of validity of the last granted authorization per resource (`getMetadata` opcode 1).
    var authorizationExpiry: [String: Int64] = [:]
    /// Apple single sign-on: the device's TV Provider account and this app's permission, as the fleet
    /// last reported them; nil when the app does not emulate it (``tvProviderChanged(_:)``).
    package internal(set) var tvProvider: TVProviderState?
    /// The Apple single sign-on rules (INFERRED choices are fields there).
    var appleRules = AppleSSORules()
    /// When the MVPD list was last loaded for the picker (a persona that caches it; memory only).
    var configurationLoadedAt: DeviceInstant?

    package init(settings: DeviceSettings, deviceID: String, snapshot: DeviceSnapshot = DeviceSnapshot(), clock: any DeviceClock, seed: UInt64) {
        self.settings = settings
        self.rules = settings.persona.rules
        self.deviceID = deviceID
        var deviceInfo = settings.deviceInfo
        deviceInfo.connectionType = deviceInfo.connectionType ?? rules.connectionType
        self.deviceInfoHeader = deviceInfo.headerValue
        self.snapshot = snapshot
        self.clock = clock
        self.rng = SplitMix64(seed: seed)
        if snapshot.mvpds == nil {
            setup = .awaitingRequestor(pending: [], failed: snapshot.phase == .failed)
        } else {
            setup = .configured
        }
    }

    // MARK: State

    /// Where the device is in its life, computed from its state.
    package var phase: DevicePhase {
        if case .configuring = setup { return .configuring }
        switch login {
        case .awaitingProvider, .awaitingTVProvider: return .selectingProvider
        case .requestingCode, .exchanging: return .requestingCode
        case .polling: return .polling
        case .idle: break
        }
        if snapshot.profile != nil { return .authenticated }
        if case .awaitingRequestor(_, let failed) = setup { return failed ? .failed : .new }
        return .ready
    }

    /// Whether the device holds an unexpired authentication profile.
    package var isAuthenticated: Bool {
        guard let profile = snapshot.profile else { return false }
        return profile.expiresEpochMs > clock.epochMillisecondsNow
    }

    /// Whether a poll loop is running.
    package var isPolling: Bool {
        if case .polling = login { return true }
        return false
    }

    // MARK: Inputs

    /// Picks up where a stored snapshot left off: an unexpired code keeps being polled (no new
    /// code, no re-registration); an expired one is reported as expired.
    package mutating func resume() -> [Action] {
        withPersistence { engine in
            if engine.snapshot.profile != nil && !engine.isAuthenticated {
                engine.snapshot.profile = nil
            }
            guard let code = engine.snapshot.code else { return [] }
            // A restarted fleet must not hit the backend with every device's poll at once:
            // the first poll after a restart lands somewhere within one interval.
            let spread = engine.settings.polling.interval * Double.random(in: 0..<1, using: &engine.rng)
            return engine.startPolling(code, login: engine.nextLoginID(), announce: false, firstDelay: spread)
        }
    }

    /// Applies an AccessEnabler call.
    package mutating func handle(_ command: DeviceCommand) -> [Action] {
        withPersistence { engine in engine.apply(command) }
    }

    /// Feeds back the result of a `.send` action.
    package mutating func handle(
        response: Result<BackendResponse, BackendFailure>,
        for id: RequestID,
        timing: RequestTiming
    ) -> [Action] {
        withPersistence { engine in
            guard let (purpose, attempt) = engine.pipeline.complete(id) else { return [] }
            var actions = engine.complete(purpose, attempt: attempt, with: response, timing: timing)
            actions += engine.pump()
            return actions
        }
    }

    /// Reports that a timer armed with `.schedule` reached its deadline.
    package mutating func timerFired(_ timer: DeviceTimer) -> [Action] {
        withPersistence { engine in
            var actions: [Action]
            switch timer {
            case .poll: actions = engine.pollTimerFired()
            case .codeExpiry: actions = engine.codeExpiryFired()
            case .retry: actions = engine.retryTimerFired()
            // An OAuth device's timers: never armed by this engine.
            case .refresh, .exercise: actions = []
            }
            actions += engine.pump()
            return actions
        }
    }

    /// Stops every loop and timer (device removed or daemon stopping); nothing is emitted.
    package mutating func shutdown() -> [Action] {
        login = .idle
        pipeline.dropQueued()
        if case .awaitingRequestor(_, let failed) = setup { setup = .awaitingRequestor(pending: [], failed: failed) }
        if case .configuring = setup { setup = .configuring(pending: []) }
        pendingAuthorizations.removeAll()
        return DeviceTimer.allCases.map { .cancel($0) }
    }

    mutating func nextLoginID() -> UInt64 {
        loginIDs += 1
        return loginIDs
    }

    /// Runs `body`, refreshes the snapshot's phase, then prepends a `.persist` when the durable
    /// state changed, so storage sees the state before the events that announce it.
    mutating func withPersistence(_ body: (inout Self) -> [Action]) -> [Action] {
        let before = snapshot
        var actions = keepingVocabulary(body(&self))
        snapshot.phase = phase
        if snapshot != before {
            actions.insert(.persist(snapshot), at: 0)
        }
        return actions
    }
}
