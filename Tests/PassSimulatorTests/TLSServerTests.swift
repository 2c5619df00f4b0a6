import Foundation
import PassSimulator
import Testing

/// The simulator over HTTPS, checked with curl: REST v2 over HTTP/2 and HTTP/1.1, the throttle, mutual TLS and the
/// connection counters of `/_sim/stats`.
@Suite("HTTPS and HTTP/2")
struct TLSServerTests {
    /// Registers a client and gets an access token over the wire; returns the headers of an authorized REST v2 call.
    static func authorizedHeaders(_ curl: Curl, base: String, version: Curl.Version, device: String = "tv-1") async throws -> [String: String] {
        let registration = try await curl.send(
            base + "/o/client/register",
            version: version,
            method: "POST",
            headers: ["Content-Type": "application/json", "X-Device-Info": Client.deviceInfo],
            body: #"{"software_statement":"\#(Client.softwareStatement)","redirect_uri":"adobepass://com.example"}"#
        )
        #expect(registration.status == 201, "\(registration.body)")
        let clientId = try #require(try registration.json()["client_id"] as? String)
        let clientSecret = try #require(try registration.json()["client_secret"] as? String)
        let token = try await curl.send(
            base + "/o/client/token",
            version: version,
            method: "POST",
            headers: ["Content-Type": "application/x-www-form-urlencoded", "X-Device-Info": Client.deviceInfo],
            body: "client_id=\(clientId)&client_secret=\(clientSecret)&grant_type=client_credentials"
        )
        #expect(token.status == 201, "\(token.body)")
        let accessToken = try #require(try token.json()["access_token"] as? String)
        return [
            "Authorization": "Bearer \(accessToken)",
            "AP-Device-Identifier": Client.fingerprint(device),
            "X-Device-Info": Client.deviceInfo,
        ]
    }

    struct Wire: Sendable, CustomTestStringConvertible {
        let offered: SimulatorTLS.Protocols
        let asked: Curl.Version
        let negotiated: String

        var testDescription: String { "server \(self.offered), curl \(self.asked.rawValue) → HTTP/\(self.negotiated)" }
    }

    /// A real REST v2 exchange (DCR register, token, configuration) answers the same over each wire, and ALPN picks
    /// the version the server and curl agree on.
    @Test(arguments: [
        Wire(offered: .http2AndHTTP1, asked: .http2, negotiated: "2"),
        Wire(offered: .http2AndHTTP1, asked: .http1, negotiated: "1.1"),
        Wire(offered: .http1Only, asked: .http2, negotiated: "1.1"),
    ])
    func restV2OverTLS(wire: Wire) async throws {
        let lab = try TLSLab()
        defer { lab.remove() }
        let simulator = lab.simulator(protocols: wire.offered)
        try await simulator.withRunningServer { base in
            #expect(base.hasPrefix("https://127.0.0.1:"))
            let headers = try await Self.authorizedHeaders(lab.curl, base: base, version: wire.asked)
            let answer = try await lab.curl.send(base + "/api/v2/REF30/configuration", version: wire.asked, headers: headers)
            #expect(answer.status == 200, "\(answer.body)")
            #expect(answer.httpVersion == wire.negotiated)
            #expect(answer.contentType.hasPrefix("application/json"))
            let requestor = try #require(try answer.json()["requestor"] as? [String: Any])
            #expect(requestor["id"] as? String == "REF30")
            let mvpds = try #require(requestor["mvpds"] as? [[String: Any]])
            #expect(mvpds.count == SimulatedMVPD.defaults.count)
            // Absolute URLs the simulator publishes point back at it over HTTPS.
            #expect(mvpds.allSatisfy { ($0["logoUrl"] as? String)?.hasPrefix(base + "/_sim/logos/") == true }, "\(answer.body)")
        }
        // Three curl runs (register, token, configuration), each one connection of the negotiated kind.
        let connections = simulator.stats.connections
        #expect(connections.plain == 0)
        #expect(connections.tlsAccepted == 3)
        #expect(connections.tlsHandshakes == 3)
        #expect(connections.tlsH2 == (wire.negotiated == "2" ? 3 : 0))
        #expect(connections.tlsHTTP1 == (wire.negotiated == "1.1" ? 3 : 0))
    }

    /// The token bucket keyed by the peer address answers Adobe's 429 page over HTTP/2 and HTTP/1.1 alike; the
    /// address of an HTTP/2 stream is its connection's.
    @Test func throttleAnswers429OverTLS() async throws {
        let lab = try TLSLab()
        defer { lab.remove() }
        let simulator = lab.simulator { $0.throttleKey = .ip }
        try await simulator.withRunningServer { base in
            // Register and token take 2 of the 11 requests 127.0.0.1 may make at once (the rate's and a burst of 10).
            let headers = try await Self.authorizedHeaders(lab.curl, base: base, version: .http2)
            let run = try await lab.curl.run(Array(repeating: base + "/api/v2/REF30/configuration", count: 10), version: .http2, headers: headers)
            #expect(run.exitStatus == 0, "\(run.stderr)")
            #expect(run.answers.map(\.status) == Array(repeating: 200, count: 9) + [429])
            #expect(run.answers.allSatisfy { $0.httpVersion == "2" })
            let throttled = try #require(run.answers.last)
            #expect(throttled.contentType == "text/html")
            #expect(throttled.body == ThrottleTests.openrestyBody)

            let overHTTP1 = try await lab.curl.send(base + "/api/v2/REF30/configuration", version: .http1, headers: headers)
            #expect(overHTTP1.status == 429)
            #expect(overHTTP1.httpVersion == "1.1")
            #expect(overHTTP1.contentType == "text/html")
            #expect(overHTTP1.body == ThrottleTests.openrestyBody)
        }
        // The nine configuration requests shared one HTTP/2 connection.
        #expect(simulator.stats.connections.tlsH2 == 3)
        #expect(simulator.stats.connections.tlsHTTP1 == 1)
    }

    /// With a client CA, a handshake without a certificate, with one of another CA, or with an expired one is
    /// refused; a certificate issued by the client CA gets through.
    @Test func mutualTLSRequiresAClientCertificateOfTheClientCA() async throws {
        let lab = try TLSLab()
        defer { lab.remove() }
        let simulator = lab.simulator(mutual: true)
        let issued = try lab.files(of: try lab.clientAuthority.issueClientCertificate(commonName: "lab-device"), named: "client")
        let foreign = try TestCertificateAuthority(commonName: "some other CA").issueClientCertificate()
        let expired = try lab.clientAuthority.issueClientCertificate(
            notValidBefore: Date().addingTimeInterval(-7200),
            notValidAfter: Date().addingTimeInterval(-3600)
        )
        let refused: [(String, (certificate: String, key: String)?)] = [
            ("no certificate", nil),
            ("another CA's certificate", try lab.files(of: foreign, named: "foreign")),
            ("an expired certificate", try lab.files(of: expired, named: "expired")),
        ]
        try await simulator.withRunningServer { base in
            for (what, certificate) in refused {
                var curl = lab.curl
                curl.clientCertificate = certificate
                let run = try await curl.run([base + "/_sim/stats"], version: .http2)
                #expect(run.exitStatus != 0, "\(what) was accepted")
                #expect(run.answers.allSatisfy { $0.status == 0 }, "\(what) got an answer")
            }

            var curl = lab.curl
            curl.clientCertificate = issued
            let answer = try await curl.send(base + "/_sim/stats", version: .http2)
            #expect(answer.status == 200)
            #expect(answer.httpVersion == "2")
            // The three refused handshakes were accepted connections but never completed.
            let connections = try #require(try answer.json()["connections"] as? [String: Int])
            #expect(connections == ["plain": 0, "tls_accepted": 4, "tls_handshakes": 1, "tls_http1": 0, "tls_h2": 1])
        }
    }

    /// `GET /_sim/stats` keeps its fields and adds connections by wire; `DELETE` zeroes them with the rest.
    @Test func statsCountConnectionsByWire() async throws {
        let lab = try TLSLab()
        defer { lab.remove() }
        let plain = PassSimulator(configuration: Client.configuration(), logger: TLSLab.quietLogger)
        try await plain.withRunningServer { base in
            #expect(base.hasPrefix("http://"))
            // Two requests on one keep-alive connection, then the stats on a second.
            let run = try await lab.curl.run([base + "/_sim/codes", base + "/_sim/codes"], version: .http1)
            #expect(run.answers.map(\.status) == [200, 200], "\(run.stderr)")
            let stats = try await lab.curl.send(base + "/_sim/stats", version: .http1).json()
            for field in ["requests", "faults", "faultsByClass"] {
                #expect(stats[field] != nil, "\(field) is missing")
            }
            let connections = try #require(stats["connections"] as? [String: Int])
            #expect(connections == ["plain": 2, "tls_accepted": 0, "tls_handshakes": 0, "tls_http1": 0, "tls_h2": 0])

            #expect(try await lab.curl.send(base + "/_sim/stats", version: .http1, method: "DELETE").status == 204)
            #expect(plain.stats.connections == ConnectionStats())
        }

        let tls = lab.simulator()
        try await tls.withRunningServer { base in
            _ = try await lab.curl.run([base + "/_sim/codes", base + "/_sim/codes"], version: .http2)
            _ = try await lab.curl.run([base + "/_sim/codes", base + "/_sim/codes"], version: .http1)
            let connections = try #require(try await lab.curl.send(base + "/_sim/stats", version: .http2).json()["connections"] as? [String: Int])
            #expect(connections == ["plain": 0, "tls_accepted": 3, "tls_handshakes": 3, "tls_http1": 1, "tls_h2": 2])
        }
    }

    /// A TLS file that cannot be used is reported before the server starts, and stops the start.
    @Test func unusableFilesAreReported() async throws {
        let lab = try TLSLab()
        defer { lab.remove() }
        var missing = lab.tls()
        missing.privateKeyPath = lab.directory.appendingPathComponent("nowhere.pem").path
        #expect(throws: SimulatorTLSError.self) { try missing.validate() }

        var mismatched = lab.tls()
        mismatched.privateKeyPath = lab.server.caPrivateKeyPath
        #expect(throws: SimulatorTLSError.self) { try mismatched.validate() }
        var configuration = Client.configuration()
        configuration.tls = mismatched
        await #expect(throws: SimulatorTLSError.self) {
            try await PassSimulator(configuration: configuration, logger: TLSLab.quietLogger).withRunningServer { _ in }
        }
        try lab.tls(mutual: true).validate()
    }
}
