/// The control surface, by area: what the socket and HTTP listeners answer (the files beside this one hold the
/// entries of each area).
enum ControlMethods {
    static let table = ControlMethodTable(accessEnablerCalls + nativeAppVerbs + oauthDeviceVerbs + devices + lab + singleSignOn + tvProvider + daemon)
}
