import BackendHTTP
import NIOCore
import NIOPosix
import NIOSSL
import Testing

/// TLS as an operator meets it: a certificate refused for a named reason at once (not at a deadline), the settings
/// that fix each reason, mutual TLS, SNI, and HTTP/2 negotiated only where offered.
@Suite struct TLSConnectionTests {
    private static let pki = try! TestPKI()
    private static let soon: TimeAmount = .seconds(10)

    private func pool(
        _ server: ScriptedServer,
        host: String = "127.0.0.1",
        settings: TLSClientSettings,
        statistics: TransportStatistics? = nil,
        // Generous, so that a handshake on a machine busy with the whole suite finishes; the one test of the
        // deadline passes its own.
        connectTimeout: TimeAmount = .seconds(30)
    ) throws -> KeepAliveConnectionPool {
        KeepAliveConnectionPool(
            origin: Origin(baseURL: "https://\(host):\(server.port)")!,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            maxConnections: 2,
            connectTimeout: connectTimeout,
            tls: try TLSClientContext(settings: settings),
            statistics: statistics
        )
    }

    private func call(_ pool: KeepAliveConnectionPool) async throws -> Int {
        try await pool.execute(KeepAliveRequest(method: .GET, target: "/ok"), deadline: .now() + Self.soon, maxBodyBytes: 1024).status
    }

    private func failure(_ pool: KeepAliveConnectionPool) async -> KeepAliveHTTPError? {
        do {
            _ = try await call(pool)
            return nil
        } catch {
            return error as? KeepAliveHTTPError
        }
    }

    @Test(arguments: [TestWire.tlsHTTP1, .tlsHTTP2]) func anUntrustedIssuerIsNamedAndTheTrustedCAFixesIt(wire: TestWire) async throws {
        let server = try await ScriptedServer(wire: wire, tls: Self.pki.server())
        // The system's roots do not hold the test CA.
        let untrusting = try pool(server, settings: TLSClientSettings())
        #expect(await failure(untrusting) == .tls(.untrustedIssuer))
        // One connection for one call: a refused certificate is not retried.
        #expect(server.accepted == 1)
        untrusting.shutdown()

        let trusting = try pool(server, settings: TLSClientSettings(caFile: Self.pki.caFile))
        #expect(try await call(trusting) == 200)
        trusting.shutdown()
        await server.stop()
    }

    @Test func aCertificateFromAnotherCAIsUntrustedEvenWithACAFile() async throws {
        let server = try await ScriptedServer(wire: .tlsHTTP1, tls: Self.pki.server(.unknownIssuer))
        let pool = try pool(server, settings: TLSClientSettings(caFile: Self.pki.caFile, caOnly: true))
        #expect(await failure(pool) == .tls(.untrustedIssuer))
        pool.shutdown()
        await server.stop()
    }

    @Test func aNameMismatchIsNamedAndServerNameFixesIt() async throws {
        let server = try await ScriptedServer(wire: .tlsHTTP1, tls: Self.pki.server(.named(["backend.lab.example"])))
        let mismatched = try pool(server, settings: TLSClientSettings(caFile: Self.pki.caFile))
        #expect(await failure(mismatched) == .tls(.nameMismatch(expected: "127.0.0.1")))
        mismatched.shutdown()

        let named = try pool(server, settings: TLSClientSettings(caFile: Self.pki.caFile, serverName: "backend.lab.example"))
        #expect(try await call(named) == 200)
        named.shutdown()
        // SNI carries names, never addresses.
        #expect(server.serverNames == [nil, "backend.lab.example"])
        await server.stop()
    }

    @Test func theOriginsHostNameIsSentAsSNI() async throws {
        let server = try await ScriptedServer(wire: .tlsHTTP1, tls: Self.pki.server())
        let pool = try pool(server, host: "localhost", settings: TLSClientSettings(caFile: Self.pki.caFile))
        #expect(try await call(pool) == 200)
        #expect(server.serverNames == ["localhost"])
        pool.shutdown()
        await server.stop()
    }

    @Test func anExpiredCertificateIsNamed() async throws {
        let server = try await ScriptedServer(wire: .tlsHTTP1, tls: Self.pki.server(.expired))
        let pool = try pool(server, settings: TLSClientSettings(caFile: Self.pki.caFile))
        #expect(await failure(pool) == .tls(.expired))
        pool.shutdown()
        await server.stop()
    }

    @Test func noCommonProtocolVersionIsNamed() async throws {
        var configuration = try Self.pki.server()
        configuration.maximumTLSVersion = .tlsv12
        let server = try await ScriptedServer(wire: .tlsHTTP1, tls: configuration)
        let pool = try pool(server, settings: TLSClientSettings(caFile: Self.pki.caFile, minimumVersion: .tls13))
        #expect(await failure(pool) == .tls(.protocolVersion))
        pool.shutdown()
        let accepting = try self.pool(server, settings: TLSClientSettings(caFile: Self.pki.caFile))
        #expect(try await call(accepting) == 200)
        accepting.shutdown()
        await server.stop()
    }

    @Test func withVerifyOffAnyCertificateIsAccepted() async throws {
        let server = try await ScriptedServer(wire: .tlsHTTP1, tls: Self.pki.server(.unknownIssuer))
        let pool = try pool(server, settings: TLSClientSettings(verify: false))
        #expect(try await call(pool) == 200)
        pool.shutdown()
        await server.stop()
    }

    @Test(arguments: [TestWire.tlsHTTP1, .tlsHTTP2]) func mutualTLSIsRefusedWithoutAClientCertificateAndAcceptedWithOne(wire: TestWire) async throws {
        let server = try await ScriptedServer(wire: wire, tls: Self.pki.server(requireClientCertificate: true))
        let anonymous = try pool(server, settings: TLSClientSettings(caFile: Self.pki.caFile))
        #expect(await failure(anonymous) == .tls(.clientCertificateRefused))
        anonymous.shutdown()

        let settings = TLSClientSettings(
            caFile: Self.pki.caFile,
            clientCertificateFile: Self.pki.clientCertificateFile,
            clientKeyFile: Self.pki.clientKeyFile
        )
        let identified = try pool(server, settings: settings)
        #expect(try await call(identified) == 200)
        identified.shutdown()
        await server.stop()
    }

    @Test func http2IsNegotiatedWhereOfferedAndCounted() async throws {
        let statistics = TransportStatistics()
        for wire in [TestWire.tlsHTTP2, .tlsHTTP1] {
            let server = try await ScriptedServer(wire: wire, tls: Self.pki.server())
            let pool = try pool(server, settings: TLSClientSettings(caFile: Self.pki.caFile), statistics: statistics)
            #expect(try await call(pool) == 200)
            #expect(server.heads.first?.contains("HTTP/2") == (wire == .tlsHTTP2))
            pool.shutdown()
            await server.stop()
        }
        let counts = statistics.counts
        #expect(counts.tlsHTTP2 == 1)
        #expect(counts.tlsHTTP1 == 1)
        #expect(counts.fullHandshakes == 2)
    }

    @Test func http2OnlyRefusesAServerWithoutIt() async throws {
        let server = try await ScriptedServer(wire: .tlsHTTP1, tls: Self.pki.server())
        let pool = try pool(server, settings: TLSClientSettings(caFile: Self.pki.caFile, httpVersion: .http2))
        #expect(await failure(pool) == .tls(.http2NotOffered))
        pool.shutdown()
        await server.stop()
    }

    @Test func manyCallsShareOneHTTP2Connection() async throws {
        let server = try await ScriptedServer(wire: .tlsHTTP2, tls: Self.pki.server())
        let pool = KeepAliveConnectionPool(
            origin: Origin(baseURL: "https://127.0.0.1:\(server.port)")!,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            maxConnections: 1,
            tls: try TLSClientContext(settings: TLSClientSettings(caFile: Self.pki.caFile))
        )
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask { try await self.call(pool) }
            }
            for try await status in group { #expect(status == 200) }
        }
        #expect(server.accepted == 1)
        #expect(server.heads.count == 20)
        pool.shutdown()
        await server.stop()
    }

    @Test func aServerThatNeverFinishesTheHandshakeTimesOut() async throws {
        // A plain-HTTP server reads the ClientHello as an unfinished request head and never answers.
        let server = try await ScriptedServer(wire: .plain)
        let pool = try pool(server, settings: TLSClientSettings(), connectTimeout: .milliseconds(300))
        #expect(await failure(pool) == .tls(.handshakeTimeout))
        pool.shutdown()
        await server.stop()
    }

    @Test func unreadableSettingsNameTheirFile() {
        #expect(throws: TLSSettingsError.self) { try TLSClientContext(settings: TLSClientSettings(caFile: "/nonexistent/ca.pem")) }
        #expect(throws: TLSSettingsError.self) {
            try TLSClientContext(settings: TLSClientSettings(clientCertificateFile: Self.pki.clientCertificateFile))
        }
    }
}
