import Logging
import NIOCore
import RegcodeSupport

/// Turns one JSON-RPC request (a socket line or an HTTP body) into its answer: the one place both transports share,
/// so a method answers the same, with the same errors, whichever way it is called.
package struct RPCDispatcher: Sendable {
    let handler: any ControlHandler
    let inputLimits: InputLimits
    let workers: InputWorkers
    let logger: Logger

    /// What a request comes to.
    package enum Answer: Sendable {
        /// A notification (no `id`), or a blank line: nothing to send.
        case none
        /// The response object to send.
        case reply(JSONValue)
        /// `subscribe` succeeded: send the reply (absent for a notification), then stream the subscription.
        case subscribed(reply: JSONValue?, Subscription)
    }

    /// - Parameter workers: Where requests are parsed and answered, off the event loops.
    package init(handler: any ControlHandler, inputLimits: InputLimits = InputLimits(), workers: InputWorkers = .shared, logger: Logger) {
        self.handler = handler
        self.inputLimits = inputLimits
        self.workers = workers
        self.logger = logger
    }

    /// The answer to a request that found every turn of the ``InputWorkers`` taken and too many waiting.
    static let busy = RPCError(
        code: 1004,
        message: "busy: too many control requests are being read; retry shortly",
        data: ["reason": "busy", "retryable": true]
    )

    /// Starts a subscription for a transport that takes its parameters elsewhere (HTTP's `GET /events` query).
    package func subscribe(params: JSONValue?, peer: ControlPeer) async throws(RPCError) -> Subscription {
        try await self.handler.subscribe(params: params, peer: peer)
    }

    /// Checks, decodes and answers one request.
    ///
    /// The request is read within a turn of the ``InputWorkers`` (its cost bounded by the input limits); the method
    /// answers after the turn is given back, so calls that wait (on a stalled database) never keep others from being
    /// read and answered.
    ///
    /// - Parameter allowSubscribe: false where the transport streams events elsewhere (HTTP's `GET /events`): `subscribe`
    ///   is then answered with an error that says where to go.
    package func answer(_ request: ByteBuffer, peer: ControlPeer, allowSubscribe: Bool = true) async -> Answer {
        let read = await self.workers.run { self.read(request) }
        switch read {
        case nil:
            self.logger.debug("Refused a control request: the input workers are busy")
            return .reply(RPCMessage.error(id: .null, Self.busy))
        case .blank?:
            return .none
        case .rejected(let reply)?:
            return .reply(reply)
        case .call(let call)?:
            return await self.workers.answer { await self.dispatch(call, peer: peer, allowSubscribe: allowSubscribe) }
        }
    }

    /// What reading a request came to.
    private enum Read: Sendable {
        /// A blank line: nothing to answer.
        case blank
        /// Not a valid request: the error reply.
        case rejected(JSONValue)
        case call(RPCRequest)
    }

    private func read(_ request: ByteBuffer) -> Read {
        if request.readableBytesView.allSatisfy({
            $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n")
        }) {
            return .blank
        }
        do {
            return .call(try RPCRequest(line: request, limits: self.inputLimits))
        } catch {
            self.logger.debug(
                "Rejected a control request",
                metadata: ["rpc.error.code": "\(error.error.code)", "rpc.error": "\(error.error.message)"]
            )
            return .rejected(RPCMessage.error(id: error.id, error.error))
        }
    }

    private func dispatch(_ call: RPCRequest, peer: ControlPeer, allowSubscribe: Bool) async -> Answer {
        var logger = self.logger
        logger[metadataKey: "rpc.method"] = "\(call.method)"
        logger.trace("Control call")

        if call.method == "subscribe" {
            guard allowSubscribe else {
                let error = RPCError(
                    code: -32601,
                    message: "'subscribe' streams on the Unix socket; over HTTP read events with GET /events?since=N",
                    data: ["use": "GET /events"]
                )
                return call.id.map { .reply(RPCMessage.error(id: $0, error)) } ?? .none
            }
            do throws(RPCError) {
                let subscription = try await self.handler.subscribe(params: call.params, peer: peer)
                logger.debug("Subscription started")
                return .subscribed(reply: call.id.map { RPCMessage.result(id: $0, subscription.result) }, subscription)
            } catch {
                logger.debug("Subscribe refused", metadata: ["rpc.error.code": "\(error.code)"])
                return call.id.map { .reply(RPCMessage.error(id: $0, error)) } ?? .none
            }
        }
        do throws(RPCError) {
            let result = try await self.handler.handle(method: call.method, params: call.params, peer: peer)
            return call.id.map { .reply(RPCMessage.result(id: $0, result)) } ?? .none
        } catch {
            logger.debug("Control call failed", metadata: ["rpc.error.code": "\(error.code)"])
            return call.id.map { .reply(RPCMessage.error(id: $0, error)) } ?? .none
        }
    }
}
