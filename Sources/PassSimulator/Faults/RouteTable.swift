import Hummingbird

/// What a fault-injected route's requests count as for faults and stats.
struct RouteClassification: Sendable, Equatable {
    /// The API a route belongs to, which decides how an injected token expiry is worded.
    enum API: Sendable, Equatable {
        case dcr
        case v2
        case v1
        /// The OAuth 2.0 device flow (RFC 8628): an expired bearer token is RFC 6750's `invalid_token`.
        case oauth
        /// Adobe's SSO Service (`/api/{sp}/serviceToken`, `link`, `unlink`, `list`), which has its own error shape.
        case ssoService
    }

    /// Which calls of a route need the caller's credentials (bearer token or v1 signature); only those can be
    /// answered with an injected token expiry.
    enum Credentials: Sendable, Equatable {
        /// No call does.
        case none
        /// Every call does, whatever its method (also one answered 405).
        case required
        /// Only calls with this method do.
        case requiredFor(HTTPRequest.Method)
    }

    let endpointClass: EndpointClass
    let api: API
    let credentials: Credentials

    /// Whether a call with `method` needs the caller's credentials.
    func isProtected(_ method: HTTPRequest.Method) -> Bool {
        switch self.credentials {
        case .none: false
        case .required: true
        case .requiredFor(let protected): method == protected
        }
    }

    /// What a matched route missing from the ``RouteTable`` counts as (none should be: a test checks every route).
    static let unclassified = RouteClassification(endpointClass: .other, api: .v2, credentials: .none)
}

/// A fault-injected API route: its pattern, its handlers (see `RouterMethods.endpoint`) and its classification.
struct APIRoute: Sendable {
    let path: RouterPath
    let handlers: [HTTPRequest.Method: RouterGroup<SimulatorRequestContext>.Handler]
    let classification: RouteClassification

    init(
        _ path: RouterPath,
        _ endpointClass: EndpointClass,
        _ api: RouteClassification.API,
        credentials: RouteClassification.Credentials = .required,
        _ handlers: [HTTPRequest.Method: RouterGroup<SimulatorRequestContext>.Handler]
    ) {
        self.path = path
        self.handlers = handlers
        self.classification = RouteClassification(endpointClass: endpointClass, api: api, credentials: credentials)
    }
}

/// The classification of every fault-injected route, keyed by route pattern as Hummingbird reports the matched one
/// in `context.endpointPath` (`/api/v2/{sp}/sessions/{code}`).
///
/// Built from the same ``APIRoute`` values the routes are registered from, so the two cannot drift.
struct RouteTable: Sendable {
    private let classes: [String: RouteClassification]

    init(_ routes: [APIRoute]) {
        var classes: [String: RouteClassification] = [:]
        for route in routes {
            let previous = classes.updateValue(route.classification, forKey: route.path.description)
            precondition(previous == nil || previous == route.classification, "route \(route.path) classified twice")
        }
        self.classes = classes
    }

    /// The route patterns classified.
    var patterns: Dictionary<String, RouteClassification>.Keys { self.classes.keys }

    /// The classification of the route matched as `endpointPath`, if it is in the table.
    func classification(endpointPath: String?) -> RouteClassification? {
        endpointPath.flatMap { self.classes[$0] }
    }
}

extension RouterGroup<SimulatorRequestContext> {
    /// Registers each of `routes` with `endpoint(_:_:)`.
    func endpoints(_ routes: [APIRoute]) {
        for route in routes {
            self.endpoint(route.path, route.handlers)
        }
    }
}
