import Foundation
import RegcodeEngine
import RegcodeStore
import RegcodeTestSupport
import Testing

/// The login log: a profile the device newly holds is one login, stored with its kind; the profile's type
/// survives a restart.
@Suite struct LoginLogTests {
    static func snapshot(_ profile: AuthProfile?) -> DeviceSnapshot {
        var snapshot = DeviceSnapshot()
        snapshot.phase = profile == nil ? .ready : .authenticated
        snapshot.profile = profile
        return snapshot
    }

    @Test func eachNewProfileIsOneLoginOfItsKind() async throws {
        let dir = try TempDirectory()
        let store = try openStore(dir.path("state.db"))
        try await store.saveDevices([makeDevice("stb-1"), makeDevice("stb-2")])
        let tempPass = AuthProfile(mvpd: "TempPass_TEST40", userID: "temppass_1", expiresEpochMs: t0 + 60_000, type: .temporary)
        let regular = AuthProfile(mvpd: "Cablevision", userID: "user-1", expiresEpochMs: t0 + 3_600_000)
        let apple = AuthProfile(mvpd: "Cablevision", userID: "user-2", expiresEpochMs: t0 + 3_600_000, source: .apple)
        let degraded = AuthProfile(mvpd: "Cablevision", userID: "95cf93bcd183214a0bdf", expiresEpochMs: t0 + 60_000, type: .degraded)
        _ = try await store.apply([
            DeviceStep(device: "stb-1", snapshot: Self.snapshot(tempPass), epochMs: t0),
            // The same profile written again (any later step) is no new login.
            DeviceStep(device: "stb-1", snapshot: Self.snapshot(tempPass), epochMs: t0 + 10),
            DeviceStep(device: "stb-1", snapshot: Self.snapshot(nil), epochMs: t0 + 20),
            DeviceStep(device: "stb-1", snapshot: Self.snapshot(regular), epochMs: t0 + 30),
            DeviceStep(device: "stb-2", snapshot: Self.snapshot(apple), epochMs: t0 + 40),
            DeviceStep(device: "stb-2", snapshot: Self.snapshot(degraded), epochMs: t0 + 50),
        ])
        let logins = try #require(try await store.logins(device: nil, sinceEpochMs: nil))
        #expect(
            logins == [
                StoredLogin(device: "stb-1", epochMs: t0, mvpd: "TempPass_TEST40", kind: "temppass"),
                StoredLogin(device: "stb-1", epochMs: t0 + 30, mvpd: "Cablevision", kind: "regular"),
                StoredLogin(device: "stb-2", epochMs: t0 + 40, mvpd: "Cablevision", kind: "sso"),
                StoredLogin(device: "stb-2", epochMs: t0 + 50, mvpd: "Cablevision", kind: "degraded"),
            ]
        )
        #expect(try await store.logins(device: "stb-2", sinceEpochMs: t0 + 45)?.map(\.kind) == ["degraded"])

        // Saving devices (a restart) records no login; the profile's type comes back.
        let loaded = try await store.loadDevices()
        try await store.saveDevices(loaded)
        #expect(try await store.logins(device: nil, sinceEpochMs: nil)?.count == 4)
        #expect(loaded.first { $0.name == "stb-2" }?.snapshot.profile?.type == .degraded)
        #expect(loaded.first { $0.name == "stb-1" }?.snapshot.profile?.loginKind == .regular)

        // Retention prunes logins with the poll log.
        _ = try await store.prune(pollAttemptsBefore: t0 + 35, eventsBefore: nil)
        #expect(try await store.logins(device: nil, sinceEpochMs: nil)?.map(\.epochMs) == [t0 + 40, t0 + 50])
    }
}
