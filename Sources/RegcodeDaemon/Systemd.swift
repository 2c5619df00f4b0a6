import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// sd_notify(3) without libsystemd: one datagram per message to `$NOTIFY_SOCKET` (a path, or
/// `@name` for the abstract namespace). The protocol is stable and tiny, which is why it is
/// written here instead of linking libsystemd.
package struct SystemdNotifier: Sendable {
    package let socketPath: String?

    package init(environment: [String: String]) {
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        socketPath = path
    }

    package var isEnabled: Bool { socketPath != nil }

    /// Sends `state` (e.g. `READY=1`) without waiting; returns false when there is no socket, sending
    /// failed, or the listener's queue is full.
    @discardableResult
    package func notify(_ state: String) -> Bool {
        guard let socketPath else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: pathBytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                // Never waits: a full queue (a listener that stopped reading) would block the thread, and the
                // thread is one of the few that run every device. A dropped STATUS= is harmless.
                sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), socketAddress, length)
            }
        }
        return sent == bytes.count
    }

    /// Half the watchdog period systemd asked for, when it asked this process.
    package static func watchdogInterval(environment: [String: String]) -> Duration? {
        guard let usecText = environment["WATCHDOG_USEC"], let usec = UInt64(usecText), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], Int32(pid) != getpid() { return nil }
        return .microseconds(Int64(usec / 2))
    }
}

/// Socket activation (sd_listen_fds(3)): the descriptors systemd passed, when they are ours.
package enum SocketActivation {
    package static let firstDescriptor: CInt = 3

    /// The listening descriptor to serve: the one named `control` in `LISTEN_FDNAMES`, else the
    /// first. `nil` when the process was not socket-activated.
    package static func controlDescriptor(environment: [String: String]) -> CInt? {
        guard let pidText = environment["LISTEN_PID"], let pid = Int32(pidText), pid == getpid(),
            let countText = environment["LISTEN_FDS"], let count = Int32(countText), count > 0
        else { return nil }
        let names = environment["LISTEN_FDNAMES"]?.split(separator: ":", omittingEmptySubsequences: false).map(String.init) ?? []
        let index = names.firstIndex(of: "control").map { CInt($0) } ?? 0
        guard index < count else { return firstDescriptor }
        let fd = firstDescriptor + index
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }

    /// Children must not think the descriptors are theirs.
    package static func clearEnvironment() {
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
    }
}
