#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Client registration and access tokens (DCR).
extension SimulatorState {
    /// Registers a client application and returns its fresh credentials.
    package func registerClient(softwareId: String, redirectURIs: [String]) -> RegisteredClient {
        let client = RegisteredClient(
            clientId: self.randomToken(bytes: 12),
            clientSecret: self.randomToken(bytes: 24),
            softwareId: softwareId,
            redirectURIs: redirectURIs,
            issuedAtSeconds: self.now / 1000
        )
        self.clients[client.clientId] = client
        return client
    }

    /// Issues an access token for valid client credentials; `nil` when they do not match a registered client.
    func issueToken(clientId: String, clientSecret: String) -> AccessTokenGrant? {
        guard let client = self.clients[clientId], Self.constantTimeEquals(client.clientSecret, clientSecret) else {
            return nil
        }
        let now = self.now
        self.sweepIfDue(now: now)
        let grant = AccessTokenGrant(
            id: UUID().uuidString.lowercased(),
            accessToken: self.randomToken(bytes: 32),
            clientId: clientId,
            createdAt: now,
            expiresAt: now + self.configuration.accessTokenTTL.milliseconds
        )
        self.tokens[grant.accessToken] = grant
        var issued = self.tokensByClient[clientId, default: []]
        issued.append(grant.accessToken)
        if issued.count > Self.maxTokensPerClient {
            for revoked in issued.prefix(issued.count - Self.maxTokensPerClient) {
                self.tokens[revoked] = nil
            }
            issued.removeFirst(issued.count - Self.maxTokensPerClient)
        }
        self.tokensByClient[clientId] = issued
        return grant
    }

    /// The client an unexpired access token belongs to, or `nil` for unknown and expired tokens.
    package func clientId(forAccessToken token: String) -> String? {
        guard let grant = self.tokens[token] else { return nil }
        guard self.now < grant.expiresAt else { return nil }
        return grant.clientId
    }

    /// The registered client an unexpired access token belongs to, or `nil`.
    func client(forAccessToken token: String) -> RegisteredClient? {
        self.clientId(forAccessToken: token).flatMap { self.clients[$0] }
    }

    /// Makes every access token of `clientId` invalid now, as if their TTL had passed; `nil` for an unknown client,
    /// else the number of tokens revoked.
    @discardableResult
    package func expireAccessTokens(ofClient clientId: String) -> Int? {
        guard self.clients[clientId] != nil else { return nil }
        let revoked = self.tokensByClient.removeValue(forKey: clientId) ?? []
        for token in revoked {
            self.tokens[token] = nil
        }
        return revoked.count
    }
}
