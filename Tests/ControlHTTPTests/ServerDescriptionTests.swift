import Logging
import Testing

@testable import ControlHTTP

/// swift-service-lifecycle logs each service as `"\(service)"` at debug: the token must not be in it.
@Suite struct ServerDescriptionTests {
    @Test func theServerAndItsSettingsDescribeThemselvesWithoutTheToken() {
        let token = "d3scr1pt10n-0123456789abcdef"
        let configuration = HTTPControlServer.Configuration(host: "::1", port: 8081, token: token)
        let server = HTTPControlServer(configuration: configuration, handler: FakeControlHandler(), logger: Logger(label: "test"))
        for text in [String(describing: server), String(reflecting: server), "\(configuration)", String(reflecting: configuration)] {
            #expect(!text.contains(token), "\(text)")
        }
        #expect(String(describing: server) == "HTTPControlServer([::1]:8081, token: set)")
    }
}
