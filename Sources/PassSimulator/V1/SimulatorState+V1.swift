#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// v1 AuthN tokens and authorizations per device.
extension SimulatorState {
    /// The device's v1 AuthN token, after applying due scripts and auto-approval of its codes.
    func v1AuthenticationState(requestor: String, deviceId: String) -> AuthenticationState {
        let now = self.now
        self.sweepIfDue(now: now)
        let key = DeviceKey(serviceProvider: requestor, deviceIdentifier: deviceId)
        self.observeV1Device(key, now: now)
        guard let token = self.v1Tokens[key] else { return .absent }
        return now < token.notAfter ? .valid(token) : .expired(token)
    }

    /// Clears the device's v1 AuthN and AuthZ tokens (`DELETE /api/v1/logout`).
    func v1Logout(requestor: String, deviceId: String) {
        let key = DeviceKey(serviceProvider: requestor, deviceIdentifier: deviceId)
        self.v1Tokens[key] = nil
        self.v1Authorizations[key] = nil
    }

    /// Authorizes `resource` for the device (v1 `authorize`): on success the AuthZ token is stored and returned with
    /// the AuthN token it derives from; `.failure` carries the denial details.
    func v1Authorize(requestor: String, deviceId: String, resource: String) -> (AuthenticationState, Result<AuthorizationGrant, Denial>?) {
        let state = self.v1AuthenticationState(requestor: requestor, deviceId: deviceId)
        guard case .valid(let token) = state else { return (state, nil) }
        if let details = self.deny.denial(resource: resource, mvpd: token.mvpd) {
            return (state, .failure(Denial(details: details)))
        }
        let now = self.now
        let grant = AuthorizationGrant(
            resource: resource,
            mvpd: token.mvpd,
            notBefore: now,
            notAfter: now + self.configuration.authorizationTTL.milliseconds
        )
        self.v1Authorizations[DeviceKey(serviceProvider: requestor, deviceIdentifier: deviceId), default: [:]][resource] = grant
        return (state, .success(grant))
    }

    /// The device's stored AuthZ token for `resource` (v1 `tokens/authz`).
    func v1AuthorizationState(requestor: String, deviceId: String, resource: String) -> AuthorizationState {
        guard case .valid = self.v1AuthenticationState(requestor: requestor, deviceId: deviceId) else { return .notAuthenticated }
        guard let grant = self.v1Authorizations[DeviceKey(serviceProvider: requestor, deviceIdentifier: deviceId)]?[resource] else {
            return .absent
        }
        return self.now < grant.notAfter ? .valid(grant) : .expired(grant)
    }

    /// A denial's `details` text.
    struct Denial: Error, Sendable, Equatable {
        let details: String
    }
}
