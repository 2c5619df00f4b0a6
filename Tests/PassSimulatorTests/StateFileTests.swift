import Foundation
import GRDB
import Hummingbird
import PassSimulator
import RegcodeTestSupport
import Synchronization
import Testing

@Suite("State file")
struct StateFileTests {
    /// A fresh path in a private temporary directory, removed after `body`.
    static func withStatePath(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pass-sim-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory.appendingPathComponent("state.sqlite").path)
    }

    /// A simulator on `path` and `clock`, as a restart would build it.
    static func harness(
        _ path: String,
        clock: ManualClock,
        _ configure: @escaping (inout SimulatorConfiguration) -> Void = { _ in }
    )
        -> Harness
    {
        Harness {
            $0.statePath = path
            $0.clock = .manual(clock)
            configure(&$0)
        }
    }

    @Test func clientsTokensCodesAndProfilesSurviveARestart() async throws {
        try await Self.withStatePath { path in
            let clock = ManualClock()
            let saved = Mutex<(Credentials, String, String)?>(nil)
            try await Self.harness(path, clock: clock).run { client in
                let credentials = try await client.credentials()
                // One code completed (a profile), one pending on another device.
                let done = try await client.newCode(credentials, device: "done-tv")
                #expect(try await client.approve(#"{"code":"\#(done)","userId":"alice"}"#).status == .ok)
                let pending = try await client.newCode(credentials, device: "pending-tv")
                saved.withLock { $0 = (credentials, done, pending) }
            }
            let (credentials, done, pending) = try #require(saved.withLock { $0 })

            clock.advance(by: .seconds(60))
            try await Self.harness(path, clock: clock).run { client in
                // The access token is still accepted.
                let configuration = try await client.send(.get, "/api/v2/REF30/configuration", headers: Client.authorized(credentials))
                #expect(configuration.status == .ok, "\(configuration.text)")
                // The client can still get new tokens with its stored secret.
                let token = try await client.form(
                    .post,
                    "/o/client/token",
                    headers: [Client.name("X-Device-Info"): Client.deviceInfo],
                    fields: "client_id=\(credentials.clientId)&client_secret=\(credentials.clientSecret)&grant_type=client_credentials"
                )
                #expect(token.status == .created, "\(token.text)")

                // The profile is still there, by device and by code.
                let profiles = try await client.send(.get, "/api/v2/REF30/profiles", headers: Client.authorized(credentials, device: "done-tv"))
                let byMVPD = try #require(try profiles.json()["profiles"] as? [String: Any])
                let profile = try #require(byMVPD["Cablevision"] as? [String: Any])
                let attributes = try #require(profile["attributes"] as? [String: [String: Any]])
                #expect(attributes["userID"]?["value"] as? String == "alice")
                let polled = try await client.poll(credentials, code: done)
                #expect((try polled.json()["profiles"] as? [String: Any])?.keys.sorted() == ["Cablevision"])

                // The pending code is still pending, then approvable.
                let waiting = try await client.poll(credentials, code: pending)
                #expect(waiting.text == #"{"profiles":{}}"#, "\(waiting.text)")
                #expect(try await client.approve(#"{"code":"\#(pending)"}"#).status == .ok)
            }

            // The approval made after the restart is durable too.
            try await Self.harness(path, clock: clock).run { client in
                let polled = try await client.poll(credentials, code: pending)
                #expect((try polled.json()["profiles"] as? [String: Any])?.keys.sorted() == ["Cablevision"], "\(polled.text)")
                let codes = try await client.send(.get, "/_sim/codes").json()["codes"] as? [[String: Any]]
                #expect(Set(codes?.compactMap { $0["code"] as? String } ?? []) == [done, pending])
                #expect(
                    codes?.first { $0["code"] as? String == pending }?["deviceIdentifier"] as? String == Data("pending-tv".utf8).base64EncodedString()
                )
            }
        }
    }

    @Test func v1TokensDenyListsAndSupersededCodesSurviveARestart() async throws {
        try await Self.withStatePath { path in
            let clock = ManualClock()
            let saved = Mutex<(Credentials, String, String)?>(nil)
            try await Self.harness(path, clock: clock).run { client in
                let credentials = try await client.credentials()
                let code = try await client.newRegcode(Client.bearer(credentials))
                #expect(try await client.approve(#"{"code":"\#(code)"}"#).status == .ok)
                #expect(try await client.v1(.get, "/api/v1/authorize", Client.bearer(credentials), query: "&resource=REF30").status == .ok)
                #expect(try await client.send(.put, "/_sim/deny", body: #"{"resources":{"HBO":"no HBO"}}"#).status == .ok)
                let first = try await client.newCode(credentials, device: "tv")
                let second = try await client.newCode(credentials, device: "tv")
                saved.withLock { $0 = (credentials, first, second) }
            }
            let (credentials, first, second) = try #require(saved.withLock { $0 })
            try await Self.harness(path, clock: clock).run { client in
                let authn = try await client.v1(.get, "/api/v1/tokens/authn", Client.bearer(credentials))
                #expect(authn.status == .ok, "\(authn.text)")
                let authz = try await client.v1(.get, "/api/v1/tokens/authz", Client.bearer(credentials), query: "&resource=REF30")
                #expect(authz.status == .ok, "\(authz.text)")
                #expect(try await client.send(.get, "/_sim/deny").json()["resources"] as? [String: String] == ["HBO": "no HBO"])
                // The device's newest code is still its live one: the older stays superseded, a newer supersedes it.
                try expectEnhancedError(try await client.poll(credentials, code: first), status: .badRequest, code: "invalid_authentication_session")
                #expect(try await client.poll(credentials, code: second).status == .ok)
                _ = try await client.newCode(credentials, device: "tv")
                try expectEnhancedError(try await client.poll(credentials, code: second), status: .badRequest, code: "invalid_authentication_session")
            }
        }
    }

    @Test func aFileLeftOpenByAKilledSimulatorIsRecognized() async throws {
        try await Self.withStatePath { path in
            // The first simulator keeps its connection open, as a killed process leaves the file: nothing checkpointed
            // at close, the latest pages only in the WAL.
            let first = Self.harness(path, clock: ManualClock())
            let clientId = Mutex<String?>(nil)
            try await first.run { client in
                let id = try #require(try await client.register().json()["client_id"] as? String)
                clientId.withLock { $0 = id }
            }
            var configuration = Client.configuration()
            configuration.statePath = path
            let second = PassSimulator(configuration: configuration)
            try await second.loadState()
            let id = try #require(clientId.withLock { $0 })
            #expect(second.state.withLock { $0.expireAccessTokens(ofClient: id) } == 0)
            _ = first
        }
    }

    @Test func theFileIsPrivateWALAndMarkedAsPassSims() async throws {
        try await Self.withStatePath { path in
            try await Self.harness(path, clock: ManualClock()).run { client in
                _ = try await client.credentials()
            }
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
            #expect(mode == 0o600, "mode \(String(mode, radix: 8))")
            let queue = try DatabaseQueue(path: path)
            let (applicationID, version, journal, clients) = try await queue.read { db in
                (
                    try Int32.fetchOne(db, sql: "PRAGMA application_id"), try Int32.fetchOne(db, sql: "PRAGMA user_version"),
                    try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "SELECT count(*) FROM client")
                )
            }
            #expect(applicationID == 0x5053_494D)
            #expect(version == 1)
            #expect(journal == "wal")
            #expect(clients == 1)
        }
    }

    @Test func aForeignSQLiteFileIsRefusedUntouched() async throws {
        try await Self.withStatePath { path in
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(sql: "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')")
            }
            try queue.close()
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let simulator = PassSimulator(
                configuration: {
                    var configuration = Client.configuration()
                    configuration.statePath = path
                    return configuration
                }()
            )
            await #expect(throws: SimulatorStateError.self) { try await simulator.loadState() }
            do {
                try await simulator.loadState()
            } catch {
                #expect(String(describing: error).contains("not a pass-sim state file"), "\(error)")
            }
            // Starting a server on it fails too.
            await #expect(throws: (any Error).self) {
                try await simulator.withRunningServer { _ in }
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test func aFileThatIsNotSQLiteIsRefusedUntouched() async throws {
        try await Self.withStatePath { path in
            let text = Data("not a database\n".utf8)
            try text.write(to: URL(fileURLWithPath: path))
            let simulator = PassSimulator(
                configuration: {
                    var configuration = Client.configuration()
                    configuration.statePath = path
                    return configuration
                }()
            )
            await #expect(throws: SimulatorStateError.self) { try await simulator.loadState() }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == text)
        }
    }

    @Test func expiredRecordsArePurgedFromTheFile() async throws {
        try await Self.withStatePath { path in
            let clock = ManualClock()
            let harness = Self.harness(path, clock: clock) {
                $0.accessTokenTTL = .seconds(60)
                $0.codeTTL = .seconds(60)
            }
            try await harness.run { client in
                let credentials = try await client.credentials()
                _ = try await client.newCode(credentials)
                // Past the token's expiry and the code's retention, the next request's sweep purges both.
                clock.advance(by: .seconds(300))
                _ = try await client.credentials()
            }
            let queue = try DatabaseQueue(path: path)
            let (tokens, codes) = try await queue.read { db in
                (try Int.fetchOne(db, sql: "SELECT count(*) FROM access_token"), try Int.fetchOne(db, sql: "SELECT count(*) FROM code"))
            }
            #expect(tokens == 1)
            #expect(codes == 0)
        }
    }

    @Test func everyAnsweredChangeIsAlreadyInTheFile() async throws {
        try await Self.withStatePath { path in
            try await Self.harness(path, clock: ManualClock()).run { client in
                let credentials = try await client.credentials()
                let code = try await client.newCode(credentials)
                // Read through a second connection while the simulator still runs: the answer implies the commit.
                let queue = try DatabaseQueue(path: path)
                let stored = try await queue.read { db in
                    try String.fetchOne(db, sql: "SELECT code FROM code WHERE code = ?", arguments: [code])
                }
                #expect(stored == code)
                try queue.close()
            }
        }
    }
}
