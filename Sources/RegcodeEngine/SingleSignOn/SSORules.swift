import AccessEnablerAPI

/// The AccessEnabler's token rules by version, as pure functions over a device's stored tokens.
///
/// Callers own the storage: these functions only say what to use and what to delete. Version thresholds
/// are fields because some are INFERRED (see each), so a lab can move them.
package struct SSORules: Sendable, Hashable {
    /// AccessEnabler versions whose `setRequestor` wipes tokens bound to other device ids (the tech note's
    /// 1.8 behaviour, R2′). Default 1.7.5 ..< 1.9: the note names only 1.8; 1.7.5 – 1.8.x is INFERRED.
    package var sanitizerWipe: Range<SemanticVersion>
    /// First AccessEnabler version that reports `SEC412` (DOC `[ERR]`: "Available in Release 2.5").
    package var sec412From: SemanticVersion
    /// MVPDs whose authentication is bound to the requestor (authN per requestor, or SSO disabled for the
    /// requestor × MVPD integration): their tokens serve only the requestor that obtained them.
    package var requestorBoundMVPDs: Set<String>

    package init(
        sanitizerWipe: Range<SemanticVersion> = "1.7.5"..<"1.9.0",
        sec412From: SemanticVersion = "2.5.0",
        requestorBoundMVPDs: Set<String> = []
    ) {
        self.sanitizerWipe = sanitizerWipe
        self.sec412From = sec412From
        self.requestorBoundMVPDs = requestorBoundMVPDs
    }
}
