/// How polling a code ended, as far as the poll log (and, when loaded, the event log) tells.
package enum CodeFate: String, Sendable, Equatable, CaseIterable {
    /// A poll of the code answered `authenticated`.
    case authenticated
    /// The code expired, became invalid or was given up: a poll of it answered `expired` (OAuth `expired_token`), a
    /// `REG410` event names it, or its last poll chose no next poll (`next_delay_ms` null) without being
    /// `authenticated`, `denied`, `abandoned` or `interrupted` (this includes `code-invalid` answers and polls whose
    /// next wait would pass the expiry).
    case expired
    /// The user refused (OAuth device grant, RFC 8628 §3.5 `access_denied`): a poll of the code answered `denied`,
    /// which ends the code. Adobe codes never end this way.
    case denied
    /// Polling stopped for another reason: the last poll was `abandoned` (the loop had
    /// already stopped), or a later code of the same device started (cancel, replacement).
    case ended
    /// The last poll scheduled another one: still polling when the log ends.
    case open
}

/// One code of one device: the span of its polls and how it ended.
package struct CodeSummary: Sendable, Equatable {
    package var device: String
    package var code: String
    /// `sent_at` of the first and last logged poll, milliseconds since the Unix epoch.
    package var firstSentMs: Int64
    package var lastSentMs: Int64
    package var polls: Int
    package var fate: CodeFate

    package init(device: String, code: String, firstSentMs: Int64, lastSentMs: Int64, polls: Int, fate: CodeFate) {
        self.device = device
        self.code = code
        self.firstSentMs = firstSentMs
        self.lastSentMs = lastSentMs
        self.polls = polls
        self.fate = fate
    }
}
