import Hummingbird
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a request path is classified for faults and stats.
struct RouteClassification: Sendable, Equatable {
    enum API: Sendable, Equatable {
        case dcr
        case v2
        case v1
    }

    let endpointClass: EndpointClass
    let api: API
    /// Whether the endpoint requires the caller's credentials (bearer token or v1 signature).
    let protected: Bool

    /// Classifies an API path; the `.json`/`.xml` suffix of v1 paths is ignored.
    init(method: HTTPRequest.Method, path: String) {
        var segments = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if var last = segments.last {
            for suffix in [".json", ".xml"] where last.hasSuffix(suffix) {
                last.removeLast(suffix.count)
            }
            segments[segments.count - 1] = last
        }
        func segment(_ index: Int) -> String { index < segments.count ? segments[index] : "" }

        switch (segment(0), segment(1)) {
        case ("o", _):
            self.init(.dcr, .dcr, protected: false)
        case ("api", "v2"):
            if segment(2) == "authenticate" {
                self.init(.other, .v2, protected: false)
                return
            }
            switch segment(3) {
            case "configuration": self.init(.config, .v2, protected: true)
            case "sessions": self.init(.sessions, .v2, protected: true)
            case "profiles": self.init(segment(4) == "code" ? .poll : .other, .v2, protected: true)
            case "decisions": self.init(.decisions, .v2, protected: true)
            default: self.init(.other, .v2, protected: true)
            }
        case ("reggie", _):
            // Creating a code is a device call; reading or deleting a record is what the login web app does.
            self.init(.sessions, .v1, protected: segments.count <= 4 && method == .post)
        case ("api", "v1"):
            switch segment(2) {
            case "tokens":
                switch segment(3) {
                case "authn": self.init(.poll, .v1, protected: true)
                case "authz", "media": self.init(.decisions, .v1, protected: true)
                default: self.init(.other, .v1, protected: true)
                }
            case "authorize", "preauthorize", "mediatoken": self.init(.decisions, .v1, protected: true)
            case "config": self.init(.config, .v1, protected: false)
            case "authenticate": self.init(segments.count > 3 ? .poll : .other, .v1, protected: segments.count > 3)
            case "checkauthn": self.init(.other, .v1, protected: segments.count == 3)
            default: self.init(.other, .v1, protected: true)
            }
        default:
            self.init(.other, .v2, protected: false)
        }
    }

    private init(_ endpointClass: EndpointClass, _ api: API, protected: Bool) {
        self.endpointClass = endpointClass
        self.api = api
        self.protected = protected
    }
}
