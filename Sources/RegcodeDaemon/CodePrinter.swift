import AccessEnablerAPI
import DeviceFleet
import Foundation
import RegcodeEngine

/// Human-readable lines on standard output: the activation page and each code.
enum CodePrinter {
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data(("regcoded: " + line + "\n").utf8))
    }

    /// A code a restarted daemon goes on polling (it is not announced again as a new `REGCODE`).
    static func printResumed(device: String, code: IssuedCode, activationURL: String?) {
        let url = activationURL.map { " — enter it at \($0)" } ?? ""
        say("\(device): code \(code.code) (resumed, expires \(EventEncoding.timestamp(code.expiresEpochMs)))\(url)")
    }

    static func print(_ steps: [DeviceStep], activationURL: String?) {
        for step in steps {
            for event in step.events {
                switch event {
                case .status(let report) where report.id == .registrationCode:
                    guard let code = report.message else { continue }
                    let expires = report.extra["expires"]?.intValue.map { " (expires \(EventEncoding.timestamp($0)))" } ?? ""
                    let url = activationURL.map { " — enter it at \($0)" } ?? ""
                    say("\(step.device): code \(code)\(expires)\(url)")
                case .status(let report) where report.level == .error:
                    say("\(step.device): \(report.id) \(report.message ?? "")")
                case .setAuthenticationStatus(AccessEnabler.statusSuccess, _):
                    say("\(step.device): authenticated")
                default:
                    continue
                }
            }
        }
    }
}
