/// A token in a device's shared storage: what the AccessEnabler rules look at (``StoredToken``), the
/// profile an app adopts when it uses it, and which app of the device stored it.
package struct SharedToken: Sendable, Equatable {
    package var metadata: StoredToken
    package var profile: AuthProfile
    /// The id of the app (on this device) that stored it.
    package var creatorAppID: String
    package var source: TokenSource

    package init(metadata: StoredToken, profile: AuthProfile, creatorAppID: String, source: TokenSource = .adobe) {
        self.metadata = metadata
        self.profile = profile
        self.creatorAppID = creatorAppID
        self.source = source
    }

    /// Two tokens in one bucket replace each other (INFERRED key: without the device id, R2's two
    /// apps could not both keep a token, as the tech note's step 5 says they do). On REST v2 (`perClient`) the
    /// app is part of the key: a profile belongs to the app's own client (DOC `[FAQ]` 13), so another app's
    /// login must not replace it.
    func sameBucket(as other: SharedToken, perClient: Bool) -> Bool {
        metadata.domain == other.metadata.domain && metadata.boundDeviceId == other.metadata.boundDeviceId
            && metadata.requestor == other.metadata.requestor && metadata.mvpd == other.metadata.mvpd
            && (!perClient || creatorAppID == other.creatorAppID)
    }
}
