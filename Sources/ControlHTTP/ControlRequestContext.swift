import Hummingbird
import NIOCore

/// The request context of the control listener: Hummingbird's basics plus the client's address, which the access
/// rule and the logs need.
struct ControlRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    /// The connection, so an event stream whose client stopped reading can be closed, as the socket does.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.channel = source.channel
    }

    /// The client's address for logs and ``ControlPeer/http(remoteAddress:)``.
    var remoteDescription: String {
        switch self.remoteAddress {
        case .v4(let address)?: "\(address.host):\(self.remoteAddress?.port ?? 0)"
        case .v6(let address)?: "[\(address.host)]:\(self.remoteAddress?.port ?? 0)"
        case .unixDomainSocket?: "unix"
        case nil: "unknown"
        }
    }
}
