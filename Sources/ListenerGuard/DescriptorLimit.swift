#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's open-file limit as it stands, and the share of it a listener may hold when nothing else is planned.
package enum DescriptorLimit {
    /// The soft `RLIMIT_NOFILE`; 1024 when it cannot be read or is unlimited.
    package static var current: Int {
        var limits = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limits) == 0, limits.rlim_cur != rlim_t.max, limits.rlim_cur <= rlim_t(Int.max) else { return 1024 }
        return Int(limits.rlim_cur)
    }

    /// Connections one listener that is a process's whole job may hold under `limit`: all but a quarter (at most
    /// 1024) kept for its files, its runtime and its other sockets.
    package static func soleListenerCap(forLimit limit: Int) -> Int {
        max(1, limit - min(1024, limit / 4))
    }
}
