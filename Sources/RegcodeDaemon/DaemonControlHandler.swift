import AccessEnablerAPI
import ControlSocket
import DeviceFleet
import DeviceRegistry
import Foundation
import KeepAliveHTTP
import NIOPosix
import RegcodeEngine
import RegcodeStore
import RegcodeSupport

/// The daemon's answers on the control socket: AccessEnabler calls keep their names and take
/// `device`; the callbacks they cause arrive as `event` notifications.
struct DaemonControlHandler: ControlHandler {
    let daemon: Daemon

    /// Methods answered while the daemon is still bringing its devices up.
    static let availableWhileStarting: Set<String> = ["daemon.status", "subscribe", "rpc.discover"]

    /// The answer to a call that needs the devices before they exist: retry shortly.
    static let starting = RPCError(
        code: 1004,
        message: "starting: the configured devices are being brought up; retry shortly",
        data: ["reason": "starting", "retryable": true]
    )

    func handle(method: String, params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> JSONValue {
        let params = try RPCParams(params)
        // One table names every method and its parameters (and is what rpc.discover describes).
        guard let entry = RPCMethodCatalog.method(method), method != "subscribe" else { throw .methodNotFound(method) }
        try params.allowOnly(Set(entry.parameters.map(\.name)))
        // Before the devices exist "unknown device" would be a lie; say why and that it passes.
        if !daemon.devicesUp.value, !Self.availableWhileStarting.contains(method) { throw Self.starting }
        if entry.accessEnabler {
            return try await accessEnabler(method, params)
        }
        switch method {
        case "devices.list":
            return try await devicesList()
        case "devices.get":
            return try await deviceDetail(try params.string("device"))
        case "devices.add":
            return try await addDevice(params)
        case "devices.remove":
            return try await removeDevice(try params.string("device"))
        case "devices.reset":
            return try await resetDevice(try params.string("device"))
        case "apps.list":
            return try await appsList(try params.string("device"))
        case "sso.explain":
            return try await explain(try params.string("device"), app: try params.optionalString("app"))
        case "vsa.status":
            return try await tvProviderStatus(try params.string("device"))
        case "vsa.signIn":
            return try await tvProviderSignIn(params)
        case "vsa.signOut":
            return try await tvProviderUpdate(try params.string("device")) { $0.account = .signedOut }
        case "vsa.setAccess":
            return try await tvProviderSetAccess(params)
        case "vsa.injectFault":
            return try await tvProviderInjectFault(params)
        case "vsa.pick":
            return try await tvProviderPick(params)
        case "apps.reinstall":
            return try await reinstallApp(try params.string("device"), app: try params.string("app"))
        case "storage.list":
            return try await storageList(try params.string("device"), domain: try params.optionalString("domain"))
        case "daemon.status":
            return try await status()
        case "devices.polls":
            return try await devicesPolls(params)
        case "fleets.stats":
            return await fleetsStats()
        case "simulator.approve":
            return try await simulatorApprove(params)
        case "rpc.discover":
            return RPCMethodCatalog.openRPC(version: RegcodedVersion.current)
        default:
            throw .methodNotFound(method)
        }
    }

    // MARK: AccessEnabler

    private func accessEnabler(_ method: String, _ params: RPCParams) async throws(RPCError) -> JSONValue {
        let device = try params.string("device")
        let app = try params.optionalString("app")
        let settings: DeviceSettings
        do {
            settings = try await daemon.fleet.settings(of: device, app: app)
        } catch {
            throw Self.rpcError(error)
        }
        let command: DeviceCommand
        switch method {
        case "setRequestor":
            if let requestor = try params.optionalString("requestor"), requestor != settings.requestor {
                throw .invalidParams(
                    "device '\(device)' is configured for requestor '\(settings.requestor)'",
                    data: ["requestor": .string(settings.requestor)]
                )
            }
            command = .setRequestor(signingKeys: try Self.signingKeys(params))
        case "setOptions":
            guard let options = try params.stringMap("options") else { throw .invalidParams("missing 'options'") }
            let known: Set<String> = ["visitorID", "device_info", "applicationProfile", "handleSVC"]
            if let unknown = options.keys.sorted().first(where: { !known.contains($0) }) {
                throw .invalidParams("unknown option '\(unknown)'", data: ["allowed": .array(known.sorted().map { .string($0) })])
            }
            if let info = options["device_info"], Data(base64Encoded: info) == nil {
                throw .invalidParams("'device_info' must be base64-encoded JSON")
            }
            command = .setOptions(options)
        case "checkAuthentication":
            command = .checkAuthentication
        case "getAuthentication":
            command = .getAuthentication(mvpd: try params.optionalString("mvpd"))
        case "setSelectedProvider":
            guard params.object.keys.contains("mvpd") else {
                throw .invalidParams("missing 'mvpd' (an MVPD id, or null to cancel)", data: ["member": "mvpd"])
            }
            command = .setSelectedProvider(try params.optionalString("mvpd"))
        case "getSelectedProvider":
            command = .getSelectedProvider
        case "checkAuthorization":
            command = .checkAuthorization(resource: try params.string("resource"))
        case "getAuthorization":
            command = .getAuthorization(resource: try params.string("resource"))
        case "checkPreauthorizedResources":
            guard let resources = try params.optionalStrings("resources") else {
                throw .invalidParams("missing 'resources' (an array of resource ids)", data: ["member": "resources"])
            }
            if resources.contains(where: \.isEmpty) {
                throw .invalidParams("'resources' must not contain empty ids", data: ["member": "resources"])
            }
            command = .checkPreauthorizedResources(resources)
        case "getMetadata":
            command = .getMetadata(try Self.metadataKey(params))
        case "logout":
            command = .logout
        default:
            throw .methodNotFound(method)
        }
        do {
            try await daemon.registry.send(command, to: device, app: app)
        } catch {
            throw Self.rpcError(error)
        }
        let phase = await daemon.fleet.snapshot(of: device, app: app)?.phase
        var answer: [String: JSONValue] = ["device": .string(device), "accepted": true, "state": phase.map { .string($0.rawValue) } ?? .null]
        if let app { answer["app"] = .string(app) }
        return .object(answer)
    }

    /// The legacy `setRequestor(…secret:publicKey:)` keys: both or neither. They go to the device's memory
    /// only and are never echoed, logged or stored.
    static func signingKeys(_ params: RPCParams) throws(RPCError) -> SigningKeys? {
        let secret = try params.optionalString("secret")
        let publicKey = try params.optionalString("publicKey")
        switch (secret, publicKey) {
        case (nil, nil): return nil
        case (let secret?, let publicKey?): return SigningKeys(publicKey: publicKey, secret: secret)
        default: throw .invalidParams("'secret' and 'publicKey' go together: give both or neither", data: ["members": ["secret", "publicKey"]])
        }
    }

    /// The `getMetadata:` key dictionary, from `key` or from the same members at the top level (not both).
    /// Opcodes 0–3; 1 needs `resource_id`, 3 needs `user_metadata_name`.
    static func metadataKey(_ params: RPCParams) throws(RPCError) -> JSONValue {
        let members: Set<String> = ["opCode", "resource_id", "user_metadata_name"]
        let key: RPCParams
        if let nested = params.object["key"], nested != .null {
            guard nested.objectValue != nil else { throw .invalidParams("'key' must be an object", data: ["member": "key"]) }
            if let stray = params.object.keys.sorted().first(where: members.contains) {
                throw .invalidParams("give '\(stray)' inside 'key' or at the top level, not both", data: ["member": .string(stray)])
            }
            key = try RPCParams(nested)
            try key.allowOnly(members)
        } else {
            key = try RPCParams(.object(params.object.filter { members.contains($0.key) }))
        }
        guard let opCode = try key.optionalInt("opCode") else {
            throw .invalidParams("missing 'opCode' (0 authN TTL, 1 authZ TTL, 2 device id, 3 user metadata)", data: ["member": "opCode"])
        }
        switch AccessEnabler.MetadataOpCode(rawValue: opCode) {
        case nil:
            throw .invalidParams("unknown opCode \(opCode): 0 authN TTL, 1 authZ TTL, 2 device id, 3 user metadata", data: ["member": "opCode"])
        case .authorizationTTL:
            _ = try key.string("resource_id")
        case .userMetadata:
            _ = try key.string("user_metadata_name")
        case .authenticationTTL, .deviceID:
            break
        }
        // Echoed back as given (setMetadataStatus `arguments`), so keep the caller's values.
        return .object(key.object)
    }

    // MARK: Devices

    private func devicesList() async throws(RPCError) -> JSONValue {
        let views: [DeviceView]
        do {
            views = try await daemon.registry.summaries()
        } catch {
            throw Self.rpcError(error)
        }
        return [
            "devices": .array(views.map { Self.summaryJSON(name: $0.name, summary: $0.summary, snapshot: $0.snapshot, lastOutcome: $0.lastOutcome) })
        ]
    }

    static func summaryJSON(name: String, summary: DeviceSummary?, snapshot: DeviceSnapshot?, lastOutcome: LastOutcome?) -> JSONValue {
        let code = snapshot?.code
        return [
            "device": .string(name),
            "fleet": summary?.fleet.map(JSONValue.string) ?? .null,
            "lastOutcome": lastOutcome?.jsonValue ?? .null,
            "state": .string((snapshot?.phase ?? summary?.state ?? .new).rawValue),
            "code": code.map { .string($0.code) } ?? .null,
            "expires": code.map { .int($0.expiresEpochMs) } ?? .null,
            "polls": .int(Int64(code == nil ? 0 : summary?.pollsForCode ?? 0)),
            "lastHttpStatus": summary?.lastHTTPStatus.map { .int(Int64($0)) } ?? .null,
            "lastPoll": summary?.lastPollEpochMs.map { .int($0) } ?? .null,
            "mvpd": snapshot?.selectedMVPD.map(JSONValue.string) ?? .null,
        ]
    }

    private func deviceDetail(_ name: String) async throws(RPCError) -> JSONValue {
        let found: DeviceDetail
        do {
            found = try await daemon.registry.detail(name)
        } catch {
            throw Self.rpcError(error)
        }
        let (deviceID, settings, snapshot) = (found.deviceID, found.settings, found.snapshot)
        var detail =
            Self.summaryJSON(name: name, summary: found.view.summary, snapshot: snapshot, lastOutcome: found.view.lastOutcome).objectValue ?? [:]
        detail["deviceId"] = deviceID.map(JSONValue.string) ?? .null
        detail["requestor"] = .string(settings.requestor)
        detail["profile"] = .string(settings.profile.rawValue)
        detail["presetMvpd"] = settings.presetMVPD.map(JSONValue.string) ?? .null
        detail["loginProvider"] = .string(settings.loginProvider.rawValue)
        detail["pollInterval"] = .double(settings.polling.interval.seconds)
        detail["registered"] = .bool(snapshot.credentials != nil)
        detail["accessTokenExpires"] = snapshot.accessToken.map { .int($0.expiresEpochMs) } ?? .null
        detail["authenticated"] =
            snapshot.profile.map { profile in
                [
                    "mvpd": .string(profile.mvpd), "userId": profile.userID.map(JSONValue.string) ?? .null, "expires": .int(profile.expiresEpochMs),
                    "kind": .string(profile.loginKind.rawValue),
                ]
            } ?? .null
        detail["mvpds"] = snapshot.mvpds.map { .array($0.map(\.jsonValue)) } ?? .null
        return .object(detail)
    }

    /// `login: {provider: regular|temppass, tempPassEmail}`, the login scenario's options as `devices.add` takes them.
    static func loginOptions(_ login: JSONValue) throws(RPCError) -> (LoginProvider, String?) {
        guard let object = login.objectValue else { throw .invalidParams("'login' must be an object", data: ["member": "login"]) }
        let options = RPCParams(object: object)
        try options.allowOnly(["provider", "tempPassEmail"])
        let email = try options.optionalString("tempPassEmail")
        guard let text = try options.optionalString("provider") else { return (.regular, email) }
        guard let provider = LoginProvider(rawValue: text.lowercased()) else {
            throw .invalidParams(
                "'login.provider' must be one of \(LoginProvider.allCases.map(\.rawValue).joined(separator: ", "))",
                data: ["member": "login.provider"]
            )
        }
        return (provider, email)
    }

    private func addDevice(_ params: RPCParams) async throws(RPCError) -> JSONValue {
        let name = try params.string("device")
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw .invalidParams("'device' must be letters, digits, '-', '_' or '.'")
        }
        var new = NewDevice(name: name)
        new.fleet = try params.optionalString("fleet")
        new.requestor = try params.optionalString("requestor")
        new.mvpd = try params.optionalString("mvpd")
        if let profile = try params.optionalString("profile") {
            guard let value = APIProfile(rawValue: profile) else { throw .invalidParams("'profile' must be v2 or v1") }
            new.profile = value
        }
        if let scenario = try params.optionalString("scenario") {
            guard let value = Scenario(rawValue: scenario) else {
                throw .invalidParams("'scenario' must be one of \(Scenario.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            new.scenario = value
        }
        if let login = params.object["login"], login != .null {
            new.login = try Self.loginOptions(login)
        }
        do {
            try await daemon.registry.add(new)
        } catch .noFreeAddress {
            throw .conflict("no client address left for '\(name)'", data: ["device": .string(name)])
        } catch {
            throw Self.rpcError(error)
        }
        return try await deviceDetail(name)
    }

    private func removeDevice(_ name: String) async throws(RPCError) -> JSONValue {
        do {
            try await daemon.registry.remove(name)
        } catch {
            throw Self.rpcError(error)
        }
        return ["device": .string(name), "removed": true]
    }

    /// Forgets everything the device learned (credentials, tokens, code, profile) but keeps its
    /// identity, then starts its scenario again.
    private func resetDevice(_ name: String) async throws(RPCError) -> JSONValue {
        do {
            try await daemon.registry.reset(name)
        } catch {
            throw Self.rpcError(error)
        }
        return ["device": .string(name), "reset": true]
    }

    // MARK: Daemon

    private func status() async throws(RPCError) -> JSONValue {
        var byState: [String: JSONValue] = [:]
        for (phase, count) in await daemon.fleet.phaseCounts() {
            byState[phase.rawValue] = .int(Int64(count))
        }
        let lastSeq = try await storeCall { store in try await store.lastEventSequence() }
        return [
            "version": .string(RegcodedVersion.current),
            "pid": .int(Int64(getpid())),
            "uptimeSeconds": .double(Date().timeIntervalSince(daemon.startedAt)),
            "devices": .int(Int64(await daemon.fleet.count)),
            "states": .object(byState),
            "lastSeq": .int(lastSeq),
            "subscribers": .int(Int64(daemon.broadcaster.subscriberCount)),
            "cutOffSubscribers": .int(Int64(daemon.broadcaster.cutOffCount)),
            "requestsOutstanding": .int(Int64(await daemon.fleet.requestsOutstanding)),
            "storage": Self.storageStatus(daemon.pipeline.health, holds: await daemon.fleet.holdTotals),
            "database": .string(daemon.configuration.database),
            "socket": .string(daemon.configuration.socket),
            "backend": daemon.configuration.backend.map(JSONValue.string) ?? .string("embedded simulator"),
            "activationUrl": daemon.activationURL.value.map(JSONValue.string) ?? .null,
            "starting": .bool(!daemon.devicesUp.value),
            // "K/N" when this daemon runs one slice of the fleets (--shard), null when it runs them all.
            "shard": daemon.configuration.shard.map { .string($0.description) } ?? .null,
            "transport": Self.transportStatus(daemon.transportStatus, statistics: daemon.connectionPools.statistics.counts),
        ]
    }

    /// `daemon.status`'s `transport` member: the wire, the connections it opened, and TLS trouble.
    static func transportStatus(_ status: TransportStatus, statistics: TransportStatistics.Counts) -> JSONValue {
        var failing: [String: JSONValue] = [:]
        for (fleet, failure) in status.failingFleets() {
            failing[fleet] = ["code": .string(failure.code), "reason": .string(failure.description), "fix": .string(failure.fix)]
        }
        return [
            "tls": .bool(status.usesTLS),
            "verify": .bool(!status.usesTLS || status.settings.verify),
            "warning": status.verifyWarning.map(JSONValue.string) ?? .null,
            // Devices sharing one client address under a throttling backend, with the arithmetic.
            "sharedAddressWarning": status.sharedAddressWarning.map(JSONValue.string) ?? .null,
            "httpVersion": .string(status.settings.httpVersion.rawValue),
            "connections": [
                "plainHTTP1": .int(Int64(statistics.plainHTTP1)),
                "tlsHTTP1": .int(Int64(statistics.tlsHTTP1)),
                "tlsHTTP2": .int(Int64(statistics.tlsHTTP2)),
            ],
            "handshakes": ["full": .int(Int64(statistics.fullHandshakes)), "resumed": 0, "failed": .int(Int64(statistics.failedHandshakes))],
            "failingFleets": .object(failing),
        ]
    }

    /// `daemon.status`'s `storage` member: whether records reach the database, what waits in
    /// memory, and what holds deferred.
    static func storageStatus(_ health: StorageHealth, holds: HoldTotals) -> JSONValue {
        [
            "state": .string(health.failure == nil ? (health.holding ? "catching-up" : "ok") : "failing"),
            "error": health.failure.map { .string($0.error) } ?? .null,
            "failingSince": health.failure.map { .string(ISO8601DateFormatter().string(from: $0.since)) } ?? .null,
            "backlog": .int(Int64(health.backlog)),
            "held": .bool(health.holding),
            "failedWrites": .int(Int64(health.failedWrites)),
            "holds": .int(Int64(holds.holds)),
            "deferredPolls": .int(Int64(holds.deferredPolls)),
            "deferredTimers": .int(Int64(holds.deferredTimers)),
            "deferredCalls": .int(Int64(holds.deferredCalls)),
        ]
    }

    // MARK: Subscribe

    func subscribe(params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> Subscription {
        let params = try RPCParams(params)
        try params.allowOnly(RPCMethodCatalog.parameterNames("subscribe") ?? [])
        let devices = try params.optionalStrings("devices").map(Set.init)
        let names = try params.optionalStrings("events").map(Set.init)
        let since = try params.optionalInt("since")
        if let since, since < 0 { throw .invalidParams("'since' must not be negative") }
        // Register for live events first: the replay then covers everything before, and the
        // server drops live events the replay already sent (by seq).
        let live = daemon.broadcaster.subscribe { notification in
            let event = notification.params
            if let devices, let device = event["device"]?.stringValue, !devices.contains(device) { return false }
            if let names, let name = event["name"]?.stringValue, !names.contains(name) { return false }
            return true
        }
        let lastSeq = try await storeCall { store in try await store.lastEventSequence() }
        let result: JSONValue = ["subscribed": true, "lastSeq": .int(lastSeq), "since": since.map(JSONValue.int) ?? .null]
        guard let since else {
            return Subscription(result: result, live: live)
        }
        let replay = StoredEventReplay(store: daemon.store, after: since, devices: devices, names: names)
        return Subscription(result: result, live: live, replay: replay, since: since)
    }

    // MARK: Helpers

    private func storeCall<T: Sendable>(_ body: (RegcodeStore) async throws -> T) async throws(RPCError) -> T {
        do {
            return try await body(daemon.store)
        } catch {
            throw .internalError("database: \(error)")
        }
    }

    /// The control answer to a refused change of a device.
    static func rpcError(_ error: DeviceRegistryError) -> RPCError {
        switch error {
        case .unknownDevice(let name): .unknownDevice(name)
        case .duplicateDevice(let name): .conflict("a device named '\(name)' already exists", data: ["device": .string(name)])
        case .unknownFleet(let name, let known): .invalidParams("unknown fleet '\(name)'", data: ["fleets": .array(known.map { .string($0) })])
        case .noFreeAddress(let device, _): .conflict("no client address left for '\(device)'", data: ["device": .string(device)])
        case .busy(let name): .conflict(error.description, data: ["device": .string(name)])
        case .noVendor(let name):
            .wrongState(
                "device '\(name)' hosts one plain app: it has no vendor to reinstall (configure `apps` to emulate single sign-on)",
                data: ["device": .string(name)]
            )
        case .fleet(let error): rpcError(error)
        case .store(let reason): .internalError("database: \(reason)")
        case .inconsistent(let reason): .internalError(reason)
        }
    }

    static func rpcError(_ error: any Error) -> RPCError {
        if let error = error as? DeviceRegistryError { return rpcError(error) }
        return fleetRPCError(error)
    }

    private static func fleetRPCError(_ error: any Error) -> RPCError {
        switch error as? FleetError {
        case .unknownDevice(let name): .unknownDevice(name)
        case .duplicateDevice(let name): .conflict("a device named '\(name)' already exists", data: ["device": .string(name)])
        case .stopped: .unavailable("the daemon is stopping")
        case .held(let reason): .unavailable("the daemon takes no new work until storage recovers: \(reason)")
        case .busy(let device, let pending):
            .unavailable("device '\(device)' already has \(pending) calls waiting; wait for their callbacks before sending more")
        case .noTVProvider(let device):
            .invalidParams("device '\(device)' has no TV Provider: configure `tv_provider` for its fleet", data: ["device": .string(device)])
        case .noTVProviderPicker(let device, let app):
            .conflict(
                "no TV Provider picker is open in app '\(app)' of device '\(device)': call getAuthentication first",
                data: ["device": .string(device), "app": .string(app)]
            )
        case .unknownApp(let device, let app):
            .invalidParams("device '\(device)' has no app '\(app)'", data: ["member": "app", "device": .string(device), "app": .string(app)])
        case nil: .internalError("\(error)")
        }
    }
}

/// Pages through stored events after a sequence number, for `subscribe` replays.
struct StoredEventReplay: AsyncSequence, Sendable {
    typealias Element = EventNotification
    let store: RegcodeStore
    let after: Int64
    let devices: Set<String>?
    let names: Set<String>?

    struct AsyncIterator: AsyncIteratorProtocol {
        let store: RegcodeStore
        var cursor: Int64
        let devices: Set<String>?
        let names: Set<String>?
        var page: [StoredEvent] = []
        var index = 0
        var exhausted = false

        mutating func next() async throws -> EventNotification? {
            if index == page.count {
                guard !exhausted else { return nil }
                let (store, cursor, devices, names) = (self.store, self.cursor, self.devices, self.names)
                page = try await store.events(after: cursor, devices: devices, names: names, limit: 500)
                index = 0
                if page.count < 500 { exhausted = true }
                guard !page.isEmpty else { return nil }
            }
            let event = page[index]
            index += 1
            cursor = event.seq
            // One subscriber reads a replay: its transport encodes it, as it needs.
            return EventNotification(unencoded: EventEncoding.params(event))
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(store: store, cursor: after, devices: devices, names: names)
    }
}

/// The version `daemon.status` and `rpc.discover` report.
public enum RegcodedVersion {
    public static let current = RegcodeVersion.current
}
