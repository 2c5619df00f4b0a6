import AccessEnablerAPI
import DeviceEvents
import DeviceFleet
import Foundation
import RegcodeEngine
import Synchronization

/// Human-readable lines on standard output: the activation page and each code.
enum CodePrinter {
    /// Standard output, shared with the terminal's status line (``ProgressService``).
    static let output = TerminalOutput()

    static func say(_ line: String) {
        output.line("regcoded: " + line)
    }

    /// A code a restarted daemon goes on polling (it is not announced again as a new `REGCODE`).
    static func printResumed(device: String, code: IssuedCode, activationURL: String?) {
        let url = activationURL.map { " — enter it at \($0)" } ?? ""
        say("\(device): code \(code.code) (resumed, expires \(EventEncoding.timestamp(code.expiresEpochMs)))\(url)")
    }

    /// Prints what a person at the terminal follows in `steps`: new codes, errors and logins.
    static func print(_ steps: [DeviceStep], activationURL: String?, logins: PrintedLogins) {
        let printed = logins.names.withLock { Self.lines(steps, activationURL: activationURL, loggedIn: &$0) }
        for line in printed { say(line) }
    }

    /// The lines for `steps`. `loggedIn` holds the devices whose login was printed: a device reports
    /// `setAuthenticationStatus(1)` for every `checkAuthentication` and `getAuthentication` (a restarted one for
    /// both), and a person wants to read "authenticated" once per login.
    static func lines(_ steps: [DeviceStep], activationURL: String?, loggedIn: inout Set<String>) -> [String] {
        var lines: [String] = []
        for step in steps {
            for event in step.events {
                if let (code, expiresMs) = event.shownCode {
                    let expires = expiresMs.map { " (expires \(EventEncoding.timestamp($0)))" } ?? ""
                    // An OAuth device names its own verification page; an Adobe code is entered on the activation page.
                    let url = (event.verificationURI ?? activationURL).map { " — enter it at \($0)" } ?? ""
                    lines.append("\(step.device): code \(code)\(expires)\(url)")
                    continue
                }
                switch event.loginSignal {
                case .signedIn:
                    if loggedIn.insert(step.device).inserted { lines.append("\(step.device): authenticated") }
                    continue
                case .loginFailed, .signedOut:
                    loggedIn.remove(step.device)
                case nil:
                    break
                }
                switch event {
                case .navigateToUrl(let url):
                    // An iOS device shows no code: its login page, relative to the backend.
                    lines.append("\(step.device): login page \(url)")
                case .status(let report) where report.level == .error:
                    lines.append("\(step.device): \(report.id) \(report.message ?? "")")
                case .app(.callFailed(let call, let error, let message)):
                    lines.append("\(step.device): \(call) failed: \(error?.code ?? message)")
                case .oauth(.denied(let error)):
                    lines.append("\(step.device): denied (\(error.code))")
                case .oauth(.failed(let failure)):
                    lines.append("\(step.device): login failed: \(failure)")
                default:
                    continue
                }
            }
        }
        return lines
    }
}

/// The devices whose login ``CodePrinter`` has printed, until they report being logged out.
final class PrintedLogins: Sendable {
    let names = Mutex<Set<String>>([])
}
