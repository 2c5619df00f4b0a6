import Foundation
import RegcodeTestSupport
import Testing

/// `regcodectl apps` and `regcodectl explain` against the fake control socket answering `apps.list`
/// and `sso.explain`.
@Suite(.enabled(if: BuiltProducts.isBuilt("regcodectl"), "regcodectl is not built next to the test bundle"))
struct SingleSignOnCommandTests {
    /// Runs regcodectl with `arguments`, answers its one request with `result`; returns the request and stdout.
    static func run(_ arguments: [String], answering result: String) throws -> (request: [String: Any], stdout: String) {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("sso-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socketPath = directory.appendingPathComponent("ctl.sock").path
        let server = try FakeControlSocket(path: socketPath)
        defer { server.close() }
        let command = try RunningCommand(BuiltProducts.url("regcodectl"), arguments + ["--socket", socketPath], in: directory)
        defer { command.stop() }
        let connection = try server.accept(timeout: 10)
        defer { connection.close() }
        let request = try #require(try JSONSerialization.jsonObject(with: Data(try connection.readLine(timeout: 10).utf8)) as? [String: Any])
        let id = try #require(request["id"] as? Int)
        try connection.write(#"{"jsonrpc":"2.0","id":\#(id),"result":\#(result)}"# + "\n")
        #expect(command.waitForExit(timeout: 10))
        #expect(command.process.terminationStatus == 0, "\(command.stderr)")
        return (request, command.stdout)
    }

    @Test func appsPrintsOneRowPerApp() throws {
        let answer = """
            {"device":"sso-1","apps":[\
            {"app":"A","state":"idle","deviceId":"0123456789abcdef0123456789abcdef","domain":"team:T1","authenticated":"Comcast_SSO",\
            "bundleId":"com.x.y.AppA","teamId":"T1","requestor":"REF","accessEnabler":"2.5.0","installSource":"appStore","vendorGeneration":1},\
            {"app":"B","state":"idle","deviceId":"0123456789abcdef0123456789abcdef","domain":"team:T1","authenticated":null,\
            "bundleId":"com.x.y.AppB","teamId":"T1","requestor":"REF","accessEnabler":"2.5.0","installSource":"appStore","vendorGeneration":1}]}
            """
        let (request, stdout) = try Self.run(["apps", "sso-1"], answering: answer)
        #expect(request["method"] as? String == "apps.list")
        #expect((request["params"] as? [String: Any])?["device"] as? String == "sso-1")
        let rows = stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.count == 3)
        #expect(rows.first?.first == "APP")
        #expect(rows.dropFirst().first == ["A", "com.x.y.AppA", "T1", "2.5.0", "idle", "team:T1", "1", "0123456789ab…", "Comcast_SSO"])
        #expect(rows.last?.last == "-", "B is not signed in")
    }

    @Test func explainShowsTheDomainDeviceIDAndEachCandidate() throws {
        let answer = """
            {"device":"sso-1","app":"B","sharing":true,"domain":"team:T1","rule":"iosPasteboardTeam","faithful":true,\
            "deviceId":"fedcba9876543210fedcba9876543210","idfv":"6F1C0000-0000-5000-8000-000000000000","idfvVendorKey":"T1|com.z",\
            "candidates":[{"domain":"team:T1","owner":"A","ownerBundleId":"com.x.y.AppA","boundDeviceId":"0123456789abcdef0123456789abcdef",\
            "requestor":"REF","mvpd":"Comcast_SSO","tokenSource":"Adobe","format":"v1","expires":0,"usable":false,"reason":"deviceIdMismatch"}]}
            """
        let (request, stdout) = try Self.run(["explain", "sso-1", "--app", "B"], answering: answer)
        #expect(request["method"] as? String == "sso.explain")
        let params = request["params"] as? [String: Any]
        #expect(params?["device"] as? String == "sso-1")
        #expect(params?["app"] as? String == "B")
        let lines = stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "sso-1/B")
        #expect(lines.contains { $0.contains("domain") && $0.contains("team:T1") && $0.contains("faithful") })
        #expect(lines.contains { $0.contains("device id") && $0.contains("fedcba9876543210fedcba9876543210") })
        #expect(lines.contains { $0.contains("T1|com.z") })
        let candidate = try #require(lines.last).split(separator: " ").map(String.init)
        #expect(candidate == ["A", "Comcast_SSO", "REF", "0123456789ab…", "no", "deviceIdMismatch"])
    }

    @Test func explainWithoutAppsSaysNothingIsShared() throws {
        let answer = #"{"device":"stb-1","app":"main","sharing":false,"reason":"the device hosts one plain app"}"#
        let (request, stdout) = try Self.run(["explain", "stb-1"], answering: answer)
        #expect((request["params"] as? [String: Any])?["app"] == nil)
        #expect(stdout == "stb-1/main: the device hosts one plain app\n")
    }
}
