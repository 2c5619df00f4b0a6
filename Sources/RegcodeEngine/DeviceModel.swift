import Foundation
import OAuthDeviceGrant
import RegcodeRecords
import RegcodeSupport
import Synchronization

/// The device-info object sent (base64 JSON) as `X-Device-Info`; defaults describe an Apple TV.
package struct DeviceInfo: Sendable, Hashable, Codable {
    package var primaryHardwareType: String = "SetTopBox"
    package var model: String = "AppleTV"
    package var version: String = "11,1"
    package var manufacturer: String = "Apple"
    package var vendor: String = "Apple"
    package var osName: String = "tvOS"
    package var osFamily: String = "tvOS"
    package var osVendor: String = "Apple"
    package var osVersion: String = "17.0"
    package var displayWidth: Int = 1920
    package var displayHeight: Int = 1080
    package var applicationId: String? = nil
    /// The network connection type, which Adobe's `X-Device-Info` page marks required ("e.g. WiFi, LAN, 3G, 4G,
    /// 5G"); nil: the persona's (``PersonaRules/connectionType``).
    package var connectionType: String? = nil

    package init() {}

    /// The header value: base64 of the compact JSON (keys sorted, so it is stable).
    ///
    /// Remembered per distinct value: every device of a fleet has the same one, and encoding it for each of
    /// 50,000 devices was a visible part of a restart.
    package var headerValue: String {
        if let known = Self.headerValues.withLock({ $0[self] }) { return known }
        let value = Data(JSONWriter.text(jsonValue).utf8).base64EncodedString()
        Self.headerValues.withLock { values in
            // Bounded: a lab that gives every device its own info only loses the reuse.
            if values.count >= 256 { values.removeAll() }
            values[self] = value
        }
        return value
    }

    private static let headerValues = Mutex<[DeviceInfo: String]>([:])

    /// The object the header carries: the `Codable` form's members (an absent `applicationId` is left out).
    package var jsonValue: JSONValue {
        var object: [String: JSONValue] = [
            "primaryHardwareType": .string(primaryHardwareType), "model": .string(model), "version": .string(version),
            "manufacturer": .string(manufacturer), "vendor": .string(vendor), "osName": .string(osName), "osFamily": .string(osFamily),
            "osVendor": .string(osVendor), "osVersion": .string(osVersion), "displayWidth": .int(Int64(displayWidth)),
            "displayHeight": .int(Int64(displayHeight)),
        ]
        if let applicationId { object["applicationId"] = .string(applicationId) }
        if let connectionType { object["connectionType"] = .string(connectionType) }
        return .object(object)
    }
}

/// The static description of one emulated device: what it is and how it behaves.
package struct DeviceSettings: Sendable, Equatable, Codable {
    /// The device's name in the fleet (e.g. `stb-1`).
    package var name: String
    /// What kind of app the device is; its differences are ``PersonaRules``.
    package var persona: DevicePersona = .accessEnabler
    package var profile: APIProfile = .v2
    /// Requestor id / service provider.
    package var requestor: String
    /// An MVPD chosen without showing the picker.
    package var presetMVPD: String? = nil
    /// Which provider the `login` and `cycle` scenarios pick in the picker (regular or TempPass).
    package var loginProvider: LoginProvider = .regular
    /// Promotional TempPass: the e-mail address the app collected, sent as `AP-TempPass-Identity` on calls for
    /// a TempPass MVPD; nil: basic TempPass (no header).
    package var tempPassEmail: String? = nil
    /// DCR software statement (a secret: never logged or emitted).
    package var softwareStatement: String? = nil
    /// v1 HMAC keys (secret: never logged or emitted).
    package var signingKeys: SigningKeys? = nil
    package var polling: PollPolicy = PollPolicy()
    package var deviceInfo: DeviceInfo = DeviceInfo()
    /// Domain, redirect URLs and User-Agent.
    package var identity: ClientIdentity = ClientIdentity()
    /// The device's stable client address (stored in its own column, not with the settings), used as
    /// ``clientAddressMode`` says.
    package var clientAddress: String? = nil
    /// How the backend sees the device's address: the host's, ``clientAddress`` bound as the connections' source,
    /// or ``clientAddress`` in `X-Forwarded-For`.
    package var clientAddressMode: ClientAddressMode = .host
    /// Single sign-on: the device's platform and storage rules; nil for a plain one-app device.
    package var sso: DeviceSSOSettings? = nil
    /// The apps the device hosts (first = the one calls without `app` reach); empty: one plain app.
    package var apps: [AppConfiguration] = []
    /// REST v2 single sign-on identities the device's calls present; nil: none.
    package var ssoIdentity: SSOIdentitySettings? = nil
    /// Apple single sign-on: the TV Provider account and permissions the device starts with (the lab
    /// changes them at run time); nil: the device has no TV Provider emulation.
    package var tvProvider: TVProviderDevice? = nil
    /// How the device's calls are carried; nil: the daemon's common pool.
    package var connections: ConnectionModel? = nil
    /// An OAuth device's client and endpoints (``DeviceProtocol/oauthDevice``); nil: an Adobe Pass device.
    package var oauth: OAuthDeviceConfiguration? = nil

    package init(name: String, requestor: String) {
        self.name = name
        self.requestor = requestor
    }

    private enum CodingKeys: String, CodingKey {
        case name, profile, requestor, presetMVPD, softwareStatement, signingKeys, polling, deviceInfo, identity, sso, apps, ssoIdentity, tvProvider
        case connections, clientAddressMode, loginProvider, tempPassEmail, persona, oauth
    }

    /// Reads stored settings; keys an older version did not write keep their defaults.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try c.decode(String.self, forKey: .name), requestor: try c.decode(String.self, forKey: .requestor))
        profile = try c.decodeIfPresent(APIProfile.self, forKey: .profile) ?? profile
        presetMVPD = try c.decodeIfPresent(String.self, forKey: .presetMVPD)
        softwareStatement = try c.decodeIfPresent(String.self, forKey: .softwareStatement)
        signingKeys = try c.decodeIfPresent(SigningKeys.self, forKey: .signingKeys)
        polling = try c.decodeIfPresent(PollPolicy.self, forKey: .polling) ?? polling
        deviceInfo = try c.decodeIfPresent(DeviceInfo.self, forKey: .deviceInfo) ?? deviceInfo
        identity = try c.decodeIfPresent(ClientIdentity.self, forKey: .identity) ?? identity
        sso = try c.decodeIfPresent(DeviceSSOSettings.self, forKey: .sso)
        apps = try c.decodeIfPresent([AppConfiguration].self, forKey: .apps) ?? []
        ssoIdentity = try c.decodeIfPresent(SSOIdentitySettings.self, forKey: .ssoIdentity)
        tvProvider = try c.decodeIfPresent(TVProviderDevice.self, forKey: .tvProvider)
        connections = try c.decodeIfPresent(ConnectionModel.self, forKey: .connections)
        clientAddressMode = try c.decodeIfPresent(ClientAddressMode.self, forKey: .clientAddressMode) ?? clientAddressMode
        loginProvider = try c.decodeIfPresent(LoginProvider.self, forKey: .loginProvider) ?? .regular
        tempPassEmail = try c.decodeIfPresent(String.self, forKey: .tempPassEmail)
        persona = try c.decodeIfPresent(DevicePersona.self, forKey: .persona) ?? .accessEnabler
        oauth = try c.decodeIfPresent(OAuthDeviceConfiguration.self, forKey: .oauth)
    }

    /// How the device logs in: an OAuth device when it has ``oauth`` settings, else Adobe Pass.
    package var deviceProtocol: DeviceProtocol { oauth == nil ? .adobePass : .oauthDevice }

    /// The `X-Forwarded-For` value of the device's calls: only in the `forwarded-for` mode.
    package var forwardedFor: String? {
        clientAddressMode == .forwardedFor ? clientAddress : nil
    }

    /// The local address the device's connections are bound to: only in the `bind` mode.
    package var sourceAddress: String? {
        clientAddressMode == .bind ? clientAddress : nil
    }

    /// Whether protected calls carry a DCR bearer token (always on v2; on v1 when a statement is set).
    package var usesDCR: Bool {
        profile == .v2 || softwareStatement != nil
    }
}

/// A DCR access token and when it stops being valid.
package struct AccessToken: Sendable, Equatable, Codable {
    package var token: String
    package var expiresEpochMs: Int64
    package init(token: String, expiresEpochMs: Int64) {
        self.token = token
        self.expiresEpochMs = expiresEpochMs
    }
}

/// Where a device is in its life; shown by `devices` and stored with the snapshot. The engine
/// computes it from its state (``DeviceEngine/phase``); the snapshot carries it only to storage.
package enum DevicePhase: String, Sendable, Codable, CaseIterable {
    case new
    case configuring
    case ready
    case selectingProvider = "selecting-provider"
    case requestingCode = "requesting-code"
    case polling
    case authenticated
    case failed
}

/// The durable state of a device: what survives a restart.
package struct DeviceSnapshot: Sendable, Equatable, Codable {
    /// The phase as the engine last computed it (written by the engine only, when it persists).
    package var phase: DevicePhase = .new
    package var credentials: ClientCredentials? = nil
    package var accessToken: AccessToken? = nil
    /// The requestor's MVPD list; `nil` until `setRequestor` succeeded.
    package var mvpds: [MVPD]? = nil
    package var selectedMVPD: String? = nil
    /// The code being polled, while a login is pending.
    package var code: IssuedCode? = nil
    package var profile: AuthProfile? = nil
    /// `setOptions` values (visitor id, device-info override).
    package var options: [String: String] = [:]
    /// Codes renewed automatically in the current login.
    package var renewals: Int = 0
    /// An OAuth device's own state (endpoints, the code it polls, its tokens); nil for Adobe devices.
    package var oauth: OAuthDeviceSnapshot? = nil

    package init() {}
}

/// The device's timers; at most one of each kind is armed.
package enum DeviceTimer: String, Sendable, Hashable, CaseIterable {
    case poll
    case codeExpiry
    /// A request that failed transiently is sent again (the request slot waits for it).
    case retry
    /// An OAuth device refreshes its access token before it expires.
    case refresh
    /// An OAuth device uses its access token again (userinfo, introspection).
    case exercise
}

/// Identifies one request a device has in flight.
package typealias RequestID = UInt64

/// What the engine asks its I/O layer to do.
package enum DeviceAction: Sendable {
    /// Perform this backend call and feed the result back with the same id.
    case send(RequestID, BackendRequest, RequestContext)
    /// Store the request about to be sent before it goes out (it comes just before its ``send(_:_:_:)``).
    case recordSent(RequestInFlight)
    /// Arm (or re-arm) a timer.
    case schedule(DeviceTimer, at: DeviceInstant)
    case cancel(DeviceTimer)
    /// Deliver a callback to subscribers (after it is stored).
    case emit(DeviceEvent)
    /// Store the device's durable state.
    case persist(DeviceSnapshot)
    /// Append to the poll log.
    case recordPoll(PollAttempt)
    /// Append to the request log (every backend request that is not a poll).
    case recordRequest(RequestAttempt)
    /// A code stopped being polled, and why (stored with the state that no longer holds it).
    case endCode(CodeEnding)
    /// Store the device's shared token storage as it now is (single sign-on; emitted by ``SSOHost``
    /// users, never by the engine itself).
    case storeTokens([SharedToken])
}

/// The AccessEnabler calls an app (or a scenario, or a socket client) makes on a device.
package enum DeviceCommand: Sendable, Equatable {
    /// `setRequestor`; `signingKeys` are those of the legacy tvOS `setRequestor(…secret:publicKey:)`. They
    /// stay in the engine's memory (never in the snapshot) and replace the configured keys; `nil` keeps
    /// whatever keys the device already has.
    case setRequestor(signingKeys: SigningKeys?)
    case setOptions([String: String])
    case checkAuthentication
    case getAuthentication(mvpd: String?)
    case setSelectedProvider(String?)
    case getSelectedProvider
    case checkAuthorization(resource: String)
    /// Like `checkAuthorization`, but an unauthenticated device logs in first.
    case getAuthorization(resource: String)
    case checkPreauthorizedResources([String])
    /// The `getMetadata:` key dictionary: `opCode` (0–3), `resource_id`, `user_metadata_name`.
    case getMetadata(JSONValue)
    case logout
    /// The user's answer in the Apple TV Provider picker (`presentTvProviderDialog`).
    case selectTVProvider(TVProviderChoice)

    /// The calls by name: the one list of them (the daemon's control methods for them are named after it).
    package enum Name: String, CaseIterable, Sendable {
        case setRequestor, setOptions, checkAuthentication, getAuthentication, setSelectedProvider, getSelectedProvider
        case checkAuthorization, getAuthorization, checkPreauthorizedResources, getMetadata, logout, selectTVProvider
    }

    package var name: Name {
        switch self {
        case .setRequestor: .setRequestor
        case .setOptions: .setOptions
        case .checkAuthentication: .checkAuthentication
        case .getAuthentication: .getAuthentication
        case .setSelectedProvider: .setSelectedProvider
        case .getSelectedProvider: .getSelectedProvider
        case .checkAuthorization: .checkAuthorization
        case .getAuthorization: .getAuthorization
        case .checkPreauthorizedResources: .checkPreauthorizedResources
        case .getMetadata: .getMetadata
        case .logout: .logout
        case .selectTVProvider: .selectTVProvider
        }
    }
}
