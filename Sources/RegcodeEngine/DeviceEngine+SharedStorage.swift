extension DeviceEngine {
    /// Single sign-on: the app's storage domain now holds `profile` for it (another app of the device
    /// stored it), or no longer holds the one the engine has (logout or wipe in another app). The
    /// engine takes it over silently: an AccessEnabler reads its storage on each call and says
    /// nothing when another app changed it.
    package mutating func storageHolds(_ profile: AuthProfile?) -> [Action] {
        withPersistence { engine in
            guard engine.snapshot.profile != profile else { return [] }
            if let profile {
                engine.snapshot.profile = profile
                engine.snapshot.selectedMVPD = profile.mvpd
            } else {
                engine.clearAuthentication()
            }
            return []
        }
    }
}
