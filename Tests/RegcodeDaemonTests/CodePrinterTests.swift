import RegcodeEngine
import Testing

@testable import RegcodeDaemon

/// What a person at the terminal reads: a login once, however many times the device reports it.
@Suite struct CodePrinterTests {
    private func step(_ device: String, _ events: [DeviceEvent]) -> DeviceStep {
        DeviceStep(device: device, events: events, epochMs: 1_763_720_000_000)
    }

    @Test func aLoginIsPrintedOncePerLogin() {
        var loggedIn: Set<String> = []
        // A restarted device answers checkAuthentication, then getAuthentication, each with status 1.
        let restart = [
            step("stb-1", [.setRequestorComplete(1), .setAuthenticationStatus(1, "")]),
            step("stb-1", [.setAuthenticationStatus(1, "")]),
            step("stb-2", [.setAuthenticationStatus(1, "")]),
        ]
        #expect(CodePrinter.lines(restart, activationURL: nil, loggedIn: &loggedIn) == ["stb-1: authenticated", "stb-2: authenticated"])
        #expect(CodePrinter.lines([step("stb-1", [.setAuthenticationStatus(1, "")])], activationURL: nil, loggedIn: &loggedIn).isEmpty)
        // Logged out, then in again: printed again.
        let again = [step("stb-1", [.setAuthenticationStatus(0, "User Not Authenticated Error")]), step("stb-1", [.setAuthenticationStatus(1, "")])]
        #expect(CodePrinter.lines(again, activationURL: nil, loggedIn: &loggedIn) == ["stb-1: authenticated"])
    }

    @Test func codesAndErrorsArePrintedEveryTime() {
        var loggedIn: Set<String> = []
        let code = DeviceEvent.status(.registrationCode, level: .success, message: "ABC1234", extra: [:])
        let steps = [step("stb-1", [code]), step("stb-1", [code])]
        #expect(
            CodePrinter.lines(steps, activationURL: "http://127.0.0.1:8080/activate", loggedIn: &loggedIn)
                == Array(repeating: "stb-1: code ABC1234 — enter it at http://127.0.0.1:8080/activate", count: 2)
        )
    }
}
