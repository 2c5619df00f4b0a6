import RegcodeSupport

// The OAuth device grant's figures (RFC 8628) in the text and HTML reports: slow_down answers, early polls, denied
// and expired codes, time to login and polls per login, for the whole run and per fleet. Shown only when the run
// has any of them (``PollFigures/hasDeviceFlowFigures``): an Adobe soak's report stays as it was.

extension SoakReport {
    /// Whether the text and HTML reports show the device flow rows.
    var showsDeviceFlow: Bool {
        hasOAuthDevices || fleet.hasDeviceFlowFigures || fleets.contains { $0.figures.hasDeviceFlowFigures }
    }

    /// How an OAuth device's requests are named in the request log (`oauth.discovery`, `oauth.device_authorization`).
    static let oauthEndpointPrefix = "oauth."

    /// The scopes of the device flow table: the whole run, then each fleet when the run has named fleets.
    var deviceFlowScopes: [(scope: String, figures: PollFigures)] {
        var scopes = [(scope: "all", figures: fleet)]
        if hasNamedFleets {
            scopes += fleets.map { (scope: $0.fleet, figures: $0.figures) }
        }
        return scopes
    }

    /// The table's column titles, after the scope.
    static let deviceFlowHeaders = [
        "Slow-down answers", "Early polls", "Early after slow-down", "Denied codes", "Expired codes", "Logins",
        "Time to login p50", "Time to login p95", "Polls per login p95",
    ]

    /// One scope's cells, in ``deviceFlowHeaders`` order, each with whether it warns (an early poll after a
    /// slow-down is a client that did not slow down when told to).
    static func deviceFlowCells(_ f: PollFigures) -> [(text: String, warn: Bool)] {
        [
            (String(f.slowDownAnswers), false),
            (String(f.earlyPolls), f.earlyPolls > 0),
            (String(f.earlyPollsAfterSlowDown), f.earlyPollsAfterSlowDown > 0),
            (String(f.deniedCodes), false),
            (String(f.expiredCodes), false),
            (String(f.authenticatedCodes), false),
            (NumberText.duration(f.timeToAuthenticate.p50), false),
            (NumberText.duration(f.timeToAuthenticate.p95), false),
            (f.pollsPerLogin.p95.map { NumberText.fixed($0, maxDecimals: 0) } ?? "-", false),
        ]
    }

    /// `DEVICE FLOW` and its table, followed by a blank line; nothing when the run has no device flow figures.
    func deviceFlowTextSection() -> [String] {
        guard showsDeviceFlow else { return [] }
        let rows = deviceFlowScopes.map { scope in [Self.printable(scope.scope)] + Self.deviceFlowCells(scope.figures).map(\.text) }
        let header = ["SCOPE"] + Self.deviceFlowHeaders.map { $0.uppercased() }
        return [
            "DEVICE FLOW (OAuth device grant: early = sent before the protocol allowed; time to login from a code's first poll)",
            TextTable.render(header: header, rows: rows),
            "",
        ]
    }

    /// The HTML device flow table; empty when the run has no device flow figures.
    func deviceFlowTable() -> String {
        guard showsDeviceFlow else { return "" }
        let headers = ["Scope"] + Self.deviceFlowHeaders
        var html = "<h2>Device flow</h2>\n"
        html +=
            "<div class=\"table-wrap\"><table>\n<thead><tr>" + headers.map { "<th>\(HTML.escape($0))</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        for scope in deviceFlowScopes {
            let cells = [(text: scope.scope, warn: false)] + Self.deviceFlowCells(scope.figures)
            html +=
                "<tr class=\"device-flow\">" + cells.map { "<td\($0.warn ? " class=\"warn\"" : "")>\(HTML.escape($0.text))</td>" }.joined()
                + "</tr>\n"
        }
        return html + "</tbody>\n</table></div>\n"
    }
}
