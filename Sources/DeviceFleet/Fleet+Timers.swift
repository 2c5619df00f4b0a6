import NIOCore
import RegcodeEngine

/// The fleet's one timer heap and the single sleep `run()` keeps for its earliest deadline.
extension Fleet {
    func schedule(_ key: TimerKey, at deadline: C.Instant) {
        held?.deferred[key] = nil
        timers.schedule(key, at: deadline)
        armSleeper(for: deadline)
    }

    /// Makes sure a sleep ends no later than `deadline` plus the timer slack. A sleep it supersedes is not
    /// cancelled (child tasks of a group cannot be cancelled one by one): it wakes later to a cheap no-op.
    ///
    /// The slack is why a fleet's wake-ups do not grow with its poll rate: every timer due within it of the
    /// earliest fires in one wake, where thousands of polls a second would otherwise each wake a thread.
    func armSleeper(for deadline: C.Instant) {
        guard !stopping else { return }
        let wake = deadline.advanced(by: timerSlack)
        if let current = sleeper, current.deadline <= wake { return }
        sleeperIDs += 1
        sleeper = (sleeperIDs, wake)
        if C.self == SystemDeviceClock.self {
            // Before `run()` the sleep is only noted; `run()` arms it.
            if loopTimersRunning { armLoopTimer(id: sleeperIDs, at: wake) }
        } else {
            workContinuation.yield(.sleep(id: sleeperIDs, until: wake))
        }
    }

    /// The system clock's sleep: a timer of the fleet's own event loop that fires the due timers right there,
    /// in the actor (which runs on that loop). A child task's `Task.sleep` went through Dispatch's timer
    /// thread and woke two threads per wake-up, ~8 % of the daemon's samples at 2,000 polls/s. A test clock
    /// keeps the child task, so a test still decides when time passes.
    func armLoopTimer(id: UInt64, at wake: C.Instant) {
        loopTimer?.cancel()
        let delay = clock.now.duration(to: wake)
        loopTimer = eventLoop.scheduleTask(in: TimeAmount(delay)) {
            self.assumeIsolated { fleet in fleet.timersDue(sleeper: id) }
        }
    }

    /// Called as `run()` starts and stops: arms the sleep noted before it, or cancels the armed one.
    func setLoopTimersRunning(_ running: Bool) {
        guard C.self == SystemDeviceClock.self else { return }
        loopTimersRunning = running && !stopping
        if loopTimersRunning, let sleeper {
            armLoopTimer(id: sleeper.id, at: sleeper.deadline)
        } else {
            loopTimer?.cancel()
            loopTimer = nil
        }
    }

    /// A child task of `run()`: sleeps until `deadline`, then fires what is due.
    nonisolated func sleep(_ id: UInt64, until deadline: C.Instant) async {
        do {
            try await clock.sleep(until: deadline, tolerance: nil)
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
                guard let actions = members[key.device]?.apps[key.app].engine.timerFired(timer) else { continue }
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
    var nextTimerDeadline: C.Instant? { timers.nextDeadline() }

    /// When the fleet's sleep for its timers ends, if one is armed.
    var wakeDeadline: C.Instant? { sleeper?.deadline }
}
