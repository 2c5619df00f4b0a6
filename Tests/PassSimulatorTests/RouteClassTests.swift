import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@testable import PassSimulator

/// Fault injection classifies a request by the route the router matched, never by re-reading its path.
@Suite("Route classes")
struct RouteClassTests {
    /// Every injectable answer is a 507 from the simulated edge, whatever the class.
    static let everythingFails = FaultConfiguration(defaults: FaultRates(error5xx: 1, error5xxStatuses: [507]))

    /// Routes outside the fault middleware: the admin API, the activation pages, v1's browser entry point and the
    /// OAuth verification page.
    static func isUnfaulted(_ pattern: String) -> Bool {
        ["/api/v1/authenticate", "/device", "/device/decision"].contains(pattern)
            || ["/_sim/", "/activate", "/adobe-services/"].contains { pattern.hasPrefix($0) }
    }

    /// A request path matching `pattern`, every capture filled in.
    static func concretePath(_ pattern: RouterPath) -> String {
        "/" + pattern.components.map { $0.description.hasPrefix("{") ? "ZA1" : $0.description }.joined(separator: "/")
    }

    /// Hummingbird runs a group's middleware after its trie lookup, with the matched pattern in `endpointPath`, and
    /// never for a path no route matches.
    @Test func groupMiddlewareSeesTheMatchedPattern() async throws {
        final class Seen: Sendable {
            let paths = Mutex<[String?]>([])
        }
        struct Recorder: RouterMiddleware {
            typealias Context = BasicRequestContext
            let seen: Seen
            func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
                self.seen.paths.withLock { $0.append(context.endpointPath) }
                return try await next(request, context)
            }
        }
        let seen = Seen()
        let router = Router()
        router.group().add(middleware: Recorder(seen: seen)).get("/api/v2/{serviceProvider}/sessions/{code}") { _, _ in "ok" }
        try await Application(router: router).test(.router) { client in
            let matched = try await client.execute(uri: "/api/v2/REF30/sessions/ABC", method: .get)
            #expect(matched.status == .ok)
            let unmatched = try await client.execute(uri: "/api/v2/REF30/nothing", method: .get)
            #expect(unmatched.status == .notFound)
        }
        #expect(seen.paths.withLock { $0 } == ["/api/v2/{serviceProvider}/sessions/{code}"])
    }

    /// Each registered route, with each method it answers, is faulted exactly when it has a class; only the admin API
    /// and the browser's pages are not.
    @Test func everyFaultedRouteHasAClass() async throws {
        let harness = Harness { $0.throttleEnabled = false }
        let routes = harness.simulator.faultedRoutes()
        let table = RouteTable(routes.dcrAndV2 + routes.v1 + routes.oauth)
        let registered = harness.simulator.makeRouter().routes.map { (method: $0.method, path: $0.path) }
        #expect(Set(table.patterns).isSubset(of: registered.map(\.path.description)))
        try await harness.run { client in
            for route in registered {
                // Admin calls may change the faults; every request starts from the same settings.
                try harness.simulator.setFaultConfiguration(Self.everythingFails)
                let reply = try await client.send(route.method, Self.concretePath(route.path))
                let faulted = reply.status.code == 507 && reply.headers[.server] == "openresty"
                let pattern = route.path.description
                #expect(faulted == !Self.isUnfaulted(pattern), "\(route.method) \(pattern)")
                #expect((table.classification(endpointPath: pattern) != nil) == faulted, "\(route.method) \(pattern)")
            }
        }
    }

    /// As before classification followed the router: a path no route matches is answered 404, neither faulted nor
    /// counted.
    @Test func unmatchedPathsAreNotFaultedNorCounted() async throws {
        let harness = Harness {
            $0.throttleEnabled = false
            $0.faults = Self.everythingFails
        }
        try await harness.run { client in
            for path in ["/api/v2/REF30/sessions/ABC/extra", "/o/client", "/reggie/v1/REF30", "/api/v1/tokens", "/nowhere"] {
                let reply = try await client.send(.get, path)
                #expect(reply.status == .notFound, "\(path)")
            }
        }
        #expect(harness.simulator.stats.requests.isEmpty)
        #expect(harness.simulator.stats.faults[.error5xx] == 0)
    }

    /// The classes and credentials of a sample of routes, as the fault tests rely on.
    @Test func classesOfKnownRoutes() {
        let routes = Harness().simulator.faultedRoutes()
        let table = RouteTable(routes.dcrAndV2 + routes.v1 + routes.oauth)
        func check(_ pattern: String, _ endpointClass: EndpointClass, protected: [HTTPRequest.Method], unprotected: [HTTPRequest.Method] = []) {
            let classification = table.classification(endpointPath: pattern)
            #expect(classification?.endpointClass == endpointClass, "\(pattern)")
            for method in protected { #expect(classification?.isProtected(method) == true, "\(method) \(pattern)") }
            for method in unprotected { #expect(classification?.isProtected(method) == false, "\(method) \(pattern)") }
        }
        check("/o/client/register", .dcr, protected: [], unprotected: [.post])
        check("/api/v2/{sp}/sessions/{code}", .sessions, protected: [.get, .post])
        check("/api/v2/{sp}/profiles/code/{code}", .poll, protected: [.get])
        check("/api/v2/authenticate/{sp}/{code}", .other, protected: [], unprotected: [.get])
        check("/reggie/v1/{requestor}/regcode.json", .sessions, protected: [.post], unprotected: [.get])
        check("/reggie/v1/{requestor}/regcode/{code}", .sessions, protected: [], unprotected: [.get, .delete])
        // Every v1 API is DCR-protected (or signed), the MVPD list too.
        check("/api/v1/config/{requestor}", .config, protected: [.get])
        check("/api/v1/authenticate/{code}", .poll, protected: [.get])
        check("/api/v1/checkauthn/{code}", .other, protected: [], unprotected: [.get])
        check("/api/v1/tokens/media.xml", .decisions, protected: [.get])
        // The OAuth device flow: discovery is config, device authorization sessions, the token endpoint poll; only
        // userinfo takes a bearer token.
        check("/.well-known/openid-configuration", .config, protected: [], unprotected: [.get])
        check("/device_authorization", .sessions, protected: [], unprotected: [.post])
        check("/token", .poll, protected: [], unprotected: [.post])
        check("/revoke", .other, protected: [], unprotected: [.post])
        check("/userinfo", .other, protected: [.get, .post])
        #expect(table.classification(endpointPath: "/device") == nil)
        #expect(table.classification(endpointPath: "/api/v1/authenticate") == nil)
        #expect(table.classification(endpointPath: nil) == nil)
    }
}
