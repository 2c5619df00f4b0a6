/// Loading the state file and reporting later changes to it.
extension SimulatorState {
    /// Takes in the records read from the state file (a record already in memory wins), rebuilds the indexes derived
    /// from them, purges what expired while the simulator was down, and from then on reports every write to `journal`.
    func restore(_ snapshot: StateFile.Snapshot, journal: StateJournal) {
        self.clients.attach(journal, restoring: snapshot.clients.map { ($0.clientId, $0) })
        self.tokens.attach(journal, restoring: snapshot.tokens.map { ($0.accessToken, $0) })
        self.sessions.attach(journal, restoring: snapshot.sessions.map { ($0.code, $0) })
        self.profiles.attach(journal, restoring: snapshot.profiles)
        self.v1Tokens.attach(journal, restoring: snapshot.v1Tokens)
        self.v1Authorizations.attach(journal, restoring: snapshot.v1Authorizations)
        // Deny lists in the file were set through the admin API; they outlast a restart like everything else.
        if let lists = snapshot.denyLists { self.deny = lists }
        self.ssoLinks.attach(journal, restoring: snapshot.ssoLinks)
        self.partnerRequests.attach(journal, restoring: snapshot.partnerRequests.map { ($0.id, $0) })
        self.ssoSecrets.attach(journal, restoring: snapshot.ssoSecrets)
        self.mvpdPlatforms.attach(journal, restoring: snapshot.mvpdPlatforms)
        self.integrationOverrides.attach(journal, restoring: snapshot.integrations)
        self.ssoServiceDevices.attach(journal, restoring: snapshot.ssoServiceDevices)
        self.ssoServiceLinkCodes.attach(journal, restoring: snapshot.ssoServiceLinkCodes.map { ($0.code, $0) })
        self.journal = journal
        self.rebuildIndexes()
        self.sweep(now: self.now)
    }

    /// The device and client indexes, from the records: a client's tokens oldest first, each device's live v2 code
    /// (its newest), and each device's most recent v1 codes.
    private func rebuildIndexes() {
        self.tokensByClient = Dictionary(grouping: self.tokens.values, by: \.clientId).mapValues { grants in
            Array(
                grants.sorted { ($0.createdAt, $0.accessToken) < ($1.createdAt, $1.accessToken) }.map(\.accessToken).suffix(Self.maxTokensPerClient)
            )
        }
        var liveCodes: [DeviceKey: AuthenticationSession] = [:]
        var v1Codes: [DeviceKey: [AuthenticationSession]] = [:]
        for session in self.sessions.values {
            let key = DeviceKey(serviceProvider: session.serviceProvider, deviceIdentifier: session.deviceIdentifier)
            switch session.api {
            case .v2:
                if let current = liveCodes[key], Self.newness(current) >= Self.newness(session) { continue }
                liveCodes[key] = session
            case .v1:
                v1Codes[key, default: []].append(session)
            }
        }
        self.liveCodeByDevice = liveCodes.mapValues(\.code)
        self.v1CodesByDevice = v1Codes.mapValues { sessions in
            Array(sessions.sorted { ($0.notBefore, $0.code) < ($1.notBefore, $1.code) }.map(\.code).suffix(Self.maxV1CodesPerDevice))
        }
    }

    /// Orders a device's codes: the newest wins, and of two issued in the same millisecond, the one not superseded.
    private static func newness(_ session: AuthenticationSession) -> (Int64, Int) {
        if case .superseded = session.status { return (session.notBefore, 0) }
        return (session.notBefore, 1)
    }
}
