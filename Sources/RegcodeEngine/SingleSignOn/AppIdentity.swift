/// How an app came onto the device; it decides how iOS groups apps under one vendor id (APPLE).
package enum InstallSource: String, Sendable, Hashable, Codable, CaseIterable {
    /// App Store (and TestFlight): the vendor is the team, narrowed here by the bundle prefix.
    case appStore
    /// Built and run from Xcode.
    case xcode
    /// Ad hoc or enterprise distribution.
    case adHoc
    /// Running in the simulator.
    case simulator
}

/// One app installed on an emulated device, with the AccessEnabler it embeds.
///
/// Everything single sign-on depends on is here: the bundle id and team decide the vendor id and the
/// storage domain, the AccessEnabler version decides which storage and which wipe rules apply.
package struct AppIdentity: Sendable, Hashable, Codable {
    /// e.g. `com.x.y.AppA`.
    package var bundleId: String
    /// The Apple developer team that signed the app (e.g. `T1`).
    package var teamId: String
    /// The requestor id the app passes to `setRequestor`.
    package var requestor: String
    /// The embedded AccessEnabler SDK version.
    package var accessEnabler: SemanticVersion
    package var installSource: InstallSource
    /// Bumped when the last app of this app's vendor is uninstalled, so a reinstall gets a new IDFV (APPLE).
    package var vendorGeneration: Int

    package init(
        bundleId: String,
        teamId: String,
        requestor: String,
        accessEnabler: SemanticVersion,
        installSource: InstallSource = .appStore,
        vendorGeneration: Int = 0
    ) {
        self.bundleId = bundleId
        self.teamId = teamId
        self.requestor = requestor
        self.accessEnabler = accessEnabler
        self.installSource = installSource
        self.vendorGeneration = vendorGeneration
    }
}
