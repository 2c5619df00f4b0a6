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
}
