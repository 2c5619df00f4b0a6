import Foundation
import OAuthDeviceGrant
import RegcodeEngine
import RegcodeSupport

/// Identifies a request the machine sent, so its answer finds it (and a stale answer is recognised).
package struct OAuthRequestID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    package var rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }
    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    package var description: String { "#\(rawValue)" }
}

/// What a request is for.
package enum OAuthRequestPurpose: Sendable, Hashable {
    case discovery
    case deviceAuthorization
    case poll
    case refresh
    case revocation(OAuthTokenTypeHint)
    case exercise(OAuthEndpoint)
}

/// One HTTP header, in order (names are case-insensitive on the wire).
package struct OAuthHeader: Sendable, Hashable {
    package var name: String
    package var value: String
    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// One `application/x-www-form-urlencoded` member.
package struct OAuthFormField: Sendable, Hashable {
    package var name: String
    package var value: String
    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A request described as data: the integrator turns it into an HTTP call and feeds the answer back with
/// ``OAuthDeviceMachine/handle(_:for:sentAt:)``. Headers and form carry credentials: never log them.
package struct OAuthRequest: Sendable, Hashable {
    package enum Method: String, Sendable, Hashable {
        case get = "GET"
        case post = "POST"
    }

    package var id: OAuthRequestID
    package var purpose: OAuthRequestPurpose
    package var method: Method
    /// Absolute URL.
    package var url: String
    package var headers: [OAuthHeader]
    /// The form body of a POST (sent as `Content-Type: application/x-www-form-urlencoded`, which is in `headers`).
    package var form: [OAuthFormField]

    /// The encoded body; empty for a GET.
    package var body: Data {
        method == .get ? Data() : Data(FormEncoding.encode(form.map { ($0.name, $0.value) }).utf8)
    }

    /// The value of header `name`, case-insensitively.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The value of form member `name`.
    package func formValue(_ name: String) -> String? {
        form.first { $0.name == name }?.value
    }
}

/// An HTTP answer.
package struct OAuthHTTPResponse: Sendable, Hashable {
    package var status: Int
    package var headers: [OAuthHeader]
    package var body: Data

    package init(status: Int, headers: [OAuthHeader] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    package func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// `Retry-After` in seconds (the HTTP-date form is not used by authorization servers).
    var retryAfter: Duration? {
        header("Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { .seconds(max(0, $0)) }
    }
}

/// No HTTP answer: connection refused or reset, timeout, TLS failure.
package struct OAuthTransportFailure: Error, Sendable, Hashable, CustomStringConvertible {
    package var reason: String
    package init(_ reason: String) { self.reason = reason }
    package var description: String { reason }
}

/// The timers a machine arms; at most one of each.
package enum OAuthDeviceTimer: String, Sendable, Hashable, CaseIterable {
    /// The next poll.
    case poll
    /// The device code's `expires_in`.
    case codeExpiry
    /// The next try of a request that failed on the way (discovery, device authorization, refresh, revocation).
    case retry
    /// Refreshing before the access token expires.
    case refresh
    /// The next use of the access token.
    case exercise
}

/// What the machine asks its driver to do, in order.
package enum OAuthDeviceAction: Sendable, Hashable {
    case send(OAuthRequest)
    case schedule(OAuthDeviceTimer, at: DeviceInstant)
    case cancel(OAuthDeviceTimer)
    /// Store this; it comes before the events that announce the change.
    case persist(OAuthDeviceSnapshot)
    case emit(OAuthDeviceEvent)
    /// One answered (or abandoned) poll, for the poll log.
    case recordPoll(OAuthPollRecord)
}

/// The commands of a device.
package enum OAuthDeviceCommand: Sendable, Hashable {
    /// Starts a device authorization (ignored while one runs or tokens are held).
    case login
    /// Revokes the tokens the provider can revoke, then forgets them; a running login is cancelled.
    case logout
    /// Ends a running login (discovery, authorization, polling) without tokens.
    case cancel
}

/// One poll, as the poll log stores it.
package struct OAuthPollRecord: Sendable, Hashable {
    package var sentAt: DeviceInstant
    package var answeredAt: DeviceInstant
    package var sentEpochMs: Int64
    package var answeredEpochMs: Int64
    package var httpStatus: Int?
    package var outcome: OAuthPollOutcome
    /// The interval in force when the poll was sent (the server's plus every `slow_down`, whatever the device
    /// itself kept).
    package var interval: Duration
    /// Sent less than `interval` after the previous poll of the same code was sent.
    package var early: Bool
}
