/// How sessions, profiles and decisions of a requestor × MVPD pair are answered.
enum EntitlementVariant: Sendable, Equatable {
    /// Adobe's basic flows: a login, the MVPD's decisions.
    case regular
    /// A TempPass MVPD: no login, decisions from the trial (`source: temppass`).
    case tempPass(TempPassSettings)
    /// A degradation rule applies (`source: degradation`).
    case degraded(DegradationRule)
}

/// One resource's answer under TempPass or degradation: permitted until `notAfter` (when the answer carries a
/// window), or refused with an item error.
enum VariantDecision: Sendable {
    case permit(notAfter: Int64?)
    case deny(EnhancedError)
}
