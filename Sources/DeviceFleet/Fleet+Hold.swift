import RegcodeEngine

/// How many holds the fleet has been through and what they deferred.
package struct HoldTotals: Sendable, Equatable {
    /// Holds begun.
    package var holds = 0
    /// Poll timers that came due while held and fired only on release.
    package var deferredPolls = 0
    /// Every timer (polls, retries, expiries, scenario ticks) deferred the same way.
    package var deferredTimers = 0
    /// Backend calls that waited for a release before they were sent.
    package var deferredCalls = 0
}

/// A held fleet takes no new work: due timers wait, no backend call starts, and AccessEnabler
/// calls are refused with ``FleetError/held(_:)``; calls already in flight still answer and are
/// recorded. The daemon holds its fleet while the steps cannot be stored, so records wait in
/// memory, bounded, instead of being lost.
extension Fleet {
    struct Hold {
        var reason: String
        /// Timers that came due while held, with when they were found due.
        var deferred: [TimerKey: DeviceInstant] = [:]
    }

    /// Stops taking new work until ``release()``; holding a held fleet only updates the reason.
    package func hold(reason: String) {
        guard !stopping else { return }
        if held == nil {
            held = Hold(reason: reason)
            holdTotals.holds += 1
            logger.warning("fleet held: no new work until released", metadata: ["reason": "\(reason)"])
        } else {
            held?.reason = reason
        }
    }

    /// Takes work again: deferred timers fire at once (their lateness shows in the poll log) and
    /// waiting calls start.
    package func release() {
        guard let hold = held else { return }
        held = nil
        logger.notice(
            "fleet released",
            metadata: ["deferred_timers": "\(hold.deferred.count)", "waiting_calls": "\(waitingCalls.count)"]
        )
        guard !stopping else { return }
        for (key, due) in hold.deferred.sorted(by: { $0.value < $1.value }) {
            schedule(key, at: due)
        }
        while activeCalls < maxConcurrentRequests, let next = waitingCalls.popFirst() {
            start(next)
        }
    }

    /// Why the fleet is held, or nil when it takes work.
    package var holdReason: String? { held?.reason }

    /// Timers deferred by the current hold.
    package var deferredTimerCount: Int { held?.deferred.count ?? 0 }

    func deferTimer(_ key: TimerKey, dueSince now: DeviceInstant) {
        guard held?.deferred.updateValue(now, forKey: key) == nil else { return }
        holdTotals.deferredTimers += 1
        if key.kind == .engine(.poll) { holdTotals.deferredPolls += 1 }
    }
}
