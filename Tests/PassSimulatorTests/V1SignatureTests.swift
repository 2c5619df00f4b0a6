import Foundation
import Hummingbird
import Testing

@testable import PassSimulator

@Suite("REST v1 request authentication")
struct V1SignatureTests {
    /// The synthetic vectors of reference §3.1 (fake keys).
    static let vectorTime: Int64 = 1_704_963_921_144
    static let getVector =
        "GET requestor_id=sampleRequestorId, nonce=6b2a2e06-6a4b-4a7e-9d6a-0f6f2b1f3c11, signature_method=HMAC-SHA1, request_time=1704963921144, request_uri=/api/v1/tokens/authn, public_key=samplePublicKey, signature=MW5O6DZjYa6m0bizEVaDBTVcwQY="
    static let postVector =
        "POST requestor_id=sampleRequestorId, nonce=6b2a2e06-6a4b-4a7e-9d6a-0f6f2b1f3c11, signature_method=HMAC-SHA1, request_time=1704963921144, request_uri=/reggie/v1/sampleRequestorId/regcode, public_key=samplePublicKey, signature=PbXHbCVSbq16FdRbe6snvafuRLM="

    static func harness(logger: LogCapture? = nil) -> Harness {
        // The reference vectors sign for the requestor `sampleRequestorId`.
        Harness(logger: logger?.logger, startMillis: Self.vectorTime) { $0.serviceProviders = ["REF30", "sampleRequestorId"] }
    }

    @Test func theTestSignerReproducesTheReferenceVectors() {
        let get = TestSigner.header(method: "GET", requestor: "sampleRequestorId", requestTime: Self.vectorTime)
        #expect(get == Self.getVector)
        let post = TestSigner.header(
            method: "POST",
            requestor: "sampleRequestorId",
            requestURI: "/reggie/v1/sampleRequestorId/regcode",
            requestTime: Self.vectorTime
        )
        #expect(post == Self.postVector)
    }

    @Test func parserSplitsTheHeaderAndKeepsTheSignedPrefix() throws {
        let parsed = try #require(SignedAuthorization(header: Self.getVector))
        #expect(parsed.method == "GET")
        #expect(parsed.requestorId == "sampleRequestorId")
        #expect(parsed.requestTime == "1704963921144")
        #expect(parsed.requestURI == "/api/v1/tokens/authn")
        #expect(parsed.publicKey == "samplePublicKey")
        #expect(parsed.signature == "MW5O6DZjYa6m0bizEVaDBTVcwQY=")
        #expect(parsed.signingInput == String(Self.getVector[..<Self.getVector.range(of: ", public_key=")!.lowerBound]))
        let keys = ["samplePublicKey": "sampleSecretKey"]
        #expect(parsed.verify(requestor: "sampleRequestorId", keys: keys, nowMillis: Self.vectorTime, window: .seconds(600)) == nil)
        #expect(SignedAuthorization(header: "Bearer abc") == nil)
        #expect(SignedAuthorization(header: "GET requestor_id=a, public_key=b, signature=c") == nil)
    }

    @Test func bothReferenceVectorsAreAcceptedOverHTTP() async throws {
        try await Self.harness().run { client in
            let poll = try await client.send(
                .get,
                "/api/v1/tokens/authn?requestor=sampleRequestorId&deviceId=ZGV2&format=json",
                headers: [.authorization: Self.getVector]
            )
            // Authenticated: the answer is the "pending" 404, not 401.
            try expectClassicError(poll, status: .notFound, message: "Not Found")
            let created = try await client.form(
                .post,
                "/reggie/v1/sampleRequestorId/regcode",
                headers: [.authorization: Self.postVector, .accept: "application/json"],
                fields: "deviceId=ZGV2"
            )
            #expect(created.status == .created, "\(created.text)")
        }
    }

    @Test(
        "refusals are 401 Not Authorized with the reason",
        arguments: [
            (TestSigner.header(requestTime: V1SignatureTests.vectorTime, secret: "wrongSecret"), "bad signature"),
            (TestSigner.header(requestTime: V1SignatureTests.vectorTime, publicKey: "unknownKey"), "unknown public key"),
            (TestSigner.header(requestTime: V1SignatureTests.vectorTime - 600_001), "stale request_time"),
            (TestSigner.header(requestTime: V1SignatureTests.vectorTime + 600_001), "stale request_time"),
            (TestSigner.header(requestTime: V1SignatureTests.vectorTime / 1000), "request_time not in milliseconds"),
            (TestSigner.header(requestor: "SomeoneElse", requestTime: V1SignatureTests.vectorTime), "requestor mismatch"),
            (
                TestSigner.header(requestTime: V1SignatureTests.vectorTime).replacingOccurrences(of: "HMAC-SHA1", with: "HMAC-SHA256"),
                "unsupported signature_method"
            ),
            ("GET requestor_id=REF30, nonce=x", "malformed Authorization header"),
            ("Bearer not-a-token", "invalid or expired access token"),
        ]
    )
    func refusals(header: String, reason: String) async throws {
        let capture = LogCapture()
        try await Self.harness(logger: capture).run { client in
            let reply = try await client.v1(.get, "/api/v1/tokens/authn", [.authorization: header, .accept: "application/json"])
            try expectClassicError(reply, status: .unauthorized, message: "Not Authorized", details: .some(reason))
        }
        // Refusals are logged with their reason, never with the signature.
        let signature = header.components(separatedBy: "signature=").last ?? header
        #expect(!capture.all.contains { $0.contains(signature) })
    }

    @Test func signatureWithinTheWindowIsAccepted() async throws {
        try await Self.harness().run { client in
            for offset: Int64 in [-600_000, 0, 600_000] {
                let header = TestSigner.header(requestTime: Self.vectorTime + offset)
                let reply = try await client.v1(.get, "/api/v1/tokens/authn", [.authorization: header])
                #expect(reply.status == .notFound, "offset \(offset)")
            }
        }
    }

    @Test func missingCredentialsAre401() async throws {
        try await Self.harness().run { client in
            try expectClassicError(
                try await client.v1(.get, "/api/v1/tokens/authn", Client.json),
                status: .unauthorized,
                message: "Not Authorized",
                details: "missing Authorization"
            )
            let xml = try await client.v1(.get, "/api/v1/tokens/authn", [:])
            #expect(xml.status == .unauthorized)
            #expect(try XMLLeaves(xml.text)["message"] == "Not Authorized")
        }
    }

    @Test func methodAndURIMismatchesAreOnlyLogged() async throws {
        let capture = LogCapture()
        try await Self.harness(logger: capture).run { client in
            // Adobe's demo app signs one POST /regcode header and reuses it for every call.
            let reused = TestSigner.header(method: "POST", requestURI: "/regcode", requestTime: Self.vectorTime)
            let reply = try await client.v1(.get, "/api/v1/tokens/authn", [.authorization: reused])
            #expect(reply.status == .notFound)
            // Short suffixes and full URLs name the request.
            for uri in ["/tokens/authn", "http://api.auth.adobe.com/api/v1/tokens/authn?requestor=REF30"] {
                let header = TestSigner.header(requestURI: uri, requestTime: Self.vectorTime)
                let suffixed = try await client.v1(.get, "/api/v1/tokens/authn.json", [.authorization: header])
                #expect(suffixed.status == .notFound)
            }
        }
        let mismatches = capture.all.filter { $0.contains("v1 signature does not name this request") }
        #expect(mismatches.count == 1)
        #expect(mismatches.first?.contains(#""v1.uri_matches": false"#) == true)
        #expect(!capture.all.contains { $0.contains("sampleSecretKey") })
    }

    @Test func configuredKeysAndBearerTokensWork() async throws {
        let harness = Harness { $0.signingKeys["lab-tv"] = "s3cret" }
        try await harness.run { client in
            let header = TestSigner.header(requestTime: harness.clock.epochMillisecondsNow, publicKey: "lab-tv", secret: "s3cret")
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", [.authorization: header]).status == .notFound)

            let credentials = try await client.credentials()
            #expect(try await client.v1(.get, "/api/v1/tokens/authn", Client.bearer(credentials)).status == .notFound)
            #expect(
                try await client.v1(.get, "/api/v1/tokens/authn", Client.json, query: "&access_token=\(credentials.accessToken)").status == .notFound
            )
            harness.clock.advance(by: .seconds(21_600))
            try expectClassicError(
                try await client.v1(.get, "/api/v1/tokens/authn", Client.bearer(credentials)),
                status: .unauthorized,
                message: "Not Authorized",
                details: "invalid or expired access token"
            )
        }
    }
}
