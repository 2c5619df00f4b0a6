import ControlRPC
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension PeerCredentials {
    /// Reads the credentials of a connected Unix-domain stream channel.
    static func of(_ channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(PeerCredentialsUnavailable())
        }
        #if os(Linux) || os(Android)
        // `struct ucred` is hidden behind _GNU_SOURCE in the Glibc module; a tuple has the same C layout
        // (pid_t, uid_t, gid_t) and tuples, unlike Swift structs, keep their element order.
        let future: EventLoopFuture<(pid_t, uid_t, gid_t)> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET),
            name: SocketOptionName(SO_PEERCRED)
        )
        return future.map { PeerCredentials(pid: $0.0, uid: $0.1, gid: $0.2) }
        #elseif canImport(Darwin)
        let credentials: EventLoopFuture<xucred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_LOCAL),
            name: SocketOptionName(LOCAL_PEERCRED)
        )
        let pid: EventLoopFuture<pid_t> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_LOCAL),
            name: SocketOptionName(LOCAL_PEERPID)
        )
        return credentials.and(pid).map { credentials, pid in
            PeerCredentials(pid: pid, uid: credentials.cr_uid, gid: credentials.cr_groups.0)
        }
        #else
        return channel.eventLoop.makeFailedFuture(PeerCredentialsUnavailable())
        #endif
    }
}

struct PeerCredentialsUnavailable: Error {}

/// Decides which peers may use the control socket.
package struct PeerPolicy: Sendable {
    private let decide: @Sendable (PeerCredentials) -> Bool

    /// A policy from an arbitrary decision, e.g. to refuse everyone in a test.
    package init(_ decide: @escaping @Sendable (PeerCredentials) -> Bool) {
        self.decide = decide
    }

    /// Whether `peer` may use the socket.
    package func allows(_ peer: PeerCredentials) -> Bool {
        self.decide(peer)
    }

    /// The default: the daemon's own user (effective uid), root, and members of `groupID` when one is configured.
    ///
    /// Membership means the peer's primary group is `groupID`, or the peer's user is listed as a member of that group
    /// in the group database. Supplementary groups of the peer process itself are not visible through `SO_PEERCRED`.
    package static func ownerRootOrGroup(_ groupID: gid_t?, ownerUID: uid_t = geteuid()) -> PeerPolicy {
        PeerPolicy { peer in
            if peer.uid == ownerUID || peer.uid == 0 { return true }
            guard let groupID else { return false }
            if peer.gid == groupID { return true }
            return UserDatabase.isListedMember(uid: peer.uid, ofGroup: groupID)
        }
    }
}

/// Reentrant look-ups in the user and group databases (NSS may be slow, so never call these on an event loop).
enum UserDatabase {
    /// Whether the user `uid` is listed in the member list of group `gid`.
    static func isListedMember(uid: uid_t, ofGroup gid: gid_t) -> Bool {
        guard let name = self.userName(uid: uid), let members = self.groupMembers(gid: gid) else { return false }
        return members.contains(name)
    }

    static func userName(uid: uid_t) -> String? {
        self.withLookupBuffer { buffer in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            let status = getpwuid_r(uid, &entry, buffer.baseAddress!, buffer.count, &result)
            guard status == 0 else { return .retry(status) }
            guard result != nil, let name = entry.pw_name else { return .done(nil) }
            return .done(String(cString: name))
        } ?? nil
    }

    static func groupMembers(gid: gid_t) -> [String]? {
        self.withLookupBuffer { buffer in
            var entry = group()
            var result: UnsafeMutablePointer<group>?
            let status = getgrgid_r(gid, &entry, buffer.baseAddress!, buffer.count, &result)
            guard status == 0 else { return .retry(status) }
            guard result != nil else { return .done(nil) }
            var members: [String] = []
            if var cursor = entry.gr_mem {
                while let member = cursor.pointee {
                    members.append(String(cString: member))
                    cursor += 1
                }
            }
            return .done(members)
        } ?? nil
    }

    static func groupID(named name: String) -> gid_t? {
        self.withLookupBuffer { buffer in
            var entry = group()
            var result: UnsafeMutablePointer<group>?
            let status = getgrnam_r(name, &entry, buffer.baseAddress!, buffer.count, &result)
            guard status == 0 else { return .retry(status) }
            return .done(result == nil ? nil : entry.gr_gid)
        } ?? nil
    }

    private enum Attempt<T> {
        case done(T)
        case retry(CInt)
    }

    /// Runs a `get*_r` call with a growing scratch buffer; nil when the look-up fails for a reason other than ERANGE.
    private static func withLookupBuffer<T>(_ body: (UnsafeMutableBufferPointer<CChar>) -> Attempt<T>) -> T? {
        var size = 4096
        while size <= 1 << 20 {
            let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            switch body(buffer) {
            case .done(let value): return value
            case .retry(ERANGE): size *= 4
            case .retry: return nil
            }
        }
        return nil
    }
}
