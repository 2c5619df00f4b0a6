import BackendHTTP
import NIOCore
import NIOHTTP1
import NIOPosix

/// Calls to a simulator's admin API (`/_sim/…`) in in-process tests, over the project's one HTTP transport.
package enum SimulatorAdmin {
    /// The answer: status and body text.
    package struct Answer: Sendable {
        package var status: Int
        package var body: String
    }

    /// Sends `method` with a JSON body to `baseURL` + `path` on a connection of its own, bounded by ten seconds.
    package static func call(_ baseURL: String, _ path: String, method: HTTPMethod = .POST, json: String? = nil) async throws -> Answer {
        guard let origin = Origin(baseURL: baseURL) else { throw KeepAliveHTTPError.protocolError("not a base URL: \(baseURL)") }
        let pool = KeepAliveConnectionPool(origin: origin, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, maxConnections: 1)
        defer { pool.shutdown() }
        let request = KeepAliveRequest(
            method: method,
            target: path,
            headers: json == nil ? [] : [("Content-Type", "application/json")],
            body: json.map { ByteBuffer(string: $0) }
        )
        let answer = try await pool.execute(request, deadline: .now() + .seconds(10), maxBodyBytes: 1 << 20)
        return Answer(status: answer.status, body: answer.body.map { String(buffer: $0) } ?? "")
    }
}
