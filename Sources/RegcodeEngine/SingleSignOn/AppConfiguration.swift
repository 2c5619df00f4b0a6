/// An app a device hosts, as configured: who it is. What it learns at run time (its login, a new
/// vendor generation after a reinstall) is state, kept elsewhere.
package struct AppConfiguration: Sendable, Equatable, Codable {
    /// The app's id on the device, as socket calls name it.
    package var id: String
    package var bundleId: String
    package var teamId: String
    /// The app's requestor; nil uses the device's.
    package var requestor: String?
    package var accessEnabler: SemanticVersion
    package var installSource: InstallSource

    package init(
        id: String,
        bundleId: String,
        teamId: String,
        requestor: String? = nil,
        accessEnabler: SemanticVersion = "3.9.2",
        installSource: InstallSource = .appStore
    ) {
        self.id = id
        self.bundleId = bundleId
        self.teamId = teamId
        self.requestor = requestor
        self.accessEnabler = accessEnabler
        self.installSource = installSource
    }

    /// The app as the storage rules see it.
    package func hosted(defaultRequestor: String, vendorGeneration: Int = 0) -> HostedApp {
        HostedApp(
            id: id,
            identity: AppIdentity(
                bundleId: bundleId,
                teamId: teamId,
                requestor: requestor ?? defaultRequestor,
                accessEnabler: accessEnabler,
                installSource: installSource,
                vendorGeneration: vendorGeneration
            )
        )
    }
}
