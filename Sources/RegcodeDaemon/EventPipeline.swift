import ControlSocket
import DeviceFleet
import Foundation
import Logging
import RegcodeEngine
import RegcodeStore
import RegcodeSupport
import ServiceLifecycle
import Synchronization

/// Takes the fleet's steps, stores them in batches (one transaction each) and only then
/// publishes the stored events, so a subscriber never sees an event the database lacks.
///
/// `record` only appends to a buffer: the fleet never waits for SQLite. The writer drains the
/// buffer whenever it is non-empty, so batches grow with load and stay small when idle.
final class EventPipeline: FleetSink, Service {
    private struct State {
        var buffer: [DeviceStep] = []
        var closed = false
    }

    private let state = Mutex(State())
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let store: RegcodeStore
    private let broadcaster: EventBroadcaster<JSONValue>
    private let observers: [@Sendable ([DeviceStep], [StoredEvent]) -> Void]
    private let logger: Logger

    init(store: RegcodeStore, broadcaster: EventBroadcaster<JSONValue>, observers: [@Sendable ([DeviceStep], [StoredEvent]) -> Void], logger: Logger)
    {
        self.store = store
        self.broadcaster = broadcaster
        self.observers = observers
        self.logger = logger
        (wakeups, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func record(_ step: DeviceStep) {
        let accepted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.buffer.append(step)
            return true
        }
        if accepted {
            wake.yield()
        } else {
            logger.warning("step recorded after the pipeline closed; dropped", metadata: ["device": "\(step.device)"])
        }
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            for await _ in wakeups {
                await flush()
            }
        } onGracefulShutdown: {
            self.wake.finish()
        }
        // Whatever the fleet produced while stopping is stored before the daemon exits.
        state.withLock { $0.closed = true }
        await flush()
    }

    /// Steps not yet written.
    var backlog: Int { state.withLock { $0.buffer.count } }

    /// Writes everything buffered so far; used by the writer loop and at shutdown.
    func flush() async {
        while true {
            let steps = state.withLock { state -> [DeviceStep] in
                defer { state.buffer.removeAll(keepingCapacity: true) }
                return state.buffer
            }
            guard !steps.isEmpty else { return }
            do {
                let stored = try await store.apply(steps)
                if !stored.isEmpty {
                    broadcaster.publish(stored.map(EventEncoding.params))
                }
                for observer in observers { observer(steps, stored) }
            } catch {
                // Losing a batch would break the gap-free promise silently; say so loudly.
                logger.error("could not store \(steps.count) device steps", metadata: ["error": "\(error)"])
            }
        }
    }
}
