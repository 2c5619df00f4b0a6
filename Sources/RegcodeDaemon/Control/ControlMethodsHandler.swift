import ControlRPC
import DeviceRegistry
import Foundation
import OAuthDeviceGrant
import RegcodeEngine
import RegcodeSupport

/// The daemon's answers on the control socket and the HTTP listener: every call goes through
/// ``ControlMethods/table``, which names the method, checks its parameters and answers it. AccessEnabler calls keep
/// their names and take `device`; the callbacks they cause arrive as `event` notifications.
struct ControlMethodsHandler: ControlHandler {
    /// The devices (through their registry alone), the event log and the status sources.
    let context: ControlContext

    /// The answer to a call that needs the devices before they exist: retry shortly.
    static let starting = RPCError(
        code: 1004,
        message: "starting: the configured devices are being brought up; retry shortly",
        data: ["reason": "starting", "retryable": true]
    )

    func handle(method: String, params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> JSONValue {
        let params = try RPCParams(params)
        // `subscribe` streams: only a transport that can stream (the socket's) starts it, through `subscribe`.
        guard let entry = ControlMethods.table.method(named: method), case .call(let answer) = entry.handler else {
            throw .methodNotFound(method)
        }
        try entry.check(params)
        try checkStarted(entry)
        do throws(RPCError) {
            return try await answer(self, params)
        } catch let error where error.isStorageUnavailable {
            // Said here once for every method: how storage fares now, so a caller can tell a passing lock from a full disk.
            var data = error.data?.objectValue ?? [:]
            data["storage"] = await context.storageStatus()
            throw RPCError(code: error.code, message: error.message, data: .object(data))
        }
    }

    func subscribe(params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> Subscription {
        let params = try RPCParams(params)
        guard let entry = ControlMethods.table.method(named: "subscribe"), case .subscription(let subscribe) = entry.handler else {
            throw .methodNotFound("subscribe")
        }
        try entry.check(params)
        try checkStarted(entry)
        return try await subscribe(self, params)
    }

    /// Before the devices exist "unknown device" would be a lie; say why and that it passes.
    private func checkStarted(_ method: ControlMethod) throws(RPCError) {
        if !context.devices.devicesUp.value, !method.answeredWhileStarting { throw Self.starting }
    }

    // MARK: Devices

    func devicesList() async throws(RPCError) -> JSONValue {
        let views: [DeviceView]
        do {
            views = try await context.devices.summaries()
        } catch {
            throw Self.rpcError(error)
        }
        return [
            "devices": .array(views.map(Self.summaryJSON))
        ]
    }

    static func summaryJSON(_ view: DeviceView) -> JSONValue {
        let (summary, snapshot) = (view.summary, view.snapshot)
        let code = snapshot?.code
        return [
            "device": .string(view.name),
            "fleet": summary?.fleet.map(JSONValue.string) ?? .null,
            "lastOutcome": view.lastOutcome?.jsonValue ?? .null,
            "state": .string((snapshot?.phase ?? summary?.state ?? .new).rawValue),
            "code": code.map { .string($0.code) } ?? .null,
            "expires": code.map { .int($0.expiresEpochMs) } ?? .null,
            "polls": .int(Int64(code == nil ? 0 : summary?.pollsForCode ?? 0)),
            "lastHttpStatus": summary?.lastHTTPStatus.map { .int(Int64($0)) } ?? .null,
            "lastPoll": summary?.lastPollEpochMs.map { .int($0) } ?? .null,
            "mvpd": snapshot?.selectedMVPD.map(JSONValue.string) ?? .null,
            // Where the code is entered when the device names the page itself (an OAuth device's verification_uri).
            "verificationUri": snapshot?.oauth?.code.map { .string($0.verificationURI) } ?? .null,
        ]
    }

    func deviceDetail(_ name: String) async throws(RPCError) -> JSONValue {
        let found: DeviceDetail
        do {
            found = try await context.devices.detail(name)
        } catch {
            throw Self.rpcError(error)
        }
        let (deviceID, settings, snapshot) = (found.deviceID, found.settings, found.snapshot)
        var detail = Self.summaryJSON(found.view).objectValue ?? [:]
        detail["deviceId"] = deviceID.map(JSONValue.string) ?? .null
        detail["requestor"] = .string(settings.requestor)
        detail["profile"] = .string(settings.profile.rawValue)
        detail["persona"] = .string(settings.persona.rawValue)
        detail["protocol"] = .string(settings.deviceProtocol.rawValue)
        if let oauth = settings.oauth {
            // The client as configured (never its secret) and where the login stands; never a token.
            detail["oauth"] = .object([
                "provider": .string(oauth.provider.rawValue), "issuer": oauth.issuer.map(JSONValue.string) ?? .null,
                "clientId": .string(oauth.clientID),
                "endpoints": .object((snapshot.oauth?.discovered ?? [:]).reduce(into: [:]) { $0[$1.key.rawValue] = .string($1.value) }),
                "code": snapshot.oauth?.code.map { code in
                    .object([
                        "userCode": .string(code.userCode), "verificationUri": .string(code.verificationURI),
                        "expires": .int(code.expiresEpochMs), "intervalMs": .int(code.intervalMs),
                    ])
                } ?? .null,
                "tokens": snapshot.oauth?.tokens.map { tokens in
                    .object([
                        "scope": tokens.scope.map(JSONValue.string) ?? .null,
                        "accessTokenExpires": tokens.accessExpiresEpochMs.map(JSONValue.int) ?? .null,
                        "refreshable": .bool(tokens.refreshToken != nil),
                    ])
                } ?? .null,
            ])
        }
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

    func addDevice(_ params: RPCParams) async throws(RPCError) -> JSONValue {
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
        if let persona = try params.optionalString("persona") {
            guard let value = DevicePersona(rawValue: persona) else {
                throw .invalidParams("'persona' must be one of \(DevicePersona.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard value.rules.launchCheck == false || (new.profile ?? .v2) == .v2 else {
                throw .invalidParams("the rest-v2 persona speaks REST API v2 only")
            }
            new.persona = value
        }
        if let deviceProtocol = try params.optionalString("protocol") {
            guard let value = DeviceProtocol(rawValue: deviceProtocol) else {
                throw .invalidParams(
                    "'protocol' must be one of \(DeviceProtocol.allCases.map(\.rawValue).joined(separator: ", "))",
                    data: ["member": "protocol"]
                )
            }
            new.deviceProtocol = value
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
            try await context.devices.add(new)
        } catch {
            throw Self.rpcError(error)
        }
        return try await deviceDetail(name)
    }

    func removeDevice(_ name: String) async throws(RPCError) -> JSONValue {
        do {
            try await context.devices.remove(name)
        } catch {
            throw Self.rpcError(error)
        }
        return ["device": .string(name), "removed": true]
    }

    /// Forgets everything the device learned (credentials, tokens, code, profile) but keeps its
    /// identity, then starts its scenario again.
    func resetDevice(_ name: String) async throws(RPCError) -> JSONValue {
        do {
            try await context.devices.reset(name)
        } catch {
            throw Self.rpcError(error)
        }
        return ["device": .string(name), "reset": true]
    }

    // MARK: Helpers

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
        case .stopping: .unavailable("the daemon is stopping")
        case .held(let reason): .unavailable("the daemon takes no new work until storage recovers: \(reason)")
        case .callsWaiting(let device, let pending):
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
        case .store(let reason): .internalError("database: \(reason)")
        case .storageUnavailable(let reason): .storageUnavailable(reason)
        case .inconsistent(let reason): .internalError(reason)
        }
    }
}
