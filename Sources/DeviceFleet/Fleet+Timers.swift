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
        workContinuation.yield(.sleep(id: sleeperIDs, until: wake))
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
