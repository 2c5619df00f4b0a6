import Hummingbird
import Logging
import RegcodeSupport

/// The device flow's verification page (RFC 8628 §3.3): the user types the user code (or arrives with it from
/// `verification_uri_complete`), sees which client asks for what, and approves or denies.
///
/// Only POSTs change anything: `GET /device` shows the form, `POST /device` looks the code up and shows the
/// decision, `POST /device/decision` records it.
struct OAuthVerificationPages: Sendable {
    let state: SharedSimulatorState
    let configuration: SimulatorConfiguration

    func register(on routes: RouterGroup<SimulatorRequestContext>) {
        routes.endpoint(RouterPath(OAuthRoutes.verificationPath), [.get: self.showEntry, .post: self.submitCode])
        routes.endpoint(RouterPath(OAuthRoutes.verificationPath + "/decision"), [.post: self.submitDecision])
    }

    @Sendable func showEntry(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let query = request.uri.query.map { FormData.parse($0) } ?? [:]
        return HTMLPage.response(.ok, Self.entryPage(userCode: query["user_code"] ?? "", error: nil))
    }

    /// Looks the typed code up; a usable one gets the approve/deny page.
    @Sendable func submitCode(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let fields = try await FormData.fields(of: request, context: context)
        let typed = (fields["user_code"] ?? "").trimmed
        guard !typed.isEmpty else {
            return HTMLPage.response(.badRequest, Self.entryPage(userCode: typed, error: "Enter the code shown on your device."))
        }
        let code = self.state.withLock { state in state.oauth.code(userCode: typed, now: state.now) }
        let now = self.configuration.clock.nowMillis
        guard let code else {
            return HTMLPage.response(
                .badRequest,
                Self.entryPage(userCode: typed, error: "The code \(typed.uppercased()) was not found. Check it on your device.")
            )
        }
        if let refusal = Self.refusal(code, now: now) {
            return HTMLPage.response(.badRequest, Self.entryPage(userCode: typed, error: refusal))
        }
        return HTMLPage.response(.ok, Self.decisionPage(code))
    }

    @Sendable func submitDecision(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let fields = try await FormData.fields(of: request, context: context)
        let typed = (fields["user_code"] ?? "").trimmed
        let approve: Bool
        switch fields["decision"] {
        case "approve": approve = true
        case "deny": approve = false
        default:
            return HTMLPage.response(.badRequest, Self.entryPage(userCode: typed, error: "Choose Allow or Deny."))
        }
        let subject = (fields["username"] ?? "").trimmed
        let decided: OAuthDeviceAuthority.DeviceCode
        do {
            decided = try self.state.withLock { (state) throws(OAuthDeviceAuthority.CodeError) in
                approve
                    ? try state.oauth.approve(userCode: typed, subject: subject, now: state.now)
                    : try state.oauth.deny(userCode: typed, now: state.now)
            }
        } catch {
            let message: String
            switch error {
            case .unknownCode: message = "The code \(typed.uppercased()) was not found. Check it on your device."
            case .codeGone: message = "The code \(typed.uppercased()) has expired or was already used. Start again on your device."
            case .alreadyDecided(let approved): message = "The code \(typed.uppercased()) was already \(approved ? "approved" : "denied")."
            }
            return HTMLPage.response(.badRequest, Self.entryPage(userCode: typed, error: message))
        }
        context.logger.info(
            approve ? "oauth code approved on the verification page" : "oauth code denied on the verification page",
            metadata: ["oauth.user_code": .string(decided.displayedUserCode), "oauth.client_id": .string(decided.clientId)]
        )
        let body =
            approve
            ? "<p class=\"ok\">✓</p><h1>Device connected</h1><p>\(HTML.escape(decided.clientId)) is signed in. Return to your device; it continues by itself.</p>"
            : "<h1>Access denied</h1><p>\(HTML.escape(decided.clientId)) was not given access. You can close this page.</p>"
        return HTMLPage.response(.ok, HTMLPage.page(title: approve ? "Device connected" : "Access denied", body: body))
    }

    /// Why a code can no longer be decided on; `nil` for a pending code.
    private static func refusal(_ code: OAuthDeviceAuthority.DeviceCode, now: Int64) -> String? {
        switch code.status(now: now) {
        case .pending: nil
        case .approved, .redeemed: "The code \(code.displayedUserCode) was already used."
        case .denied: "The code \(code.displayedUserCode) was denied. Start again on your device."
        case .expired: "The code \(code.displayedUserCode) has expired. Start again on your device."
        }
    }

    private static func entryPage(userCode: String, error: String?) -> String {
        let errorBlock = error.map { "<div class=\"error\">\(HTML.escape($0))</div>" } ?? ""
        return HTMLPage.page(
            title: "Connect a device",
            body: """
                <div class="brand">pass-sim · OAuth device login</div>
                <h1>Connect a device</h1>
                <p>Enter the code your device shows.</p>
                \(errorBlock)
                <form method="post" action="\(OAuthRoutes.verificationPath)">
                <label for="user_code">Code</label>
                <input class="code" id="user_code" name="user_code" value="\(HTML.escape(userCode))" maxlength="12" autocomplete="off" autofocus required>
                <button type="submit">Continue</button>
                </form>
                """
        )
    }

    private static func decisionPage(_ code: OAuthDeviceAuthority.DeviceCode) -> String {
        let scope = code.scope.map { " asks for <strong>\(HTML.escape($0))</strong>" } ?? " asks to sign in"
        return HTMLPage.page(
            title: "Allow access?",
            body: """
                <div class="brand">pass-sim · code \(HTML.escape(code.displayedUserCode))</div>
                <h1>Allow access?</h1>
                <p><strong>\(HTML.escape(code.clientId))</strong>\(scope). Any user name is accepted.</p>
                <form method="post" action="\(OAuthRoutes.verificationPath)/decision">
                <input type="hidden" name="user_code" value="\(HTML.escape(code.displayedUserCode))">
                <label for="username">User name</label>
                <input id="username" name="username" value="user-\(HTML.escape(code.userCode.lowercased()))" autocomplete="username">
                <div class="providers">
                <button type="submit" name="decision" value="deny">Deny</button>
                <button type="submit" name="decision" value="approve" style="background: var(--accent); color: #fff">Allow</button>
                </div>
                </form>
                """
        )
    }
}
