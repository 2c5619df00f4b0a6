import ControlSocket
import Foundation
import RegcodeSupport
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--shard K/N` with the real executables: three `regcoded` on one configuration and one `pass-sim`
/// run every device exactly once, as an unsharded run would have made it, and their reports merge.
extension EndToEnd {
    @Suite(.serialized, .timeLimit(.minutes(3))) struct ShardingEndToEndTests {
        /// A fleet of 30 plus two one-device fleets (named devices: `lab-tv-1`, `den-1`).
        static let configuration = """
            print_codes: false
            fleets:
              - name: stb
                count: 30
              - name: lab-tv
                count: 1
              - name: den
                count: 1
            """
        static let allDevices = Set((1...30).map { "stb-\($0)" } + ["lab-tv-1", "den-1"])
        /// What a device is, apart from the random device id and jitter seed every new device draws.
        static let identitySQL =
            "SELECT name, fleet, client_address, device_info, profile, requestor, scenario, settings FROM devices WHERE added_at_runtime = 0 ORDER BY name"

        static func daemon(_ directory: TemporaryDirectory, name: String, backend: String, extra: [String]) throws -> ChildProcess {
            try ChildProcess(
                "regcoded",
                [
                    "--config", directory.path("fleet.yaml"), "--backend", backend,
                    "--database", directory.path("\(name).sqlite"), "--socket", directory.path("\(name).sock"),
                ] + extra
            )
        }

        static func call(_ socket: String, _ method: String) async -> JSONValue? {
            try? await ControlClient.withConnection(to: socket) { try await $0.call(method: method) }
        }

        static func deviceNames(_ socket: String) async -> [String] {
            guard case .array(let devices)? = await call(socket, "devices.list")?["devices"] else { return [] }
            return devices.compactMap { $0["device"]?.stringValue ?? $0["name"]?.stringValue }
        }

        /// Devices of `database` with a code (pending or answered).
        static func devicesWithCode(_ database: String) -> Int {
            Int((try? SQLiteShell.run(database, "SELECT count(DISTINCT device) FROM codes")) ?? "") ?? 0
        }

        static func report(_ databases: [String]) throws -> JSONValue {
            let run = try Command.run(BuiltProducts.url("regcodectl"), ["report", "--format", "json"] + databases.flatMap { ["--database", $0] })
            #expect(run.status == 0, "\(run.stderr)")
            return try JSONValueParser.parse(run.stdout.utf8, numbers: .integralAsInt)
        }

        /// Figures that add up exactly across shards.
        static func additiveFigures(_ report: JSONValue) -> [String: Int64] {
            let fleet = report["fleet"]
            var figures: [String: Int64] = [
                "devices": fleet?["devices"]?.intValue ?? -1,
                "polls": fleet?["polls"]?.intValue ?? -1,
                "codes": fleet?["codes"]?.intValue ?? -1,
                "codes_issued": fleet?["onboarding"]?["codes_issued"]?.intValue ?? -1,
                "devices_with_code": fleet?["onboarding"]?["devices_with_code"]?.intValue ?? -1,
                "registrations_ok": fleet?["onboarding"]?["registrations_ok"]?.intValue ?? -1,
                "requests": fleet?["requests"]?["total"]?.intValue ?? -1,
            ]
            if case .object(let statuses)? = fleet?["http_statuses"] {
                for (status, count) in statuses { figures["http_\(status)"] = count.intValue ?? -1 }
            }
            return figures
        }

        @Test func threeShardsRunEveryDeviceOnceAndTheirReportsMerge() async throws {
            let directory = try TemporaryDirectory()
            try Self.configuration.write(toFile: directory.path("fleet.yaml"), atomically: true, encoding: .utf8)
            let simulator = try await PassSimProcess.start(["--no-throttle"])
            let names = ["s0", "s1", "s2"]
            let daemons = try names.enumerated().map { index, name in
                try Self.daemon(
                    directory,
                    name: name,
                    backend: simulator.url,
                    extra: ["--shard", "\(index)/3", "--metrics", "127.0.0.1:0", "--software-statement", simulator.statementFile]
                )
            }
            let databases = names.map { directory.path("\($0).sqlite") }

            // Every device of every shard shows a code.
            let deadline = ContinuousClock.now + .seconds(90)
            while databases.map(Self.devicesWithCode).reduce(0, +) < Self.allDevices.count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(250))
            }
            try #require(
                databases.map(Self.devicesWithCode).reduce(0, +) == Self.allDevices.count,
                "\(daemons.map(\.text).joined(separator: "\n---\n"))"
            )

            // Each device in exactly one shard; together, the whole configuration.
            var slices: [[String]] = []
            for (index, name) in names.enumerated() {
                let socket = directory.path("\(name).sock")
                slices.append(await Self.deviceNames(socket))
                #expect(await Self.call(socket, "daemon.status")?["shard"] == .string("\(index)/3"))
                #expect(daemons[index].text.contains("shard=\(index)/3"), "the start-up line names the shard")
            }
            let union = slices.flatMap { $0 }
            #expect(union.count == Self.allDevices.count, "\(slices)")
            #expect(Set(union) == Self.allDevices)
            // Balanced: 30 members split 10/10/10, the two one-device fleets land somewhere.
            for slice in slices { #expect(slice.filter { $0.hasPrefix("stb-") }.count == 10, "\(slice)") }

            // The shard label on one shard's metrics.
            let marker = "metrics.url=http://127.0.0.1:"
            let after = try #require(daemons[1].text.range(of: marker)).upperBound
            let port = try #require(Int(daemons[1].text[after...].prefix { $0.isNumber }))
            let (body, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
            let metrics = String(decoding: body, as: UTF8.self)
            #expect(metrics.contains(#"regcoded_devices{shard="1/3",state="#), "\(metrics)")
            #expect(!metrics.contains("\nregcoded_devices{state="))

            // SIGHUP reloads the configuration and keeps the slice.
            daemons[0].signal(SIGHUP)
            #expect(await daemons[0].waitForOutput("configuration reloaded"), "\(daemons[0].text)")
            #expect(Set(await Self.deviceNames(directory.path("s0.sock"))) == Set(slices[0]))

            for daemon in daemons { daemon.signal(SIGTERM) }
            for daemon in daemons { #expect(await daemon.waitForExit() == 0, "\(daemon.text)") }

            // The merged report is the sum of the three.
            let merged = Self.additiveFigures(try Self.report(databases))
            var summed: [String: Int64] = [:]
            for database in databases {
                for (key, value) in Self.additiveFigures(try Self.report([database])) { summed[key, default: 0] += value }
            }
            #expect(merged == summed)
            #expect(merged["devices"] == Int64(Self.allDevices.count))
            #expect(merged["devices_with_code"] == Int64(Self.allDevices.count))
            #expect((merged["polls"] ?? 0) > 0)

            // An unsharded run on the same configuration makes the same devices: names, fleets,
            // emulated client addresses, device info and settings.
            let whole = try Self.daemon(directory, name: "whole", backend: simulator.url, extra: ["--software-statement", simulator.statementFile])
            let wholeDatabase = directory.path("whole.sqlite")
            let wholeDeadline = ContinuousClock.now + .seconds(30)
            while await Self.call(directory.path("whole.sock"), "daemon.status")?["starting"] != .bool(false), ContinuousClock.now < wholeDeadline {
                try await Task.sleep(for: .milliseconds(200))
            }
            whole.signal(SIGTERM)
            #expect(await whole.waitForExit() == 0, "\(whole.text)")
            let unsharded = try SQLiteShell.run(wholeDatabase, Self.identitySQL).split(separator: "\n").map(String.init)
            let sharded = try databases.flatMap { try SQLiteShell.run($0, Self.identitySQL).split(separator: "\n").map(String.init) }
            #expect(unsharded.count == Self.allDevices.count)
            #expect(sharded.sorted() == unsharded.sorted())
            let addresses = try databases.flatMap { try SQLiteShell.run($0, "SELECT client_address FROM devices").split(separator: "\n") }
            #expect(Set(addresses).count == Self.allDevices.count, "no two shards bind the same client address")

            // A database stays with its slice: another shard, or none, is refused before anything changes.
            let before = try SQLiteShell.run(databases[0], Self.identitySQL)
            let refusedStart = { (database: String, extra: [String]) in
                try Command.run(
                    BuiltProducts.url("regcoded"),
                    [
                        "--config", directory.path("fleet.yaml"), "--backend", simulator.url, "--database", database,
                        "--socket", directory.path("x.sock"),
                    ] + extra
                )
            }
            for extra in [["--shard", "1/3"], [], ["--shard", "0/2"]] {
                let run = try refusedStart(databases[0], extra)
                #expect(run.status == 2, "\(extra): \(run.stderr)")
                #expect(run.stderr.contains("holds the devices of shard 0/3"), "\(run.stderr)")
            }
            #expect(try SQLiteShell.run(databases[0], Self.identitySQL) == before)
            let unshardedRun = try refusedStart(wholeDatabase, ["--shard", "2/3"])
            #expect(unshardedRun.status == 2, "\(unshardedRun.stderr)")
            #expect(unshardedRun.stderr.contains("holds an unsharded fleet"), "\(unshardedRun.stderr)")
            simulator.process.signal(SIGTERM)
        }

        @Test func badShardsExitWithTwoBeforeTheDatabaseIsCreated() throws {
            let directory = try TemporaryDirectory()
            let database = directory.path("never.sqlite")
            for shard in ["3/3", "0/0", "-1/3", "1", "a/b", "1/3/3"] {
                let run = try Command.run(
                    BuiltProducts.url("regcoded"),
                    ["--database", database, "--socket", directory.path("x.sock"), "--simulator-listen", "127.0.0.1:0", "--shard", shard]
                )
                #expect(run.status == 2, "\(shard): \(run.stderr)")
                #expect(run.stderr.contains("--shard"), "\(shard): \(run.stderr)")
            }
            try "shard: 2/2\n".write(toFile: directory.path("bad.yaml"), atomically: true, encoding: .utf8)
            let fromFile = try Command.run(
                BuiltProducts.url("regcoded"),
                ["--config", directory.path("bad.yaml"), "--database", database, "--socket", directory.path("x.sock")]
            )
            #expect(fromFile.status == 2)
            #expect(fromFile.stderr.contains("bad.yaml: shard:"), "\(fromFile.stderr)")
            #expect(!FileManager.default.fileExists(atPath: database))
        }
    }
}
