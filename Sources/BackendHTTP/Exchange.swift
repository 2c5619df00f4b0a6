import NIOCore
import Synchronization

/// One request from `execute` to its answer. Exactly one of answer, failure, deadline or cancellation
/// resumes the caller, whichever comes first; the state says which side still owns it.
final class Exchange: Sendable {
    private enum State {
        /// Created; the caller's continuation is not installed yet.
        case created
        /// The deadline or a cancellation came before the continuation was installed.
        case abortedEarly(KeepAliveHTTPError)
        /// Waiting for a connection.
        case queued(CheckedContinuation<KeepAliveResponse, any Error>)
        /// On a connection (an HTTP/1.1 connection, or an HTTP/2 stream once it exists), whose closing is how a
        /// deadline or cancellation stops it. An HTTP/2 connection itself is never closed for one exchange.
        case running(CheckedContinuation<KeepAliveResponse, any Error>, (any Channel)?)
        case finished
    }

    let request: KeepAliveRequest
    let maxBodyBytes: Int
    private let state = Mutex<State>(.created)
    private let retried = Atomic<Bool>(false)

    init(request: KeepAliveRequest, maxBodyBytes: Int) {
        self.request = request
        self.maxBodyBytes = maxBodyBytes
    }

    /// Installs the caller's continuation; false (and the continuation resumed) when already aborted.
    func install(_ continuation: CheckedContinuation<KeepAliveResponse, any Error>) -> Bool {
        let early: KeepAliveHTTPError? = state.withLock { state in
            switch state {
            case .created:
                state = .queued(continuation)
                return nil
            case .abortedEarly(let error):
                state = .finished
                return error
            case .queued, .running, .finished:
                preconditionFailure("continuation installed twice")
            }
        }
        guard let early else { return true }
        continuation.resume(throwing: early)
        return false
    }

    /// Moves a queued exchange onto `channel` (nil: onto an HTTP/2 connection, whose stream comes later); false when
    /// it has ended meanwhile (the connection stays free).
    func attach(to channel: (any Channel)?) -> Bool {
        state.withLock { state in
            guard case .queued(let continuation) = state else { return false }
            state = .running(continuation, channel)
            return true
        }
    }

    /// Binds a running exchange to its HTTP/2 stream; false when it has ended meanwhile (the stream is then closed).
    func bind(stream: any Channel) -> Bool {
        state.withLock { state in
            guard case .running(let continuation, _) = state else { return false }
            state = .running(continuation, stream)
            return true
        }
    }

    /// Takes a running exchange off a connection that turned out closed before anything was sent;
    /// false when it has ended meanwhile.
    func detach() -> Bool {
        state.withLock { state in
            guard case .running(let continuation, _) = state else { return false }
            state = .queued(continuation)
            return true
        }
    }

    /// Claims the exchange's one retry; false when it was already used.
    func claimRetry() -> Bool {
        !retried.exchange(true, ordering: .relaxed)
    }

    /// Whether the exchange still waits for a connection.
    var isQueued: Bool {
        state.withLock { state in
            if case .queued = state { return true }
            return false
        }
    }

    /// Resumes the caller with `result`; false when something else already did.
    @discardableResult
    func finish(_ result: Result<KeepAliveResponse, KeepAliveHTTPError>) -> Bool {
        let continuation: CheckedContinuation<KeepAliveResponse, any Error>? = state.withLock { state in
            switch state {
            case .queued(let continuation), .running(let continuation, _):
                state = .finished
                return continuation
            case .created, .abortedEarly, .finished:
                return nil
            }
        }
        guard let continuation else { return false }
        continuation.resume(with: result.mapError { $0 })
        return true
    }

    /// The deadline or a cancellation: ends the exchange wherever it is; a running one closes its connection,
    /// because the answer may still arrive on it.
    func abort(_ error: KeepAliveHTTPError) {
        let (continuation, channel): (CheckedContinuation<KeepAliveResponse, any Error>?, (any Channel)?) = state.withLock { state in
            switch state {
            case .created:
                state = .abortedEarly(error)
                return (nil, nil)
            case .queued(let continuation):
                state = .finished
                return (continuation, nil)
            case .running(let continuation, let channel):
                state = .finished
                return (continuation, channel)
            case .abortedEarly, .finished:
                return (nil, nil)
            }
        }
        channel?.close(promise: nil)
        continuation?.resume(throwing: error)
    }
}
