import ControlRPC
import Foundation
import Logging
import RegcodeEngine
import RegcodeSupport
import Testing

@testable import ControlHTTP
@testable import RegcodeDaemon

/// One table is the control surface: dispatch answers exactly its methods, checks their parameters against it,
/// `rpc.discover` describes it, and the web console calls nothing else.
@Suite struct ControlMethodTableTests {
    static let table = ControlMethods.table
    static let peer = ControlPeer.unixSocket(PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))

    /// A handler on a registry whose devices are never brought up unless `up` (none are configured).
    static func withHandler(up: Bool = false, _ body: (ControlMethodsHandler) async throws -> Void) async throws {
        let harness = try ControlHarness()
        defer { try? FileManager.default.removeItem(atPath: harness.directory) }
        harness.registry.devicesUp.value = up
        try await body(harness.handler)
    }

    static func error(_ handler: ControlMethodsHandler, _ method: String, _ params: JSONValue?) async -> RPCError? {
        do {
            _ = try await handler.handle(method: method, params: params, peer: peer)
            return nil
        } catch {
            return error
        }
    }

    /// What calling `method` (through `subscribe` for the one that streams) answers as an error.
    static func error(_ handler: ControlMethodsHandler, _ method: ControlMethod, _ params: JSONValue?) async -> RPCError? {
        guard case .subscription = method.handler else { return await error(handler, method.name, params) }
        do {
            try await handler.subscribe(params: params, peer: peer).cancel()
            return nil
        } catch {
            return error
        }
    }

    /// A value of `type` the schema accepts.
    static func valid(_ type: ParameterType) -> JSONValue {
        switch type {
        case .string, .nullableString: "ghost"
        case .integer: 1
        case .boolean: true
        case .object, .stringMap: [:]
        case .strings: ["ghost"]
        }
    }

    /// A value of another JSON type.
    static func mistyped(_ type: ParameterType) -> JSONValue {
        switch type {
        case .string, .nullableString, .boolean, .object, .stringMap, .strings: 42
        case .integer: "many"
        }
    }

    /// `method`'s required parameters, each with a value it accepts.
    static func requiredParams(_ method: ControlMethod) -> [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: method.parameters.filter(\.required).map { ($0.name, valid($0.type)) })
    }

    @Test func dispatchAnswersEveryMethodOfTheTableAndNoOther() async throws {
        try await Self.withHandler(up: true) { handler in
            #expect(Self.table.names.count >= 30)
            for method in Self.table.methods {
                let error = await Self.error(handler, method.name, [:])
                switch method.handler {
                case .call:
                    #expect(error?.code != -32601, "\(method.name)")
                    // With nothing given, a method that needs a member names it; one that needs none answers.
                    if let required = method.parameters.first(where: \.required) {
                        #expect(error?.code == -32602, "\(method.name)")
                        #expect(error?.data?["member"] == .string(required.name), "\(method.name)")
                    } else {
                        #expect(error == nil, "\(method.name): \(String(describing: error))")
                    }
                case .subscription:
                    // Streams only where the transport streams: through `subscribe`, not as a call.
                    #expect(error?.code == -32601, "\(method.name)")
                    let subscription = try await handler.subscribe(params: nil, peer: Self.peer)
                    #expect(subscription.result["subscribed"] == true)
                    subscription.cancel()
                }
            }
            let outside =
                DeviceCommand.Name.allCases.map(\.rawValue).filter { Self.table.method(named: $0) == nil } + [
                    "RPC.DISCOVER", "devices", "accessEnabler", "", "devices.list ",
                ]
            #expect(outside.contains("selectTVProvider"))
            for name in outside {
                #expect(await Self.error(handler, name, [:])?.code == -32601, "\(name)")
            }
        }
    }

    @Test func rpcDiscoverIsTheTable() async throws {
        try await Self.withHandler { handler in
            // Answered while starting, as the table says.
            let document = try await handler.handle(method: "rpc.discover", params: nil, peer: Self.peer)
            let methods = try #require(document["methods"]?.arrayValue)
            #expect(methods.compactMap { $0["name"]?.stringValue } == Self.table.names)
            for (described, method) in zip(methods, Self.table.methods) {
                #expect(described["summary"] == .string(method.summary))
                #expect(described["tags"] == [["name": .string(method.tag)]])
                #expect(described["result"]?["summary"] == .string(method.result))
                let params = try #require(described["params"]?.arrayValue, "\(method.name)")
                #expect(params.map { $0["name"] } == method.parameters.map { .string($0.name) }, "\(method.name)")
                #expect(params.map { $0["required"] } == method.parameters.map { .bool($0.required) }, "\(method.name)")
                #expect(params.map { $0["schema"] } == method.parameters.map { $0.type.schema }, "\(method.name)")
            }
            #expect(methods.first { $0["name"] == "setRequestor" }?["tags"] == [["name": "AccessEnabler"]])
            #expect(methods.first { $0["name"] == "vsa.pick" }?["tags"] == [["name": "vsa"]])
        }
    }

    /// Every member error is found before anything runs: the daemon here is still starting, so a call that got past
    /// its schema would be answered "starting" instead.
    @Test func parameterErrorsComeFromEachMethodsSchema() async throws {
        try await Self.withHandler { handler in
            for method in Self.table.methods {
                let base = Self.requiredParams(method)
                let allowed = JSONValue.array(method.parameters.map(\.name).sorted().map(JSONValue.string))
                let unknown = await Self.error(handler, method, .object(base.merging(["bogus": 1]) { $1 }))
                #expect(unknown == .invalidParams("unknown member 'bogus'", data: ["member": "bogus", "allowed": allowed]), "\(method.name)")
                for parameter in method.parameters {
                    var params = base
                    params[parameter.name] = Self.mistyped(parameter.type)
                    let mistyped = await Self.error(handler, method, .object(params))
                    #expect(mistyped?.code == -32602, "\(method.name).\(parameter.name)")
                    #expect(mistyped?.message.hasPrefix("'\(parameter.name)' must be") == true, "\(method.name).\(parameter.name)")
                    #expect(mistyped?.data?["member"] == .string(parameter.name), "\(method.name).\(parameter.name)")
                    guard parameter.required else { continue }
                    params[parameter.name] = nil
                    let missing = await Self.error(handler, method, .object(params))
                    #expect(missing?.message.hasPrefix("missing '\(parameter.name)'") == true, "\(method.name).\(parameter.name)")
                    #expect(missing?.data?["member"] == .string(parameter.name), "\(method.name).\(parameter.name)")
                }
                if method.parameters.contains(where: \.required) { continue }
                // Nothing to get wrong: the method itself answers (here: not before the devices exist).
                let answer = await Self.error(handler, method, nil)
                #expect(answer == nil || answer == ControlMethodsHandler.starting, "\(method.name)")
            }
        }
    }

    /// The schema's words are the ones the typed accessors (what the methods read their members with) use.
    @Test func schemaMessagesAreTheAccessorsMessages() throws {
        func schemaError(_ parameter: ControlParameter, _ value: JSONValue?) -> RPCError? {
            do {
                try parameter.check(value)
                return nil
            } catch {
                return error
            }
        }
        func accessorError(_ params: RPCParams, _ read: (RPCParams) throws(RPCError) -> Void) -> RPCError? {
            do {
                try read(params)
                return nil
            } catch {
                return error
            }
        }
        let cases: [(ControlParameter, [JSONValue?], (RPCParams) throws(RPCError) -> Void)] = [
            (.device, [nil, 42, "", .null], { params throws(RPCError) in _ = try params.string("device") }),
            (.app, [42, ""], { params throws(RPCError) in _ = try params.optionalString("app") }),
            (ControlParameter("limit", .integer, ""), ["ten", 1.5], { params throws(RPCError) in _ = try params.optionalInt("limit") }),
            (ControlParameter("events", .strings, ""), ["status", [1]], { params throws(RPCError) in _ = try params.optionalStrings("events") }),
            (
                ControlParameter("options", .stringMap, ""), [[1], ["visitorID": 1]],
                { params throws(RPCError) in _ = try params.stringMap("options") }
            ),
        ]
        for (parameter, values, read) in cases {
            for value in values {
                let params = RPCParams(object: value.map { [parameter.name: $0] } ?? [:])
                let expected = try #require(accessorError(params, read), "\(parameter.name) \(String(describing: value))")
                #expect(schemaError(parameter, value) == expected, "\(parameter.name) \(String(describing: value))")
            }
        }
        let mvpd = try #require(Self.table.method(named: "setSelectedProvider")?.parameters.first { $0.name == "mvpd" })
        #expect(schemaError(mvpd, nil)?.message == "missing 'mvpd' (an MVPD id, or null to cancel)")
        #expect(schemaError(mvpd, .null) == nil)
        #expect(schemaError(.app, .null) == nil)
    }

    /// The page's `rpc("method", {members})` calls, and the members `devices.add` is built from.
    @Test func everyCallOfTheConsoleIsInTheTable() throws {
        let page = String(decoding: PackageResources.index_html, as: UTF8.self)
        let call = try Regex(#"rpc\("([^"]*)"(?:,\s*\{([^}]*)\})?"#)
        let member = try Regex(#"(\w+)\s*:"#)
        var called: Set<String> = []
        for match in page.matches(of: call) {
            let name = try #require(match.output[1].substring.map(String.init))
            called.insert(name)
            let method = try #require(Self.table.method(named: name), "the console calls \(name), which the table does not list")
            let members = match.output[2].substring.map { $0.matches(of: member).compactMap { $0.output[1].substring.map(String.init) } } ?? []
            for name in members {
                #expect(method.parameters.contains { $0.name == name }, "\(method.name) has no parameter \(name)")
            }
        }
        #expect(called.isSuperset(of: ["daemon.status", "fleets.stats", "devices.list", "devices.get", "devices.add", "simulator.approve"]))
        #expect(called.count >= 12)

        // `devices.add` takes an object the page fills member by member.
        let add = try #require(Self.table.method(named: "devices.add"))
        let built = try Regex(#"params\.(\w+)\s*="#)
        let literal = try Regex(#"const params = \{([^}]*)\}"#)
        var members = page.matches(of: built).compactMap { $0.output[1].substring.map(String.init) }
        for match in page.matches(of: literal) {
            members += match.output[1].substring.map { $0.matches(of: member).compactMap { $0.output[1].substring.map(String.init) } } ?? []
        }
        #expect(members.count >= 3)
        for name in members {
            #expect(add.parameters.contains { $0.name == name }, "devices.add has no parameter \(name)")
        }
    }

    @Test func theAccessEnablerMethodsAreTheDeviceCommandsByName() {
        let methods = Set(Self.table.methods.filter { $0.tag == "AccessEnabler" }.map(\.name))
        // The TV Provider picker's answer is `vsa.pick`, a lab call, not an AccessEnabler call of an app.
        let commands = Set(DeviceCommand.Name.allCases.filter { $0 != .selectTVProvider }.map(\.rawValue))
        #expect(methods == commands)
        #expect(methods.count == 11)
    }
}
