import Testing

@testable import PassSimulator

@Suite("Shared state")
struct SharedStateTests {
    /// Requests on every thread at once reach one state: nothing registered or issued concurrently is lost, and
    /// every token maps back to the client it was issued to (the indexes stay consistent with the records).
    @Test func concurrentRegistrationsAndTokensAreAllKept() async {
        let state = SharedSimulatorState()
        let pairs = await withTaskGroup(of: (client: String, token: String?).self) { group in
            for _ in 0..<400 {
                group.addTask {
                    let client = state.withLock { $0.registerClient(softwareId: "software", redirectURIs: []) }
                    let grant = state.withLock { $0.issueToken(clientId: client.clientId, clientSecret: client.clientSecret) }
                    return (client.clientId, grant?.accessToken)
                }
            }
            var pairs: [(client: String, token: String?)] = []
            for await pair in group { pairs.append(pair) }
            return pairs
        }
        #expect(Set(pairs.map(\.client)).count == 400)
        #expect(Set(pairs.compactMap(\.token)).count == 400)
        for pair in pairs {
            #expect(state.withLock { $0.clientId(forAccessToken: pair.token ?? "") } == pair.client)
        }
    }
}
