import Foundation
import Testing

@testable import RegcodeDaemon

#if canImport(Glibc)
import Glibc
#endif

/// Loopback is decided by the addresses a host resolves to, never by how its name looks.
@Suite struct ListenAddressTests {
    @Test func loopbackIsEveryResolvedAddressOnLoopback() {
        let mapped: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1]
        let one: [UInt8] = Array(repeating: 0, count: 15) + [1]
        #expect(ListenAddress.isLoopback([.v4(127, 0, 0, 1)]))
        #expect(ListenAddress.isLoopback([.v4(127, 1, 2, 3), .v6(one), .v6(mapped)]))
        #expect(!ListenAddress.isLoopback([]), "a name that resolves to nothing is not loopback")
        #expect(!ListenAddress.isLoopback([.v4(10, 0, 0, 1)]))
        // A name under 127. that resolves to another host, or to loopback and another host, is not loopback.
        #expect(!ListenAddress.isLoopback([.v4(127, 0, 0, 1), .v4(203, 0, 113, 7)]))
        #expect(!ListenAddress.isLoopback([.v6(Array(repeating: 0, count: 16))]), ":: is every address")
        #expect(!ListenAddress.isLoopback([.v4(0, 0, 0, 0)]))
    }

    @Test func namesAreResolvedNotRead() {
        #expect(ListenAddress.isLoopback(host: "127.0.0.1"))
        #expect(ListenAddress.isLoopback(host: "::1"))
        #expect(ListenAddress.isLoopback(host: "localhost"))
        #expect(!ListenAddress.isLoopback(host: "0.0.0.0"))
        // `.invalid` never resolves (RFC 6761): the old `127.` prefix rule called this loopback.
        #expect(!ListenAddress.isLoopback(host: "127.0.0.1.invalid"))
        #expect(ListenAddress.resolve(host: "127.0.0.1") == [.v4(127, 0, 0, 1)])
    }

    @Test func configurationOffLoopbackNeedsATokenFile() throws {
        var configuration = DaemonConfiguration()
        configuration.http = "127.0.0.1.invalid:8081"
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.httpTokenFile = "/etc/regcoded/http-token"
        try configuration.validate()
        configuration.http = "127.0.0.1:8081"
        configuration.httpAuth = .none
        let conflict = #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(conflict?.key == "http_auth")
        configuration.httpTokenFile = nil
        try configuration.validate()
    }

    /// The listeners' addresses are bound once before any file exists: a busy one names its flag.
    @Test func aBusyAddressIsNamedWithItsFlag() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(listening)
        let port = Int(UInt16(bigEndian: address.sin_port))
        var configuration = DaemonConfiguration()
        configuration.simulatorPort = 0
        configuration.metrics = "127.0.0.1:\(port)"
        let error = #expect(throws: ConfigurationError.self) { try ListenAddress.checkAvailable(configuration) }
        #expect(error?.key == "metrics (--metrics)")
        #expect(error?.reason.hasPrefix("127.0.0.1:\(port) is already in use") == true)
        #expect(ListenAddress.bindProblem(.v4(127, 0, 0, 1), port: port) == EADDRINUSE)
        configuration.metrics = "127.0.0.1:0"
        try ListenAddress.checkAvailable(configuration)
    }
}
