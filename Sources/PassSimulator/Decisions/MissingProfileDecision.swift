/// How authorize and preauthorize answer a device that has no valid profile for the MVPD (nor one its SSO headers
/// reach).
///
/// Adobe's documents leave the shape open. Both decisions API pages list `authenticated_profile_missing` and
/// `authenticated_profile_expired` among "the error codes most commonly returned by this API", and the enhanced error
/// codes list gives them status 403 with action `authentication`
/// (https://experienceleague.adobe.com/en/docs/pass/authentication/integration-guide-programmers/features-standard/error-reporting/enhanced-error-codes);
/// but the pages' response tables and `restApiV2.json` list no 403 (200, 400, 401, 405, 500), and the codes page
/// warns that the HTTP status may differ from the error's `status` "especially when … communicated as item-level
/// error information".
package enum MissingProfileDecision: String, Sendable, CaseIterable, Codable {
    /// HTTP 403 with the error as the whole body: the reading the enhanced error codes list and the error sections
    /// suggest, and the default.
    case topLevel = "top-level"
    /// HTTP 200 with every resource denied (`authorized: false`) and the error as each decision's `error`.
    case itemLevel = "item-level"
}
