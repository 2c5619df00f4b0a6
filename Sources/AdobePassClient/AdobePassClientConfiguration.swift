/// Static settings shared by every device the client serves (what each device presents, such as
/// its User-Agent and redirect URLs, comes with its ``RequestContext``).
package struct AdobePassClientConfiguration: Sendable {
    /// Origin serving `/o`, `/api/v2`, `/api/v1` and `/reggie`, e.g. `http://127.0.0.1:8080`.
    package var baseURL: String
    /// Upper bound for one whole exchange: connection, request, response head and body.
    package var requestTimeout: Duration
    /// v1 regcode `ttl` (the backend rejects more than 36000 s); `nil` sends none, so the backend's default applies
    /// (Adobe: 30 minutes; pass-sim: its `--code-ttl`).
    package var registrationCodeTTL: Duration?
    /// Responses larger than this are not read to the end.
    package var maxResponseBodyBytes: Int
    /// Fault testing only: signs v1 requests wrongly on purpose, to prove that a backend refuses such
    /// signatures and how a device reports it. `nil` (the default) signs correctly.
    package var signatureFault: V1SignatureFault?

    package init(
        baseURL: String,
        requestTimeout: Duration = .seconds(30),
        registrationCodeTTL: Duration? = nil,
        maxResponseBodyBytes: Int = 1 << 20,
        signatureFault: V1SignatureFault? = nil
    ) {
        self.baseURL = baseURL
        self.requestTimeout = requestTimeout
        self.registrationCodeTTL = registrationCodeTTL
        self.maxResponseBodyBytes = maxResponseBodyBytes
        self.signatureFault = signatureFault
    }
}

/// Deliberately wrong v1 HMAC headers, for fault tests (a wrong secret needs no knob: sign with other keys).
package enum V1SignatureFault: Sendable, Equatable {
    /// `request_time` in seconds instead of milliseconds, the mistake Adobe's "Not Authorized" note warns about.
    case requestTimeInSeconds
    /// `request_time` moved by this much: a stale (negative) or future timestamp.
    case requestTimeOffset(Duration)
}
