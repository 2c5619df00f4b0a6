/// The MVPD platform fields and integration settings in force: the admin API's replacements, else the configuration's.
extension SimulatorState {
    /// The key basic v2 profiles are stored under: the client is left out with ``V2ProfileScope/device``.
    func profileKey(_ serviceProvider: String, _ deviceIdentifier: String, _ clientId: String) -> ProfileKey {
        switch self.configuration.v2ProfileScope {
        case .deviceAndClient: ProfileKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier, clientId: clientId)
        case .device: ProfileKey(serviceProvider: serviceProvider, deviceIdentifier: deviceIdentifier, clientId: "")
        }
    }

    /// The platform fields of a configured MVPD; `nil` for an unknown MVPD.
    package func platform(ofMVPD mvpd: String) -> MVPDPlatform? {
        guard let configured = self.configuration.mvpd(id: mvpd) else { return nil }
        return self.mvpdPlatforms[mvpd] ?? configured.platform
    }

    /// The configured MVPDs with their platform fields in force, in configuration order.
    package func mvpdsInForce() -> [SimulatedMVPD] {
        self.configuration.mvpds.map { mvpd in
            var current = mvpd
            if let platform = self.mvpdPlatforms[mvpd.id] { current.platform = platform }
            return current
        }
    }

    /// Replaces an MVPD's platform fields (`PUT /_sim/mvpds/{mvpd}`); `false` for an unknown MVPD.
    @discardableResult
    package func setPlatform(_ platform: MVPDPlatform, ofMVPD mvpd: String) -> Bool {
        guard self.configuration.mvpd(id: mvpd) != nil else { return false }
        self.mvpdPlatforms[mvpd] = platform
        return true
    }

    /// The MVPD a platform knows as `platformMappingId`, if any.
    func mvpd(forPlatformMappingId platformMappingId: String) -> String? {
        self.mvpdsInForce().first { $0.platformMappingId == platformMappingId }?.id
    }

    /// The settings of the `serviceProvider` × `mvpd` integration.
    package func integrationSettings(serviceProvider: String, mvpd: String) -> IntegrationSettings {
        self.integrationOverrides[IntegrationKey(serviceProvider: serviceProvider, mvpd: mvpd)]
            ?? self.configuration.integrationSettings[serviceProvider]?[mvpd]
            ?? IntegrationSettings()
    }

    /// Replaces an integration's settings (`PUT /_sim/integrations/{sp}/{mvpd}`); `false` for an unknown MVPD.
    @discardableResult
    package func setIntegrationSettings(_ settings: IntegrationSettings, serviceProvider: String, mvpd: String) -> Bool {
        guard self.configuration.mvpd(id: mvpd) != nil else { return false }
        self.integrationOverrides[IntegrationKey(serviceProvider: serviceProvider, mvpd: mvpd)] = settings
        return true
    }

    /// Whether the integration exists (configuration) and is enabled (settings); always, when lenient.
    func integrationIsActive(serviceProvider: String, mvpd: String) -> Bool {
        guard !self.configuration.lenient else { return true }
        return self.configuration.integrates(serviceProvider: serviceProvider, mvpd: mvpd)
            && self.integrationSettings(serviceProvider: serviceProvider, mvpd: mvpd).enabled
    }

    /// Lifetime of profiles of the integration, in milliseconds.
    func profileTTL(serviceProvider: String, mvpd: String) -> Int64 {
        if let seconds = self.integrationSettings(serviceProvider: serviceProvider, mvpd: mvpd).ttl { return seconds * 1000 }
        return self.configuration.profileTTL.milliseconds
    }
}
