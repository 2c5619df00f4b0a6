import NIOCore
import RegcodeEngine

/// How a fleet waits for its earliest timer, chosen when the fleet is made.
package enum FleetTimers: Sendable {
    /// A timer of the fleet's own event loop fires the due timers right there, in the actor (which runs on that
    /// loop): real time, the daemon. A child task's `Task.sleep` went through Dispatch's timer thread and woke two
    /// threads per wake-up, ~8 % of the daemon's samples at 2,000 polls/s.
    case eventLoop
    /// A child task of `run()` sleeps on the fleet's clock: a test's manual clock decides when time passes.
    case clockSleeps
}

/// The fleet's one timer heap and the single sleep `run()` keeps for its earliest deadline.
extension Fleet {
    func schedule(_ key: TimerKey, at deadline: DeviceInstant) {
        held?.deferred[key] = nil
        timers.schedule(key, at: deadline)
        armSleeper(for: deadline)
    }

    /// Makes sure a sleep ends no later than `deadline` plus the timer slack. A sleep it supersedes is not
    /// cancelled (child tasks of a group cannot be cancelled one by one): it wakes later to a cheap no-op.
    ///
    /// The slack is why a fleet's wake-ups do not grow with its poll rate: every timer due within it of the
    /// earliest fires in one wake, where thousands of polls a second would otherwise each wake a thread.
    func armSleeper(for deadline: DeviceInstant) {
        guard !stopping else { return }
        let wake = deadline.advanced(by: timerSlack)
        if let current = sleeper, current.deadline <= wake { return }
        sleeperIDs += 1
        sleeper = (sleeperIDs, wake)
        switch timerWaits {
        case .eventLoop:
            // Before `run()` the sleep is only noted; `run()` arms it.
            if loopTimersRunning { armLoopTimer(id: sleeperIDs, at: wake) }
        case .clockSleeps:
            workContinuation.yield(.sleep(id: sleeperIDs, until: wake))
        }
    }

    /// The event loop's sleep (``FleetTimers/eventLoop``).
    func armLoopTimer(id: UInt64, at wake: DeviceInstant) {
        loopTimer?.cancel()
        let delay = clock.now.duration(to: wake)
        loopTimer = eventLoop.scheduleTask(in: TimeAmount(delay)) {
            self.assumeIsolated { fleet in fleet.timersDue(sleeper: id) }
        }
    }

    /// Called as `run()` starts and stops: arms the sleep noted before it, or cancels the armed one.
    func setLoopTimersRunning(_ running: Bool) {
        guard case .eventLoop = timerWaits else { return }
        loopTimersRunning = running && !stopping
        if loopTimersRunning, let sleeper {
            armLoopTimer(id: sleeper.id, at: sleeper.deadline)
        } else {
            loopTimer?.cancel()
            loopTimer = nil
        }
    }

    /// A child task of `run()`: sleeps until `deadline`, then fires what is due.
    nonisolated func sleep(_ id: UInt64, until deadline: DeviceInstant) async {
        do {
            try await clock.sleep(until: deadline)
        } catch {
            return
        }
        await timersDue(sleeper: id)
    }

    func timersDue(sleeper id: UInt64) {
        guard sleeper?.id == id else { return }
        sleeper = nil
        loopTimer = nil
        guard !stopping else { return }
        let now = clock.now
        for key in timers.popDue(now: now) {
            if held != nil {
                deferTimer(key, dueSince: now)
                continue
            }
            switch key.kind {
            case .engine(let timer):
                guard let actions = members[key.device]?.apps[key.app].machine.timerFired(timer) else { continue }
                process(key.device, app: key.app, actions)
            case .scenario:
                for command in cycleTick(device: key.device) where !stopping {
                    apply(command, to: key.device)
                }
            }
        }
        if let next = timers.nextDeadline() { armSleeper(for: next) }
    }
}

extension Fleet {
    /// The earliest armed deadline (engine or scenario timer), if any.
    var nextTimerDeadline: DeviceInstant? { timers.nextDeadline() }

    /// When the fleet's sleep for its timers ends, if one is armed.
    var wakeDeadline: DeviceInstant? { sleeper?.deadline }
}
