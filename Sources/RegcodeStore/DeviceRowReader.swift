import GRDB
import OAuthDeviceGrant
import RegcodeEngine

/// Reads the rows of `loadDevices` into devices; the JSON columns are decoded once per distinct text (the devices
/// of one fleet share their settings).
struct DeviceRowReader {
    let column: DeviceColumns
    let json: JSONColumns
    private var settingsCache = JSONColumnCache<DeviceSettings>()
    private var mvpdsCache = JSONColumnCache<[MVPD]>()
    private var optionsCache = JSONColumnCache<[String: String]>()

    init(columns: DeviceColumns, json: JSONColumns) {
        self.column = columns
        self.json = json
    }

    /// The device of one row, without its apps, tokens and TV Provider account (other tables).
    mutating func device(from row: Row) throws -> StoredDevice {
        let name: String = row[column.name]
        guard let scenario = Scenario(rawValue: row[column.scenario]) else {
            throw RegcodeStoreError.corruptRow(
                table: "devices",
                key: name,
                reason: "unknown scenario \(row[column.scenario] as String)"
            )
        }
        let snapshot = try snapshot(from: row, name: name)
        // Stored without the name (rows written before that carry it): the row's name is the one.
        var settings = try json.cachedValue(
            DeviceSettings.self,
            from: row[column.settings],
            in: &settingsCache,
            table: "devices",
            key: name
        )
        settings.name = name
        return StoredDevice(
            name: name,
            deviceID: row[column.deviceId],
            settings: settings,
            scenario: scenario,
            seed: UInt64(bitPattern: row[column.seed] as Int64),
            snapshot: snapshot,
            fleet: row[column.fleet],
            addedAtRuntime: row[column.addedAtRuntime],
            clientAddress: row[column.clientAddress]
        )
    }

    /// The device's state: the `devices` columns and its credentials, token, pending code and profile.
    private mutating func snapshot(from row: Row, name: String) throws -> DeviceSnapshot {
        guard let phase = DevicePhase(rawValue: row[column.state]) else {
            throw RegcodeStoreError.corruptRow(table: "devices", key: name, reason: "unknown state \(row[column.state] as String)")
        }
        var snapshot = DeviceSnapshot()
        snapshot.phase = phase
        snapshot.selectedMVPD = row[column.selectedMvpd]
        if let mvpds: String = row[column.mvpds] {
            snapshot.mvpds = try json.cachedValue([MVPD].self, from: mvpds, in: &mvpdsCache, table: "devices", key: name)
        }
        snapshot.options = try json.cachedValue(
            [String: String].self,
            from: row[column.options],
            in: &optionsCache,
            table: "devices",
            key: name
        )
        snapshot.renewals = row[column.renewals]
        if let oauth: String = row[column.oauthState] {
            snapshot.oauth = try json.value(OAuthDeviceSnapshot.self, from: oauth, table: "devices", key: name)
        }
        if let clientID: String = row[column.clientId] {
            snapshot.credentials = ClientCredentials(clientID: clientID, clientSecret: row[column.clientSecret])
        }
        if let token: String = row[column.token] {
            snapshot.accessToken = AccessToken(token: token, expiresEpochMs: row[column.tokenExpiresAt])
        }
        if let code: String = row[column.code] {
            snapshot.code = IssuedCode(code: code, expiresEpochMs: row[column.codeExpiresAt], mvpd: row[column.codeMvpd])
        }
        if let mvpd: String = row[column.profileMvpd] {
            snapshot.profile = AuthProfile(
                mvpd: mvpd,
                userID: row[column.profileUserId],
                expiresEpochMs: row[column.profileExpiresAt],
                type: ProfileType(rawValue: row[column.profileType])
            )
        }
        return snapshot
    }
}

/// Positions of `loadDevices`' columns, looked up once per load: reading a row's value by name hashes the
/// name, 23 times per device.
struct DeviceColumns {
    let name: Int
    let deviceId: Int
    let scenario: Int
    let settings: Int
    let seed: Int
    let state: Int
    let selectedMvpd: Int
    let mvpds: Int
    let options: Int
    let renewals: Int
    let clientId: Int
    let clientSecret: Int
    let token: Int
    let tokenExpiresAt: Int
    let code: Int
    let codeExpiresAt: Int
    let codeMvpd: Int
    let profileMvpd: Int
    let profileUserId: Int
    let profileExpiresAt: Int
    let profileType: Int
    let fleet: Int
    let addedAtRuntime: Int
    let clientAddress: Int
    let oauthState: Int

    init(_ names: [String]) {
        func position(_ name: String) -> Int {
            guard let position = names.firstIndex(of: name) else { preconditionFailure("loadDevices selects no column \(name)") }
            return position
        }
        self.name = position("name")
        self.deviceId = position("device_id")
        self.scenario = position("scenario")
        self.settings = position("settings")
        self.seed = position("seed")
        self.state = position("state")
        self.selectedMvpd = position("selected_mvpd")
        self.mvpds = position("mvpds")
        self.options = position("options")
        self.renewals = position("renewals")
        self.clientId = position("client_id")
        self.clientSecret = position("client_secret")
        self.token = position("token")
        self.tokenExpiresAt = position("token_expires_at")
        self.code = position("code")
        self.codeExpiresAt = position("code_expires_at")
        self.codeMvpd = position("code_mvpd")
        self.profileMvpd = position("profile_mvpd")
        self.profileUserId = position("profile_user_id")
        self.profileExpiresAt = position("profile_expires_at")
        self.profileType = position("profile_type")
        self.fleet = position("fleet")
        self.addedAtRuntime = position("added_at_runtime")
        self.clientAddress = position("client_address")
        self.oauthState = position("oauth_state")
    }
}
