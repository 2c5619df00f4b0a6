/// Where an app's AccessEnabler reads and writes its tokens; apps see each other's tokens only in the same domain.
package enum StorageDomain: Sendable, Hashable {
    /// One pasteboard for every app (iOS ≤ 6).
    case global
    /// A custom pasteboard per app suite (iOS ≥ 7: same team).
    case team(String)
    /// The app's own storage (tvOS NSUserDefaults, or a private pasteboard).
    case app(String)
    /// The keychain group of a team, split by the AccessEnabler 3.0 / 3.7.0 storage generations.
    case keychain(team: String, generation: KeychainGeneration)

    package enum KeychainGeneration: String, Sendable, Hashable, Codable {
        case v30
        case v37
    }

    /// The stable text key (`global`, `team:T1`, `app:com.x.y.AppA`, `keychain:T1:v37`) for storage and events.
    package var key: String {
        switch self {
        case .global: "global"
        case .team(let team): "team:\(team)"
        case .app(let bundleId): "app:\(bundleId)"
        case .keychain(let team, let generation): "keychain:\(team):\(generation.rawValue)"
        }
    }

    /// Parses a ``key``; nil for anything else.
    package init?(key: String) {
        let parts = key.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        switch (parts[0], parts.count) {
        case ("global", 1): self = .global
        case ("team", 2) where !parts[1].isEmpty: self = .team(parts[1])
        case ("app", 2) where !parts[1].isEmpty: self = .app(parts[1])
        case ("keychain", 3):
            guard !parts[1].isEmpty, let generation = KeychainGeneration(rawValue: parts[2]) else { return nil }
            self = .keychain(team: parts[1], generation: generation)
        default: return nil
        }
    }
}
