import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where event streams do their work: one thread of their own, at a lower scheduling priority than the fleet's and
/// the listener's.
///
/// Event streams are the one part of the daemon whose work grows with what clients ask for (1,000 streams at 1,000
/// events/s are a million deliveries a second), so each stream takes its events and gathers their frames on this
/// thread, and the kernel gives the cores to the fleet's loops and to the listener's (which parse requests, answer
/// `POST /rpc` and make the writes) first: a client that wants more than the machine can spare gets less, falls
/// behind and is cut off, and the polls and the other requests stay on time. On NIO's shared loops the same streams
/// took the cores the polls run on (with 1,000 streams the fleet made 370 of its 600 polls a minute). Lives as long as
/// the process, as NIO's own singletons do.
package enum EventStreamLoop {
    /// Nice value of the thread (on Linux a nice value belongs to a thread, and `setpriority(PRIO_PROCESS, 0, …)`
    /// sets the calling one's); 10 leaves it about a tenth of a core the fleet also wants.
    package static let niceness: Int32 = 10

    /// The loop; started, and its thread's priority lowered, on first use.
    package static let group: MultiThreadedEventLoopGroup = {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        #if os(Linux)
        // Lowering one's own priority needs no privilege; a failure leaves the thread at the process's priority. Not
        // waited for (this may run on an event loop): it is the loop's first task, ahead of anything it will serve.
        group.next().execute { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
        #endif
        return group
    }()
}
