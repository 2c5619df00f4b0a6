import RegcodeEngine
import Testing

@testable import RegcodeDaemon

/// `poll.action_retries`: how often a call whose enhanced error asks for a retry is sent again.
@Suite struct ActionRetriesConfigurationTests {
    @Test func actionRetriesIsReadAndBounded() throws {
        let yaml = """
            fleets:
              - name: lab
                poll:
                  action_retries: 2
            """
        let configuration = try ConfigurationFile.parse(yaml, file: "x.yaml")
        try configuration.validate()
        #expect(configuration.fleets[0].poll.actionRetries == 2)
        #expect(PollPolicy().actionRetries == 3)
        let negative = """
            fleets:
              - name: lab
                poll:
                  action_retries: -1
            """
        #expect(throws: (any Error).self) { try ConfigurationFile.parse(negative, file: "x.yaml") }
    }
}
