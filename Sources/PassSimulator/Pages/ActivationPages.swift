import Hummingbird
import Logging
import RegcodeSupport

/// The browser side of the second-screen login: the `/activate` page where the user types the code, the MVPD
/// picker, a fake MVPD login page whose form completes the code (v2 session or v1 regcode), and the MVPD logout page
/// v2 logout points to.
struct ActivationPages: Sendable {
    let state: SharedSimulatorState
    let configuration: SimulatorConfiguration

    func register(on routes: RouterGroup<SimulatorRequestContext>) {
        routes.endpoint("/activate", [.get: self.showActivation, .post: self.submitActivation])
        routes.endpoint("/_sim/mvpd/login", [.get: self.showLogin, .post: self.submitLogin])
        routes.endpoint("/_sim/logos/{file}", [.get: self.logo])
        routes.endpoint("/adobe-services/logout", [.get: self.mvpdLogout])
    }

    /// What the second screen sees for a code, v1 or v2 alike: used, denied or expired → 400 saying which, no MVPD
    /// yet → the picker, else on to the MVPD's login page. Only a sign-in that just happened shows success.
    static func secondScreenResponse(for session: AuthenticationSession, configuration: SimulatorConfiguration) throws -> Response {
        if let refusal = self.refusal(for: session, configuration: configuration) { throw refusal }
        guard let mvpd = session.mvpd else {
            return HTMLPage.response(.ok, pickerPage(session: session, configuration: configuration))
        }
        if session.api == .v2, session.domainName == nil || session.redirectUrl == nil {
            // Adobe hands out this URL only once the session is complete; a resume must supply the rest first.
            throw HTMLError(
                status: .badRequest,
                title: "Session incomplete",
                message:
                    "The code \(session.code) still misses \(session.missingParameters.joined(separator: ", ")); enter it on the activation page."
            )
        }
        return HTMLPage.redirect(to: loginURL(code: session.code, serviceProvider: session.serviceProvider, mvpd: mvpd))
    }

    /// Why a code can no longer be signed in with, as the page saying so; `nil` for a pending code.
    static func refusal(for session: AuthenticationSession, configuration: SimulatorConfiguration) -> HTMLError? {
        switch session.status {
        case .pending:
            return nil
        case .completed(let profile):
            let provider = configuration.mvpd(id: profile.mvpd)?.displayName ?? profile.mvpd
            return HTMLError(
                status: .badRequest,
                title: "Code already used",
                message:
                    "The code \(session.code) was already used to sign in with \(provider). If your TV is not signed in, request a new code on it."
            )
        case .expired where session.cutoff?.reason == .denied:
            return HTMLError(
                status: .badRequest,
                title: "Sign-in denied",
                message: "The sign-in with code \(session.code) was denied. Request a new code on your TV to try again."
            )
        case .expired, .superseded:
            return HTMLError(
                status: .badRequest,
                title: "Code expired",
                message: "The code \(session.code) has expired. Request a new one on your TV."
            )
        }
    }

    static func loginURL(code: String, serviceProvider: String, mvpd: String) -> String {
        "/_sim/mvpd/login?" + FormData.query(["code": code, "sp": serviceProvider, "mvpd": mvpd])
    }

    // MARK: Handlers

    @Sendable func showActivation(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let query = request.uri.query.map { FormData.parse($0) } ?? [:]
        return HTMLPage.response(.ok, self.activationPage(code: query["code"] ?? "", error: nil))
    }

    /// Validates the typed code, records a chosen MVPD (like a resume call), then hands over to the authenticate URL.
    @Sendable func submitActivation(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let fields = try await FormData.fields(of: request, context: context)
        let code = (fields["code"] ?? "").trimmed.uppercased()
        let mvpd = fields["mvpd"].flatMap { $0.isEmpty ? nil : $0 }
        guard !code.isEmpty else {
            return HTMLPage.response(.badRequest, self.activationPage(code: code, error: "Enter the code shown on your TV."))
        }
        if let mvpd, self.configuration.mvpd(id: mvpd) == nil {
            return HTMLPage.response(.badRequest, self.activationPage(code: code, error: "Choose a TV provider from the list."))
        }
        guard let current = self.state.withLock({ $0.session(code: code) }) else {
            return HTMLPage.response(.badRequest, self.activationPage(code: code, error: "The code \(code) was not found. Check it on your TV."))
        }
        if let refusal = Self.refusal(for: current, configuration: self.configuration) {
            return HTMLPage.response(refusal.status, self.activationPage(code: code, error: refusal.message))
        }
        if let mvpd, !self.configuration.integrates(serviceProvider: current.serviceProvider, mvpd: mvpd) {
            return HTMLPage.response(
                .badRequest,
                self.activationPage(code: code, error: "That TV provider is not available for \(current.serviceProvider).")
            )
        }
        // As the programmer's second-screen application, the page resumes a v2 session with its own domain and landing
        // URL when the device could not send them (REST v2 secondary application flow).
        let ownDomain = current.api == .v2 ? self.configuration.domains(of: current.serviceProvider).first : nil
        let domainName = current.domainName == nil ? ownDomain : nil
        let redirectUrl = current.redirectUrl == nil ? ownDomain.map { "https://" + $0 } : nil
        guard
            let session = self.state.withLock({
                $0.resumeSession(code: code, serviceProvider: nil, mvpd: mvpd, domainName: domainName, redirectUrl: redirectUrl)
            })
        else {
            return HTMLPage.response(.badRequest, self.activationPage(code: code, error: "The code \(code) was not found. Check it on your TV."))
        }
        switch session.api {
        case .v2:
            return HTMLPage.redirect(to: "/api/v2/authenticate/\(session.serviceProvider)/\(session.code)", status: .seeOther)
        case .v1:
            let query = FormData.query(["reg_code": session.code, "requestor_id": session.serviceProvider])
            return HTMLPage.redirect(to: "/api/v1/authenticate?" + query, status: .seeOther)
        }
    }

    /// The simulated MVPD's logout page (v2 logout `url`): the simulated MVPDs keep no session, so it only returns the
    /// user agent to `redirect_url` (http/https only), or says it is done.
    @Sendable func mvpdLogout(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let query = request.uri.query.map { FormData.parse($0) } ?? [:]
        if let target = query["redirect_url"], target.lowercased().hasPrefix("https://") || target.lowercased().hasPrefix("http://") {
            return HTMLPage.redirect(to: target)
        }
        let provider = query["mso_id"].flatMap { self.configuration.mvpd(id: $0)?.displayName } ?? "your TV provider"
        return HTMLPage.response(
            .ok,
            HTMLPage.page(title: "Signed out", body: "<h1>Signed out</h1><p>You are signed out of \(HTML.escape(provider)).</p>")
        )
    }

    @Sendable func showLogin(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let query = request.uri.query.map { FormData.parse($0) } ?? [:]
        let (session, mvpd) = try await self.pendingSession(query)
        return HTMLPage.response(.ok, self.loginPage(session: session, mvpd: mvpd))
    }

    @Sendable func submitLogin(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let fields = try await FormData.fields(of: request, context: context)
        let (session, mvpd) = try await self.pendingSession(fields)
        let username = (fields["username"] ?? "").trimmed
        let profile: SimulatedProfile
        do {
            profile = try self.state.withLock {
                try $0.completeCode(
                    session.code,
                    mvpd: mvpd.id,
                    userId: username.isEmpty ? nil : username,
                    requirePending: true
                )
            }
        } catch {
            // Used, denied or expired since the page was shown.
            if let current = self.state.withLock({ $0.session(code: session.code) }),
                let refusal = Self.refusal(for: current, configuration: self.configuration)
            {
                throw refusal
            }
            throw HTMLError(
                status: .badRequest,
                title: "Code expired",
                message: "The code \(session.code) can no longer be used. Request a new one on your TV."
            )
        }
        context.logger.info(
            "code completed on login page",
            metadata: ["code": .string(session.code), "mvpd": .string(profile.mvpd), "sp": .string(session.serviceProvider)]
        )
        return HTMLPage.response(.ok, Self.successPage(profile: profile, configuration: self.configuration))
    }

    /// A generated badge so configured MVPDs have a logo without any external asset.
    @Sendable func logo(_ request: Request, context: SimulatorRequestContext) async throws -> Response {
        let file = context.parameters.get("file") ?? ""
        guard file.hasSuffix(".svg"), let mvpd = self.configuration.mvpd(id: String(file.dropLast(4))) else {
            throw HTTPError(.notFound)
        }
        let initials = String(mvpd.displayName.split(separator: " ").compactMap(\.first).prefix(2)).uppercased()
        var hash: UInt32 = 2_166_136_261
        for byte in mvpd.id.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="120" height="60" viewBox="0 0 120 60">\
            <rect width="120" height="60" rx="10" fill="hsl(\(hash % 360),55%,42%)"/>\
            <text x="60" y="39" font-family="Helvetica,Arial,sans-serif" font-size="24" font-weight="700" fill="#fff" \
            text-anchor="middle">\(HTML.escape(initials))</text></svg>
            """
        return Response(
            status: .ok,
            headers: [.contentType: "image/svg+xml", .cacheControl: "max-age=3600"],
            body: .init(byteBuffer: ByteBuffer(string: svg))
        )
    }

    // MARK: Pages

    private func pendingSession(_ fields: [String: String]) async throws -> (AuthenticationSession, SimulatedMVPD) {
        let code = fields["code"] ?? ""
        guard let session = self.state.withLock({ $0.session(code: code, serviceProvider: fields["sp"]) }) else {
            throw HTMLError(status: .badRequest, title: "Unknown code", message: "The code \(code) was not found. Check it on your TV.")
        }
        if let refusal = Self.refusal(for: session, configuration: self.configuration) { throw refusal }
        guard let mvpdId = fields["mvpd"] ?? session.mvpd, let mvpd = self.configuration.mvpd(id: mvpdId) else {
            throw HTMLError(status: .badRequest, title: "Unknown TV provider", message: "Choose a TV provider from the list.")
        }
        guard self.configuration.integrates(serviceProvider: session.serviceProvider, mvpd: mvpd.id) else {
            throw HTMLError(
                status: .badRequest,
                title: "TV provider not available",
                message: "\(mvpd.displayName) is not available for \(session.serviceProvider). Choose another TV provider."
            )
        }
        return (session, mvpd)
    }

    private func providerOptions(selected: String?) -> String {
        self.configuration.mvpds.map { mvpd in
            let isSelected = mvpd.id == selected ? " selected" : ""
            return "<option value=\"\(HTML.escape(mvpd.id))\"\(isSelected)>\(HTML.escape(mvpd.displayName))</option>"
        }.joined()
    }

    private func activationPage(code: String, error: String?) -> String {
        let errorBlock = error.map { "<div class=\"error\">\(HTML.escape($0))</div>" } ?? ""
        return HTMLPage.page(
            title: "Activate your device",
            body: """
                <div class="brand">TV Everywhere</div>
                <h1>Activate your device</h1>
                <p>Enter the code shown on your TV, then sign in with your TV provider.</p>
                \(errorBlock)
                <form method="post" action="/activate">
                <label for="code">Activation code</label>
                <input class="code" id="code" name="code" value="\(HTML.escape(code))" maxlength="7" autocomplete="off" autofocus required>
                <label for="mvpd">TV provider</label>
                <select id="mvpd" name="mvpd"><option value="">The one chosen on your TV</option>\(self.providerOptions(selected: nil))</select>
                <button type="submit">Continue</button>
                </form>
                """
        )
    }

    /// Shown when the session has no MVPD yet; each button goes straight to that MVPD's login page.
    static func pickerPage(session: AuthenticationSession, configuration: SimulatorConfiguration) -> String {
        let buttons = configuration.mvpds(integratedWith: session.serviceProvider).map { mvpd in
            "<button type=\"submit\" name=\"mvpd\" value=\"\(HTML.escape(mvpd.id))\">\(HTML.escape(mvpd.displayName))</button>"
        }.joined()
        return HTMLPage.page(
            title: "Choose your TV provider",
            body: """
                <div class="brand">TV Everywhere · code \(HTML.escape(session.code))</div>
                <h1>Choose your TV provider</h1>
                <p>Sign in with the provider you pay for TV.</p>
                <form method="get" action="/_sim/mvpd/login">
                <input type="hidden" name="code" value="\(HTML.escape(session.code))">
                <input type="hidden" name="sp" value="\(HTML.escape(session.serviceProvider))">
                <div class="providers">\(buttons)</div>
                </form>
                """
        )
    }

    private func loginPage(session: AuthenticationSession, mvpd: SimulatedMVPD) -> String {
        HTMLPage.page(
            title: "\(mvpd.displayName) sign in",
            body: """
                <div class="brand">\(HTML.escape(mvpd.displayName)) · simulated provider</div>
                <h1>Sign in to \(HTML.escape(mvpd.displayName))</h1>
                <p>Any password is accepted. Code <strong>\(HTML.escape(session.code))</strong> for \(HTML.escape(session.serviceProvider)).</p>
                <form method="post" action="/_sim/mvpd/login">
                <input type="hidden" name="code" value="\(HTML.escape(session.code))">
                <input type="hidden" name="sp" value="\(HTML.escape(session.serviceProvider))">
                <input type="hidden" name="mvpd" value="\(HTML.escape(mvpd.id))">
                <label for="username">Username</label>
                <input id="username" name="username" value="user-\(HTML.escape(session.code.lowercased()))" autocomplete="username">
                <label for="password">Password</label>
                <input id="password" name="password" type="password" value="" autocomplete="current-password">
                <button type="submit">Sign in</button>
                </form>
                """
        )
    }

    static func successPage(profile: SimulatedProfile, configuration: SimulatorConfiguration) -> String {
        let provider = configuration.mvpd(id: profile.mvpd)?.displayName ?? profile.mvpd
        return HTMLPage.page(
            title: "Success",
            body: """
                <p class="ok">✓</p>
                <h1>Success! Return to your TV</h1>
                <p>You are signed in with \(HTML.escape(provider)) as \(HTML.escape(profile.userId)). Your TV will continue by itself in a few seconds.</p>
                """
        )
    }
}
