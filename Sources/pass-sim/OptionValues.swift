import ArgumentParser
import Hummingbird
import Logging
import PassSimulator
import RegcodeSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `device+client` or `device`.
struct ProfileScopeOption: ExpressibleByArgument {
    let scope: V2ProfileScope

    init(_ scope: V2ProfileScope) {
        self.scope = scope
    }

    init?(argument: String) {
        guard let scope = V2ProfileScope(rawValue: argument) else { return nil }
        self.scope = scope
    }

    var defaultValueDescription: String { self.scope.rawValue }
    static var allValueStrings: [String] { V2ProfileScope.allCases.map(\.rawValue) }
}

/// `top-level` or `item-level`.
struct MissingProfileOption: ExpressibleByArgument {
    let answer: MissingProfileDecision

    init(_ answer: MissingProfileDecision) {
        self.answer = answer
    }

    init?(argument: String) {
        guard let answer = MissingProfileDecision(rawValue: argument) else { return nil }
        self.answer = answer
    }

    var defaultValueDescription: String { self.answer.rawValue }
    static var allValueStrings: [String] { MissingProfileDecision.allCases.map(\.rawValue) }
}

/// `ip` or `device`.
struct ThrottleKeyOption: ExpressibleByArgument {
    let key: ThrottleKey

    init(_ key: ThrottleKey) {
        self.key = key
    }

    init?(argument: String) {
        guard let key = ThrottleKey(rawValue: argument) else { return nil }
        self.key = key
    }

    var defaultValueDescription: String { self.key.rawValue }

    static var allValueStrings: [String] { ThrottleKey.allCases.map(\.rawValue) }
}

/// `REQUESTOR=MVPD[,MVPD…]`.
struct Integration: ExpressibleByArgument {
    let requestor: String
    let mvpds: Set<String>

    init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else { return nil }
        let mvpds = parts[1].split(separator: ",").map(String.init)
        guard !mvpds.isEmpty else { return nil }
        self.requestor = String(parts[0])
        self.mvpds = Set(mvpds)
    }
}

/// `SOFTWARE_ID` or `SOFTWARE_ID=REQUESTOR[,REQUESTOR…]`.
struct ApprovedStatement: ExpressibleByArgument {
    let softwareId: String
    let requestors: Set<String>

    init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard !parts[0].isEmpty else { return nil }
        self.softwareId = String(parts[0])
        self.requestors = parts.count > 1 ? Set(parts[1].split(separator: ",").map(String.init)) : []
    }
}

/// `HOST:PORT`, with `[v6]:PORT` for IPv6 literals.
struct ListenAddress: ExpressibleByArgument {
    let host: String
    let port: Int

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    init?(argument: String) {
        let host: Substring
        let portText: Substring
        if argument.hasPrefix("[") {
            guard let close = argument.firstIndex(of: "]") else { return nil }
            host = argument[argument.index(after: argument.startIndex)..<close]
            let rest = argument[argument.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = argument.lastIndex(of: ":") else { return nil }
            host = argument[..<colon]
            portText = argument[argument.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65_535).contains(port) else { return nil }
        self.host = String(host)
        self.port = port
    }

    var defaultValueDescription: String { "\(self.host):\(self.port)" }
}

/// A non-negative number of seconds, fractions allowed.
struct Seconds: ExpressibleByArgument {
    let value: Double

    init(_ value: Double) {
        self.value = value
    }

    /// Seconds (`2`, `2.5`) or any duration the project reads (`2s`, `500ms`, `30m`).
    init?(argument: String) {
        guard let milliseconds = DurationParser.milliseconds(argument) else { return nil }
        self.value = Double(milliseconds) / 1000
    }

    var duration: Duration { .milliseconds(Int64((self.value * 1000).rounded())) }

    var defaultValueDescription: String {
        self.value == self.value.rounded() ? String(Int64(self.value)) : String(self.value)
    }
}

/// A probability, 0…1.
struct Probability: ExpressibleByArgument {
    let value: Double

    init?(argument: String) {
        guard let value = Double(argument), (0...1).contains(value) else { return nil }
        self.value = value
    }
}

/// `MS` or `MS+SPREAD`, in milliseconds.
struct Latency: ExpressibleByArgument {
    let fixed: Int
    let spread: Int

    init?(argument: String) {
        let parts = argument.split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false)
        guard let fixed = Int(parts[0]), fixed >= 0 else { return nil }
        let spread = parts.count > 1 ? Int(parts[1]) : 0
        guard let spread, spread >= 0 else { return nil }
        self.fixed = fixed
        self.spread = spread
    }
}

/// `PUBLIC:SECRET`; the secret is never printed.
struct SigningKey: ExpressibleByArgument {
    let publicKey: String
    let secret: String

    init?(argument: String) {
        guard let colon = argument.firstIndex(of: ":") else { return nil }
        let publicKey = String(argument[..<colon])
        let secret = String(argument[argument.index(after: colon)...])
        guard !publicKey.isEmpty, !secret.isEmpty else { return nil }
        self.publicKey = publicKey
        self.secret = secret
    }
}

/// `NAME` or `NAME=DETAILS`.
struct Denial: ExpressibleByArgument {
    let name: String
    let details: String

    init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard !parts[0].isEmpty else { return nil }
        self.name = String(parts[0])
        self.details = parts.count > 1 ? String(parts[1]) : ""
    }
}

/// `approve[:SECONDS]`, `deny[:SECONDS]` or `never`.
struct Script: ExpressibleByArgument {
    let script: CodeScript

    init?(argument: String) {
        let parts = argument.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let outcome = CodeScript.Outcome(rawValue: String(parts[0])) else { return nil }
        var after: Double?
        if parts.count > 1 {
            guard outcome != .never, let seconds = Double(parts[1]), seconds.isFinite, seconds >= 0 else { return nil }
            after = seconds
        }
        self.script = CodeScript(outcome: outcome, after: after)
    }
}

struct LogLevel: ExpressibleByArgument {
    let level: Logger.Level

    init(_ level: Logger.Level) {
        self.level = level
    }

    init?(argument: String) {
        guard let level = Logger.Level(rawValue: argument.lowercased()) else { return nil }
        self.level = level
    }

    var defaultValueDescription: String { self.level.rawValue }

    static var allValueStrings: [String] { Logger.Level.allCases.map(\.rawValue) }
}
