import ControlSocket
import Foundation
import RegcodeEngine
import RegcodeTestSupport
import Testing

extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(2))) struct ScenarioTests {
        @Test func cycleLogsInAuthorizesPeriodicallyLogsOutAndAgain() async throws {
            let directory = try TemporaryDirectory()
            let config = directory.path("regcoded.yaml")
            try """
            simulator:
              listen: 127.0.0.1:0
              auto_approve_after: 1s
            fleets:
              - name: cyc
                count: 1
                scenario: cycle
                poll:
                  interval: 3s
                cycle:
                  hold: 4s
                  authorize_every: 1s
                  resource: REF30
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let database = directory.path("db.sqlite")
            let daemon = try ChildProcess("regcoded", ["--config", config, "--database", database, "--socket", directory.path("s.sock")])
            let logins = try await waitForLogins(2, in: database, daemon: daemon)
            #expect(logins == 2, "\(daemon.text.suffix(2000))")
            let names = try SQLiteShell.run(database, "SELECT name || ':' || ifnull(json_extract(args, '$.status'), '') FROM events ORDER BY seq")
                .split(
                    separator: "\n"
                ).map(String.init)
            let firstLogin = try #require(names.firstIndex(of: "setAuthenticationStatus:1"))
            let logout = try #require(names[firstLogin...].firstIndex(of: "setAuthenticationStatus:0"))
            let tokens = names[firstLogin..<logout].filter { $0.hasPrefix("setToken") }.count
            #expect(tokens >= 2, "authorized every second while holding: \(names)")
            #expect(names[logout...].contains("status:"), "a new code after logging out")
            let codes = try SQLiteShell.run(database, "SELECT group_concat(code || ':' || status) FROM codes")
            #expect(codes.split(separator: ",").count == 2, "\(codes)")
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit() == 0)
        }
    }
}
