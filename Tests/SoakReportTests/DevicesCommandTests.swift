import Foundation
import RegcodeTestSupport
import Testing

/// `regcodectl devices` against the fake control socket answering `devices.list`.
@Suite(.enabled(if: BuiltProducts.isBuilt("regcodectl"), "regcodectl is not built next to the test bundle"))
struct DevicesCommandTests {
    @Test func devicesAreListedInNaturalNameOrder() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("devices-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socketPath = directory.appendingPathComponent("ctl.sock").path
        let server = try FakeControlSocket(path: socketPath)
        defer { server.close() }

        // The daemon lists devices oldest first, which is not name order.
        let names = ["stb-10", "stb-2", "lab-1", "stb-1", "stb-100", "stb-02x"]
        let devices = names.map { #"{"device":"\#($0)","state":"polling","code":"C-\#($0)","polls":3,"lastHttpStatus":200}"# }
        let answer = #"{"jsonrpc":"2.0","id":1,"result":{"devices":[\#(devices.joined(separator: ","))]}}"#

        let command = try RunningCommand(BuiltProducts.url("regcodectl"), ["devices", "--socket", socketPath], in: directory)
        defer { command.stop() }
        let connection = try server.accept(timeout: 10)
        defer { connection.close() }
        let request = try JSONSerialization.jsonObject(with: Data(try connection.readLine(timeout: 10).utf8)) as? [String: Any]
        #expect(request?["method"] as? String == "devices.list")
        try connection.write(answer + "\n")
        #expect(command.waitForExit(timeout: 10))
        #expect(command.process.terminationStatus == 0, "\(command.stderr)")
        let rows = command.stdout.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(rows == ["DEVICE", "lab-1", "stb-1", "stb-2", "stb-02x", "stb-10", "stb-100"])
    }

    /// Runs `regcodectl devices` and answers its `devices.list` with `devices` (JSON objects); returns stdout.
    static func list(_ devices: [String]) throws -> String {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("devices-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socketPath = directory.appendingPathComponent("ctl.sock").path
        let server = try FakeControlSocket(path: socketPath)
        defer { server.close() }
        let command = try RunningCommand(BuiltProducts.url("regcodectl"), ["devices", "--socket", socketPath], in: directory)
        defer { command.stop() }
        let connection = try server.accept(timeout: 10)
        defer { connection.close() }
        let request = try JSONSerialization.jsonObject(with: Data(try connection.readLine(timeout: 10).utf8)) as? [String: Any]
        let id = try #require(request?["id"] as? Int)
        try connection.write(#"{"jsonrpc":"2.0","id":\#(id),"result":{"devices":[\#(devices.joined(separator: ","))]}}"# + "\n")
        #expect(command.waitForExit(timeout: 10))
        #expect(command.process.terminationStatus == 0, "\(command.stderr)")
        return command.stdout
    }

    static var nowMs: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    @Test func countdownAgeFleetAndLastOutcomeAreShown() throws {
        let now = Self.nowMs
        let device = """
            {"device":"stb-1","fleet":"lab","state":"polling","code":"X7K2Q9P","expires":\(now + 600_000),"polls":4,\
            "lastHttpStatus":429,"lastPoll":\(now - 3_000),"mvpd":"Cablevision",\
            "lastOutcome":{"at":\(now - 3_000),"kind":"throttled","text":"registration 429 (retry in 8 s)","why":"E429"}}
            """
        let rows = try DeviceTable(Self.list([device]))
        let row = try #require(rows.rows.first)
        #expect(row["DEVICE"] == "stb-1")
        #expect(row["FLEET"] == "lab")
        #expect(row["STATE"] == "polling")
        #expect(row["CODE"] == "X7K2Q9P")
        #expect(row["EXPIRES"].map { ["9m59s", "9m58s", "9m57s"].contains($0) } == true, "\(row)")
        #expect(row["POLLS"] == "4")
        #expect(row["LAST POLL"].map { ["3s ago", "4s ago", "5s ago"].contains($0) } == true, "\(row)")
        #expect(row["HTTP"] == "429")
        #expect(row["LAST OUTCOME"] == "registration 429 (retry in 8 s) — E429")
    }

    /// A code past its expiry reads `expired`, in EXPIRES and in STATE: never a countdown, never `ready`.
    @Test func anExpiredCodeShowsExpired() throws {
        let now = Self.nowMs
        let devices = [
            #"{"device":"stb-1","fleet":null,"state":"polling","code":"AAAAAAA","expires":\#(now - 1),"polls":60,"lastHttpStatus":404,"lastPoll":\#(now - 1000),"mvpd":null,"lastOutcome":null}"#,
            #"{"device":"stb-2","fleet":null,"state":"ready","code":"BBBBBBB","expires":\#(now - 120_000),"polls":60,"lastHttpStatus":404,"lastPoll":null,"mvpd":null,"lastOutcome":null}"#,
            #"{"device":"stb-3","fleet":null,"state":"ready","code":null,"expires":null,"polls":0,"lastHttpStatus":404,"lastPoll":null,"mvpd":null,"lastOutcome":{"at":\#(now),"kind":"expired","text":"code expired","why":null}}"#,
            #"{"device":"stb-4","fleet":null,"state":"ready","code":null,"expires":null,"polls":0,"lastHttpStatus":null,"lastPoll":null,"mvpd":null,"lastOutcome":null}"#,
        ]
        let table = try DeviceTable(Self.list(devices))
        #expect(table.rows.map { $0["DEVICE"] } == ["stb-1", "stb-2", "stb-3", "stb-4"])
        #expect(table.rows.map { $0["STATE"] } == ["expired", "expired", "expired", "ready"])
        #expect(table.rows.map { $0["EXPIRES"] } == ["expired", "expired", "-", "-"])
        #expect(table.rows[2]["LAST OUTCOME"] == "code expired")
        #expect(table.rows[3]["LAST OUTCOME"] == "-")
    }

    /// An older daemon sends neither fleet, last poll nor last outcome.
    @Test func fieldsAnOlderDaemonDoesNotSendShowADash() throws {
        let table = try DeviceTable(
            Self.list([#"{"device":"stb-1","state":"authenticated","code":null,"expires":null,"polls":0,"lastHttpStatus":200}"#])
        )
        #expect(table.header == ["DEVICE", "FLEET", "STATE", "CODE", "EXPIRES", "POLLS", "LAST POLL", "HTTP", "LAST OUTCOME"])
        #expect(
            table.rows.first == [
                "DEVICE": "stb-1", "FLEET": "-", "STATE": "authenticated", "CODE": "-", "EXPIRES": "-", "POLLS": "0",
                "LAST POLL": "-", "HTTP": "200", "LAST OUTCOME": "-",
            ]
        )
    }

    @Test func longFieldsAreCutToFit120Columns() throws {
        let now = Self.nowMs
        let longName = "living-room-set-top-box-number-1"
        let longText = String(repeating: "a very long outcome text ", count: 10)
        let device = """
            {"device":"\(longName)","fleet":"a-fleet-with-a-long-name","state":"selecting-provider","code":null,"expires":null,\
            "polls":0,"lastHttpStatus":null,"lastPoll":\(now),"mvpd":null,\
            "lastOutcome":{"at":\(now),"kind":"error","text":"\(longText)","why":"\(longText)"}}
            """
        let stdout = try Self.list([device])
        let lines = stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.count <= 120 }, "\(lines.map(\.count))")
        let row = try #require(DeviceTable(stdout).rows.first)
        #expect(row["DEVICE"].map { $0.hasSuffix("…") && longName.hasPrefix($0.dropLast()) } == true, "\(row)")
        #expect(row["FLEET"].map { $0.hasSuffix("…") } == true)
        #expect(row["STATE"] == "selecting-provider", "a state is never cut")
        #expect(row["LAST OUTCOME"].map { $0.hasSuffix("…") && $0.hasPrefix("a very long outcome text") } == true)
    }

    /// `--watch` through a file: each table is written as it is drawn, and the next refresh shows the new state;
    /// when the daemon goes away, regcodectl says so and exits 3.
    @Test func watchRedrawsWithChangedDataUntilTheDaemonGoesAway() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("devices-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socketPath = directory.appendingPathComponent("ctl.sock").path
        let server = try FakeControlSocket(path: socketPath)
        defer { server.close() }
        let command = try RunningCommand(
            BuiltProducts.url("regcodectl"),
            ["devices", "--watch", "--interval", "50ms", "--socket", socketPath],
            in: directory
        )
        defer { command.stop() }
        let connection = try server.accept(timeout: 10)
        defer { connection.close() }

        let now = Self.nowMs
        let answers = [
            #"{"device":"stb-1","state":"polling","code":"X7K2Q9P","expires":\#(now + 600_000),"polls":1,"lastHttpStatus":404}"#,
            #"{"device":"stb-1","state":"authenticated","code":null,"expires":null,"polls":0,"lastHttpStatus":200}"#,
        ]
        for (index, device) in answers.enumerated() {
            let request = try JSONSerialization.jsonObject(with: Data(try connection.readLine(timeout: 10).utf8)) as? [String: Any]
            #expect(request?["method"] as? String == "devices.list")
            let id = try #require(request?["id"] as? Int)
            try connection.write(#"{"jsonrpc":"2.0","id":\#(id),"result":{"devices":[\#(device)]}}"# + "\n")
            // Two lines of table and a blank line per refresh, in the file before the next request.
            let lines = try #require(command.waitForLines(3 * (index + 1), timeout: 10), "refresh \(index + 1) was not written")
            #expect(lines.last == "")
        }
        #expect(command.process.isRunning)
        _ = try connection.readLine(timeout: 10)
        connection.close()
        #expect(command.waitForExit(timeout: 10))
        #expect(command.process.terminationStatus == 3)
        #expect(command.stderr == "regcodectl: the daemon at \(socketPath) went away\n")

        let tables = command.stdout.components(separatedBy: "\n\n").filter { !$0.isEmpty }
        #expect(tables.count == 2)
        let first = try DeviceTable(tables[0])
        let second = try DeviceTable(tables[1])
        #expect(first.rows.map { $0["STATE"] } == ["polling"])
        #expect(first.rows.first?["CODE"] == "X7K2Q9P")
        #expect(second.rows.map { $0["STATE"] } == ["authenticated"])
        #expect(second.rows.first?["CODE"] == "-")
    }
}

/// A table as regcodectl prints it, read back by the header's column positions (cells may hold spaces).
struct DeviceTable {
    var header: [String]
    var rows: [[String: String]]

    init(_ text: String) throws {
        let lines = text.split(separator: "\n").map { Array(String($0)) }
        let headerLine = try #require(lines.first)
        // Columns start where a header name starts after two or more spaces.
        var starts: [Int] = [0]
        var index = 0
        while index < headerLine.count {
            if headerLine[index] == " ", index + 1 < headerLine.count, headerLine[index + 1] == " " {
                while index < headerLine.count, headerLine[index] == " " { index += 1 }
                starts.append(index)
            }
            index += 1
        }
        func cells(_ line: [Character]) -> [String] {
            starts.enumerated().map { column, start in
                let end = column + 1 < starts.count ? min(starts[column + 1], line.count) : line.count
                guard start < end else { return "" }
                return String(line[start..<end]).trimmingCharacters(in: .whitespaces)
            }
        }
        let names = cells(headerLine)
        header = names
        rows = lines.dropFirst().map { line in
            Dictionary(uniqueKeysWithValues: zip(names, cells(line)))
        }
    }
}
