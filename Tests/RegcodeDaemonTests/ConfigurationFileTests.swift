import DeviceFleet
import Foundation
import RegcodeEngine
import RegcodeStore
import RegcodeSupport
import Testing

@testable import RegcodeDaemon

@Suite struct ConfigurationFileTests {
    @Test func exampleConfigurationParses() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("examples/regcoded.yaml").path
        let configuration = try ConfigurationFile.load(path: example)
        try configuration.validate()
        #expect(configuration.fleets.count >= 2)
        #expect(configuration.fleets[0].poll.interval == .seconds(5))
    }

    @Test func defaultsApplyToEveryFleetAndFleetKeysOverride() throws {
        let yaml = """
            database: /tmp/x.sqlite
            defaults:
              requestor: NBC
              poll:
                interval: 10s
            fleets:
              - name: lab
                count: 3
              - name: fast
                count: 2
                requestor: CBS
                poll:
                  interval: 3s
                  jitter: 0
                  on_expiry: renew
                  renewals: 2
            """
        let configuration = try ConfigurationFile.parse(yaml, file: "x.yaml")
        #expect(configuration.database == "/tmp/x.sqlite")
        #expect(configuration.deviceNames == ["lab-1", "lab-2", "lab-3", "fast-1", "fast-2"])
        #expect(configuration.fleets[0].requestor == "NBC")
        #expect(configuration.fleets[0].poll.interval == .seconds(10))
        #expect(configuration.fleets[1].requestor == "CBS")
        #expect(configuration.fleets[1].poll.interval == .seconds(3))
        #expect(configuration.fleets[1].poll.onExpiry == .renew(times: 2))
    }

    @Test(arguments: [
        ("fleets:\n  - name: a\n    count: many\n", "fleets[0].count", "not a whole number"),
        ("fleets:\n  - name: a\n    poll:\n      interval: 2s\n", "fleets[0].poll", "3 s floor"),
        ("fleets:\n  - name: a\n    poll:\n      jitter: 0.9\n", "fleets[0].poll.jitter", "outside"),
        ("fleets:\n  - name: a\n    profile: v3\n", "fleets[0].profile", "not v2 or v1"),
        ("log_level: loud\n", "log_level", "not one of"),
        ("retention:\n  events: soon\n", "retention.events", "not a duration"),
        ("colour: blue\n", "colour", "unknown key"),
        ("timer_slack: 2s\n", "timer_slack", "at most 1s"),
        ("timer_slack: soon\n", "timer_slack", "not a duration"),
        ("fleet_loops: 0\n", "fleet_loops", "outside"),
        ("fleet_loops: 65\n", "fleet_loops", "outside"),
        ("poll_index: sometimes\n", "poll_index", "not one of device, none"),
        ("poll_index: NONE\n", "poll_index", "'NONE' is not one of device, none"),
        ("write_ahead: polls\n", "write_ahead", "'polls' is not one of requests, none"),
        ("fleets:\n  - name: a\n    scenario: dance\n", "fleets[0].scenario", "'dance' is not one of"),
        ("fleets:\n  - name: a\n    poll:\n      preset: Turbo\n", "fleets[0].poll.preset", "'Turbo' is not one of"),
        ("fleets: [\n", "(syntax)", "parser"),
        ("fleets:\n  - name: a\n    login: {provider: free}\n", "fleets[0].login.provider", "'free' is not one of regular, temppass"),
        ("fleets:\n  - name: a\n    login: {pick: temppass}\n", "fleets[0].login.pick", "unknown key"),
    ])
    func badConfigurationNamesKeyAndReason(yaml: String, key: String, reason: String) {
        do {
            _ = try ConfigurationFile.parse(yaml, file: "lab.yaml")
            Issue.record("accepted a bad configuration")
        } catch {
            #expect(error.file == "lab.yaml")
            #expect(error.key == key)
            #expect(error.reason.contains(reason))
        }
    }

    @Test func theLoginScenarioOptionsPickTempPassAndItsIdentity() throws {
        let yaml = """
            defaults:
              login: {provider: TempPass}
            fleets:
              - name: preview
                login: {temppass_email: lab@example.com}
              - name: regular
                login: {provider: regular}
            """
        let configuration = try ConfigurationFile.parse(yaml, file: "x.yaml")
        #expect(configuration.fleets.map(\.loginProvider) == [.tempPass, .regular])
        #expect(configuration.fleets.map(\.tempPassEmail) == ["lab@example.com", nil])
        #expect(try ConfigurationFile.parse("log_level: info\n", file: "x.yaml").fleets.first?.loginProvider == .regular)
    }

    @Test func timerSlackDefaultsToTenMillisecondsAndZeroTurnsItOff() throws {
        #expect(try ConfigurationFile.parse("log_level: info\n", file: "x.yaml").timerSlack == .milliseconds(10))
        #expect(try ConfigurationFile.parse("timer_slack: 0\n", file: "x.yaml").timerSlack == .zero)
        #expect(try ConfigurationFile.parse("timer_slack: 25ms\n", file: "x.yaml").timerSlack == .milliseconds(25))
    }

    @Test func fleetLoopsDefaultToOnePerCoreUnlessSet() throws {
        #expect(try ConfigurationFile.parse("log_level: info\n", file: "x.yaml").fleetLoops == nil)
        #expect(try ConfigurationFile.parse("fleet_loops: 1\n", file: "x.yaml").fleetLoops == 1)
        #expect(try ConfigurationFile.parse("fleet_loops: 64\n", file: "x.yaml").fleetLoops == 64)
    }

    @Test func writeAheadOfRequestsIsTheDefault() throws {
        #expect(try ConfigurationFile.parse("log_level: info\n", file: "x.yaml").writeAhead == .requests)
        #expect(try ConfigurationFile.parse("write_ahead: none\n", file: "x.yaml").writeAhead == WriteAhead.none)
    }

    @Test func pollIndexDefaultsToByDevice() throws {
        #expect(try ConfigurationFile.parse("log_level: info\n", file: "x.yaml").pollIndex == .device)
        #expect(try ConfigurationFile.parse("poll_index: none\n", file: "x.yaml").pollIndex == RegcodeStore.PollIndex.none)
        #expect(try ConfigurationFile.parse("poll_index: device\n", file: "x.yaml").pollIndex == .device)
        // Keys that read their value in any case still do.
        #expect(try ConfigurationFile.parse("log_level: DEBUG\n", file: "x.yaml").logLevel == .debug)
    }

    @Test func durationsReadAsConfigsWriteThem() {
        #expect(DurationParser.parse("5") == .seconds(5))
        #expect(DurationParser.parse("2.5") == .milliseconds(2500))
        #expect(DurationParser.parse("500ms") == .milliseconds(500))
        #expect(DurationParser.parse("2m") == .seconds(120))
        #expect(DurationParser.parse("7d") == .seconds(7 * 86400))
        #expect(DurationParser.parse("-1") == nil)
        #expect(DurationParser.parse("fast") == nil)
    }

    @Test func systemdDirectoriesProvideTheDefaults() {
        let configuration = DaemonConfiguration.defaults(environment: [
            "STATE_DIRECTORY": "/var/lib/regcoded", "RUNTIME_DIRECTORY": "/run/regcoded:/run/other",
        ])
        #expect(configuration.database == "/var/lib/regcoded/regcoded.sqlite")
        #expect(configuration.socket == "/run/regcoded/regcoded.sock")
        let plain = DaemonConfiguration.defaults(environment: [:])
        #expect(plain.database == "./regcoded.sqlite")
        #expect(plain.socket == "./regcoded.sock")
    }
}
