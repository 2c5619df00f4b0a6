/// Why a registration code stopped being polled: decided by the engine, recorded by the store.
package enum CodeOutcome: Sendable, Equatable {
    /// Someone logged in with it.
    case authenticated
    /// Its time ran out (also when a renewal then asks for a new one).
    case expired
    /// The app asked for a new login while it was pending.
    case replaced
    /// The app cancelled the login or logged out.
    case cancelled
    /// The backend refused it or polling gave up.
    case failed(reason: String)
}

/// A code that ended, and why.
package struct CodeEnding: Sendable, Equatable {
    package var code: String
    package var outcome: CodeOutcome

    package init(code: String, outcome: CodeOutcome) {
        self.code = code
        self.outcome = outcome
    }
}
