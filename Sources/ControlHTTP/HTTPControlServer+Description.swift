/// What a log line says about the server and its settings: swift-service-lifecycle logs every service as
/// `"\(service)"` at debug, and a reflected configuration would print the bearer token.
extension HTTPControlServer: CustomStringConvertible {
    package var description: String { "HTTPControlServer(\(self.configuration))" }
}

extension HTTPControlServer.Configuration: CustomStringConvertible, CustomDebugStringConvertible {
    package var description: String {
        let host = self.host.contains(":") ? "[\(self.host)]" : self.host
        return "\(host):\(self.port), token: \(self.token == nil ? "none" : "set")"
    }

    package var debugDescription: String { self.description }
}
