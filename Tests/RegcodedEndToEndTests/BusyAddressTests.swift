import ControlSocket
import Foundation
import RegcodeTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket listening on 127.0.0.1 on a port the kernel picked, closed at the end of the test.
final class BusyPort {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        port = bound ? Int(UInt16(bigEndian: address.sin_port)) : 0
        try #require(bound, "cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
    }

    deinit { close(fd) }
}

extension EndToEnd {
    /// A start that cannot listen where it was told says which flag and address, exits 2, and creates nothing: no
    /// database, no simulator state, no key, no socket.
    @Suite(.serialized, .timeLimit(.minutes(2))) struct BusyAddressTests {
        static func files(in directory: TemporaryDirectory) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        }

        @Test(arguments: ["--simulator-listen", "--http", "--metrics"])
        func aBusyAddressNamesItsFlagExitsTwoAndCreatesNothing(flag: String) throws {
            let busy = try BusyPort()
            let directory = try TemporaryDirectory()
            let address = "127.0.0.1:\(busy.port)"
            var arguments = [
                "--database", directory.path("regcoded.sqlite"), "--socket", directory.path("regcoded.sock"), "--devices", "1",
                "--no-print-codes", flag, address,
            ]
            if flag != "--simulator-listen" { arguments += ["--simulator-listen", "127.0.0.1:0"] }
            let result = try Command.run(BuiltProducts.url("regcoded"), arguments)
            #expect(result.status == 2, "\(flag): \(result.stderr)")
            #expect(result.stderr.contains(flag), "\(flag): \(result.stderr)")
            #expect(result.stderr.contains(address), "\(flag): \(result.stderr)")
            #expect(result.stderr.contains("in use"), "\(flag): \(result.stderr)")
            #expect(try Self.files(in: directory) == [], "\(flag)")
        }

        /// The socket is another daemon's: the second one, on another database, leaves no database behind.
        @Test func aSecondDaemonOnAUsedSocketCreatesNothing() async throws {
            let directory = try TemporaryDirectory()
            let socket = directory.path("shared.sock")
            let first = try ChildProcess(
                "regcoded",
                SecondDaemonTests.daemonArguments(database: directory.path("first.sqlite"), socket: socket)
            )
            let deadline = ContinuousClock.now + .seconds(30)
            while await SecondDaemonTests.devices(at: socket) != 2 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            try #require(await SecondDaemonTests.devices(at: socket) == 2, "first regcoded did not start: \(first.text)")
            let before = try Self.files(in: directory)

            let result = try Command.run(
                BuiltProducts.url("regcoded"),
                SecondDaemonTests.daemonArguments(database: directory.path("second.sqlite"), socket: socket, devices: 1)
            )
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("\(socket) is in use"), "\(result.stderr)")
            #expect(try Self.files(in: directory) == before)
            #expect(await SecondDaemonTests.devices(at: socket) == 2)
            first.signal(SIGTERM)
            #expect(await first.waitForExit() == 0)
        }
    }
}
