import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's open-file limit (`RLIMIT_NOFILE`) and the share of it that backend connections may use.
enum OpenFileLimit {
    /// Descriptors kept out of the connection budget, for what else the daemon opens: the database and its log
    /// (once per reader), the control socket and its clients (capped within it), the metrics listener, and the
    /// runtime's own reads of `/proc`. See ``DescriptorBudget``.
    static func reserve(forLimit limit: Int) -> Int { min(1024, limit / 4) }

    /// How many backend connections may be open at once under `limit` without an HTTP listener. With the embedded
    /// simulator each connection holds two of the process's descriptors, the client's end and the simulator's.
    static func connectionBudget(forLimit limit: Int, embeddedSimulator: Bool = false) -> Int {
        DescriptorBudget(limit: limit, embeddedSimulator: embeddedSimulator).fleet
    }

    /// The limits before and after ``raiseToHardLimit()``, raised once, when first asked for (at start).
    static let raised = raiseToHardLimit()

    /// Raises the soft limit to the hard one, as systemd expects of a service that needs many descriptors (its
    /// default soft limit of 1024 protects `select(2)` users; NIO uses epoll). Returns the soft limit before and
    /// after; `after` equals `before` when the limit could not be raised.
    static func raiseToHardLimit() -> (before: Int, after: Int) {
        var limits = rlimit()
        guard getrlimit(resource, &limits) == 0 else { return (1024, 1024) }
        let before = clamped(limits.rlim_cur)
        guard limits.rlim_cur < limits.rlim_max else { return (before, before) }
        // An unlimited hard limit still stops at the kernel's per-process maximum.
        limits.rlim_cur = limits.rlim_max == Self.unlimited ? rlim_t(kernelMaximum()) : limits.rlim_max
        guard setrlimit(resource, &limits) == 0 else { return (before, before) }
        return (before, clamped(limits.rlim_cur))
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif

    /// `RLIM_INFINITY` (all ones), which Swift imports as an overflowing literal.
    private static let unlimited = rlim_t.max

    private static func clamped(_ value: rlim_t) -> Int {
        value == Self.unlimited || value > rlim_t(Int.max) ? kernelMaximum() : Int(value)
    }

    /// `fs.nr_open`: the most descriptors one process may have.
    private static func kernelMaximum() -> Int {
        let text = try? String(contentsOfFile: "/proc/sys/fs/nr_open", encoding: .utf8)
        return text.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 1_048_576
    }
}
