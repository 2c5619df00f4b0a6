import RegcodeEngine

/// Backend calls: at most `maxConcurrentRequests` run (as child tasks of `run()`), the rest wait
/// in order; an answer goes back to the engine that asked, unless the device was removed since.
extension Fleet {
    func enqueueCall(_ call: PendingCall) {
        // A stopping fleet makes no new calls (an answer delivered while stopping may ask for a
        // follow-up, e.g. the token after a registration); only calls already made are awaited.
        guard !stopping else { return }
        // What the device did before (its registration, its code, its last poll's answer) and the call itself (its
        // `RequestInFlight`) are stored before the call goes out. A kill then never leaves the backend with work the
        // database lacks: an answer is stored with the records of what followed from it, or its request is found in
        // flight at the next start and logged as interrupted.
        let parked = sink.whenStored(device: call.device) { [weak self] in
            guard let self else { return }
            // Straight onto the fleet's own loop, in the actor: every call parks for its own record, and a `Task` per
            // call was a task and an executor hop per poll.
            self.eventLoop.execute { self.assumeIsolated { $0.sendParked(call) } }
        }
        if parked {
            callsAwaitingStorage += 1
            return
        }
        if activeCalls < maxConcurrentRequests && held == nil {
            start(call)
        } else {
            if held != nil { holdTotals.deferredCalls += 1 }
            waitingCalls.append(call)
        }
    }

    /// The steps a parked call waited for are stored: it goes out, unless its device was removed or replaced meanwhile
    /// (or the fleet is stopping, which makes no new calls).
    private func sendParked(_ call: PendingCall) {
        callsAwaitingStorage -= 1
        guard let index = members.index(forKey: call.device), members.values[index].incarnation == call.incarnation else { return }
        enqueueCall(call)
    }

    func start(_ call: PendingCall) {
        activeCalls += 1
        workContinuation.yield(.call(call))
    }

    /// A child task of `run()`, on the actor: the backend call runs on the caller's executor (see
    /// ``BackendExecutor/execute(_:context:)``), so its answer is delivered without a hop.
    func perform(_ call: PendingCall) async {
        let sentAt = clock.now
        let result = await executor.execute(call.request, context: call.context)
        let timing = RequestTiming(sentAt: sentAt, latency: sentAt.duration(to: clock.now))
        deliver(call, result: result, timing: timing)
    }

    private func deliver(_ call: PendingCall, result: Result<BackendResponse, BackendFailure>, timing: RequestTiming) {
        activeCalls -= 1
        // While stopping the answer still reaches the engine (which has stopped its loops), so a
        // poll the backend answered is recorded, as abandoned; the app reacts to nothing any more.
        if let index = members.index(forKey: call.device),
            let actions = Self.answer(call, result: result, timing: timing, member: &members.values[index])
        {
            process(call.device, app: call.app, actions, answered: call.recordID == 0 ? nil : call.recordID)
        }
        while activeCalls < maxConcurrentRequests, held == nil, let next = waitingCalls.popFirst() {
            start(next)
        }
        if activeCalls == 0 && !drained.isEmpty {
            let waiters = drained
            drained = []
            for waiter in waiters { waiter.resume() }
        }
    }

    /// The engine's reaction to an answer, worked out in place: reading `members[device]?.incarnation` copied the whole
    /// member (its apps, engines and state) for every answer, ~1.5 % of the daemon at 70,000 devices.
    private static func answer(
        _ call: PendingCall,
        result: Result<BackendResponse, BackendFailure>,
        timing: RequestTiming,
        member: inout Member
    ) -> [DeviceAction]? {
        guard member.incarnation == call.incarnation else { return nil }
        return member.apps[call.app].machine.handle(response: result, for: call.id, timing: timing)
    }
}
