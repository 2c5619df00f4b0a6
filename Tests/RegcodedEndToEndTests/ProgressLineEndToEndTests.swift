import Foundation
import RegcodeTestSupport
import Testing

extension EndToEnd {
    /// On a terminal a foreground run keeps one live status line under its codes and ends with a summary; in a pipe
    /// it prints neither.
    @Suite(.serialized, .timeLimit(.minutes(2))) struct ProgressLineEndToEndTests {
        static let arguments = ["--devices", "3", "--simulator-listen", "127.0.0.1:0", "--simulator-auto-approve-after", "1", "--duration", "7s"]

        @Test func aTerminalShowsTheStatusLineAndTheSummary() async throws {
            let directory = try TemporaryDirectory()
            // script(1) gives the daemon a pseudo-terminal for its standard output.
            let command = ([BuiltProducts.url("regcoded").path] + Self.arguments).joined(separator: " ")
            let run = try ChildProcess("/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"], directory: directory.url, absolute: true)
            #expect(await run.waitForExit(timeout: .seconds(60)) == 0, "\(run.text)")
            #expect(run.text.contains("\r\u{1B}[K3 devices: "), "\(run.text)")
            #expect(run.text.contains("polls/s · late p99"))
            // A code line clears the status line and draws it again under itself.
            #expect(run.text.range(of: "\r\u{1B}\\[Kregcoded: stb-[123]: code ", options: .regularExpression) != nil, "\(run.text)")
            // 7 s from the start of the run, 8 s when a loaded machine makes the start slow.
            #expect(
                run.text.range(of: "regcoded: stopped after [78] s: 3 devices \\(3 authenticated\\)", options: .regularExpression) != nil,
                "\(run.text)"
            )
        }

        @Test func aPipeGetsNeither() async throws {
            let directory = try TemporaryDirectory()
            let run = try ChildProcess("regcoded", Self.arguments, directory: directory.url)
            #expect(await run.waitForExit(timeout: .seconds(60)) == 0, "\(run.text)")
            #expect(run.text.contains("regcoded: stb-1: code "))
            #expect(!run.text.contains("polls/s"))
            #expect(!run.text.contains("stopped after"))
            #expect(!run.text.contains("\u{1B}[K"))
        }
    }
}
