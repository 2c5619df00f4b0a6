import AdobePassClient
import Foundation
import Testing

@Suite("AdobeRequestSigner")
struct RequestSignerTests {
    static let nonce = "6b2a2e06-6a4b-4a7e-9d6a-0f6f2b1f3c11"
    static let time: Int64 = 1_704_963_921_144

    @Test func reproducesTheGETReferenceVector() {
        let header = AdobeRequestSigner.authorizationHeader(
            method: "GET",
            requestor: "sampleRequestorId",
            requestURI: "/api/v1/tokens/authn",
            publicKey: "samplePublicKey",
            secret: "sampleSecretKey",
            nonce: Self.nonce,
            requestTimeMs: Self.time
        )
        #expect(
            header
                == "GET requestor_id=sampleRequestorId, nonce=6b2a2e06-6a4b-4a7e-9d6a-0f6f2b1f3c11, signature_method=HMAC-SHA1, "
                + "request_time=1704963921144, request_uri=/api/v1/tokens/authn, public_key=samplePublicKey, "
                + "signature=MW5O6DZjYa6m0bizEVaDBTVcwQY="
        )
    }

    @Test func reproducesThePOSTReferenceVector() {
        let header = AdobeRequestSigner.authorizationHeader(
            method: "POST",
            requestor: "sampleRequestorId",
            requestURI: "/reggie/v1/sampleRequestorId/regcode",
            publicKey: "samplePublicKey",
            secret: "sampleSecretKey",
            nonce: Self.nonce,
            requestTimeMs: Self.time
        )
        #expect(
            header
                == "POST requestor_id=sampleRequestorId, nonce=6b2a2e06-6a4b-4a7e-9d6a-0f6f2b1f3c11, signature_method=HMAC-SHA1, "
                + "request_time=1704963921144, request_uri=/reggie/v1/sampleRequestorId/regcode, public_key=samplePublicKey, "
                + "signature=PbXHbCVSbq16FdRbe6snvafuRLM="
        )
    }

    @Test func upperCasesTheMethod() {
        let lower = AdobeRequestSigner.authorizationHeader(
            method: "post",
            requestor: "r",
            requestURI: "/x",
            publicKey: "p",
            secret: "s",
            nonce: "n",
            requestTimeMs: 1
        )
        let upper = AdobeRequestSigner.authorizationHeader(
            method: "POST",
            requestor: "r",
            requestURI: "/x",
            publicKey: "p",
            secret: "s",
            nonce: "n",
            requestTimeMs: 1
        )
        #expect(lower == upper)
        #expect(lower.hasPrefix("POST requestor_id=r, "))
    }

    @Test func convenienceOverloadDrawsAFreshNonceAndMillisecondTime() throws {
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let first = AdobeRequestSigner.authorizationHeader(
            method: "GET",
            requestor: "sampleRequestorId",
            requestURI: "/api/v1/tokens/authn",
            publicKey: "samplePublicKey",
            secret: "sampleSecretKey"
        )
        let second = AdobeRequestSigner.authorizationHeader(
            method: "GET",
            requestor: "sampleRequestorId",
            requestURI: "/api/v1/tokens/authn",
            publicKey: "samplePublicKey",
            secret: "sampleSecretKey"
        )
        let after = Int64(Date().timeIntervalSince1970 * 1000)

        let fields = try SignedHeader(first)
        #expect(UUID(uuidString: fields.nonce) != nil)
        #expect(fields.nonce == fields.nonce.lowercased())
        #expect(fields.requestTime >= before && fields.requestTime <= after)
        #expect(try SignedHeader(second).nonce != fields.nonce)
        // The header must verify as if built from its own nonce and time.
        let rebuilt = AdobeRequestSigner.authorizationHeader(
            method: "GET",
            requestor: "sampleRequestorId",
            requestURI: "/api/v1/tokens/authn",
            publicKey: "samplePublicKey",
            secret: "sampleSecretKey",
            nonce: fields.nonce,
            requestTimeMs: fields.requestTime
        )
        #expect(rebuilt == first)
    }
}

/// The fields of a §3.1 header, as a verifying server would split it.
struct SignedHeader {
    var method: String
    var fields: [String: String]

    struct Invalid: Error {}

    init(_ header: String) throws {
        guard let space = header.firstIndex(of: " ") else { throw Invalid() }
        method = String(header[..<space])
        var fields: [String: String] = [:]
        for part in header[header.index(after: space)...].split(separator: ", ") {
            guard let equals = part.firstIndex(of: "=") else { throw Invalid() }
            fields[String(part[..<equals])] = String(part[part.index(after: equals)...])
        }
        self.fields = fields
    }

    var nonce: String { fields["nonce"] ?? "" }
    var requestTime: Int64 { fields["request_time"].flatMap { Int64($0) } ?? -1 }
}
