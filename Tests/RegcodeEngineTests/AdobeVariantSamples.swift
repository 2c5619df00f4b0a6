/// Adobe's documented REST v2 response bodies for the entitlement variants, as Adobe Pass's documentation
/// (github.com/AdobeDocs/pass.en, `help/authentication/integration-guide-programmers/rest-apis/rest-api-v2/apis/…`)
/// shows them. Where a sample is not valid JSON as published, the fix is named next to it; where the docs show no
/// body for a code (HBA, parental controls, network), the item error is built from the enhanced-error-codes table
/// (code, status, action, message) in the shape of the documented denials.
enum AdobeVariantSamples {
    /// `configuration-apis/…-retrieve-configuration-for-specific-service-provider.md`, the MVPD list (three entries of it).
    static let configuration = #"""
        {"device": "unknown", "clientType": "html5", "os": "Unknown",
         "requestor": {"id": "REF30", "name": "Reference site only in 30",
          "domains": [{"name": "adobe.com", "mvpdInitiated": false}],
          "mvpds": [
            {"id": "AdobePass_SMI", "displayName": "Adobe Pass SMI",
             "logoUrl": "https://blogs.adobe.com/conversations/files/2010/08/adobe-logo.jpg", "authPerAggregator": false},
            {"id": "TempPass_TEST40", "displayName": "Adobe Temp Pass Test 3 min",
             "logoUrl": "https://entitlement.auth.adobe.com/entitlement/noLogo.png", "authPerAggregator": true, "isTempPass": true},
            {"id": "ATTOTT", "displayName": "DIRECTV STREAM", "logoUrl": "https://entitlement.auth.adobe.com/entitlement/directvstream.jpg"}
          ]}}
        """#

    /// `sessions-apis/…-create-authentication-session.md`, example 4 (basic or promotional TempPass).
    static let sessionTempPass = #"""
        {
            "actionName": "authorize",
            "actionType": "direct",
            "reasonType": "temporary",
            "url": "/api/v2/REF30/decisions/authorize/TempPass_TEST40",
            "sessionId": "1b614390-6610-4d14-9421-6565f6e75958",
            "mvpd": "TempPass_TEST40",
            "serviceProvider": "REF30"
        }
        """#

    /// Example 5 (degradation applied).
    static let sessionDegraded = #"""
        {
            "actionName": "authorize",
            "actionType": "direct",
            "reasonType": "degraded",
            "url": "/api/v2/REF30/decisions/authorize/Cablevision",
            "sessionId": "1b614390-6610-4d14-9421-6565f6e75958",
            "mvpd": "Cablevision",
            "serviceProvider": "REF30"
        }
        """#

    /// `profiles-apis/…-retrieve-profile-for-specific-mvpd.md`, example 4, "Available".
    static let profileTempPass = #"""
        {
            "profiles": {
                "TempPass_TEST40": {
                    "notBefore": 1697718650206,
                    "notAfter": 1697718710206,
                    "issuer": "Adobe",
                    "type": "temporary",
                    "attributes": {
                        "expiration_date": {"value": 1697718710206, "state": "plain"},
                        "userID": {"value": "temppass_0bdf451aa9c8fa60e80f6b99ab48310c73b480f1", "state": "plain"}
                    }
                }
            }
        }
        """#
    static let profileTempPassNotBefore: Int64 = 1_697_718_650_206
    static let profileTempPassNotAfter: Int64 = 1_697_718_710_206

    /// Example 4, "Duration Limit Exceeded" (HTTP 403).
    static let profileTempPassDurationExceeded = #"""
        {
            "status": 403,
            "code": "temporary_access_duration_limit_exceeded",
            "message": "The temporary access duration limit has been exceeded.",
            "helpUrl": "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html",
            "action": "authentication"
        }
        """#

    /// Example 6, "AuthNAll Degradation", with `"${degradedMvpd}"` as `Cablevision` and the `{` after `"attributes":`
    /// the published sample lacks.
    static let profileDegraded = #"""
        {
            "profiles": {
                "Cablevision": {
                    "notBefore": 1697719042666,
                    "notAfter": 1697719102666,
                    "issuer": "Adobe",
                    "type": "degraded",
                    "attributes": {
                        "userID": {
                            "value": "95cf93bcd183214a0bdf451aa9c8fa60e80f6b99ab48310c73b480f1",
                            "state": "plain"
                        }
                    }
                }
            }
        }
        """#
    static let profileDegradedNotBefore: Int64 = 1_697_719_042_666

    /// `decisions-apis/…-retrieve-authorization-decisions-using-specific-mvpd.md`, example 4, "Available".
    static let decisionTempPass = #"""
        {
            "decisions": [
                {
                    "resource": "REF30",
                    "serviceProvider": "apasstest1",
                    "mvpd": "TempPass_TEST40",
                    "source": "temppass",
                    "authorized": true,
                    "token": {
                        "notBefore": 1697094207324,
                        "notAfter": 1697094802367,
                        "serializedToken": "PHNpZ25hdHVyZUluZm8..."
                    },
                    "notBefore": 1697094207324,
                    "notAfter": 1697594802367
                }
            ]
        }
        """#

    /// Example 4, "Duration Limit Exceeded".
    static let decisionTempPassDurationExceeded = #"""
        {
            "decisions": [
                {
                    "resource": "REF30",
                    "serviceProvider": "apasstest1",
                    "mvpd": "TempPass_TEST40",
                    "source": "temppass",
                    "authorized": false,
                    "error": {
                        "status": 403,
                        "code": "temporary_access_duration_limit_exceeded",
                        "message": "The temporary access duration limit has been exceeded.",
                        "helpUrl": "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html",
                        "action": "authentication"
                    }
                }
            ]
        }
        """#

    /// Example 5 (promotional TempPass), "Resources Limit Exceeded".
    static let decisionPromotionalResourcesExceeded = #"""
        {
            "decisions": [
                {
                    "resource": "REF30",
                    "serviceProvider": "apasstest1",
                    "mvpd": "flexibleTempPass",
                    "source": "temppass",
                    "authorized": false,
                    "error": {
                        "status": 403,
                        "code": "temporary_access_resources_limit_exceeded",
                        "message": "The temporary access resources limit has been exceeded.",
                        "helpUrl": "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html",
                        "action": "authentication"
                    }
                }
            ]
        }
        """#

    /// Example 3, "AuthNAll Degradation" (and, without the decisions' own `notBefore`/`notAfter`, "AuthZAll"), with
    /// `"${degradedMvpd}"` as `Cablevision` and the comma between the two decisions the published sample lacks.
    static let decisionsDegraded = #"""
        {
            "decisions": [
                {
                    "resource": "REF30",
                    "serviceProvider": "REF30",
                    "mvpd": "Cablevision",
                    "source": "degradation",
                    "authorized": true,
                    "token": {
                        "notBefore": 1697543318183,
                        "notAfter": 1697543918183,
                        "serializedToken": "PHNpZ25hdHVyZUluZm8+..."
                    },
                    "notBefore": 1697543318183,
                    "notAfter": 1697549918183
                },
                {
                    "resource": "apasstest1",
                    "serviceProvider": "REF30",
                    "mvpd": "Cablevision",
                    "source": "degradation",
                    "authorized": true,
                    "token": {
                        "notBefore": 1697543318183,
                        "notAfter": 1697543918183,
                        "serializedToken": "TYGjZ33jjLPi78yuX99+..."
                    },
                    "notBefore": 1697543318183,
                    "notAfter": 1697549918183
                }
            ]
        }
        """#

    /// Example 3, "AuthZNone Degradation" (first decision; same fixes).
    static let decisionAuthZNone = #"""
        {
            "decisions": [
                {
                    "resource": "REF30",
                    "serviceProvider": "REF30",
                    "mvpd": "Cablevision",
                    "source": "degradation",
                    "authorized": false,
                    "error": {
                        "status": 403,
                        "code": "authorization_denied_by_degradation_rule",
                        "message": "The integration has an AuthZNone rule applied for the requested resources",
                        "helpUrl": "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html",
                        "action": "none"
                    }
                }
            ]
        }
        """#

    /// A denial of `REF30` by the MVPD with an item error built from the enhanced-error-codes table.
    static func itemDenial(code: String, action: String, message: String) -> String {
        #"""
        {"decisions": [{"resource": "REF30", "serviceProvider": "REF30", "mvpd": "Cablevision", "source": "mvpd",
          "authorized": false,
          "error": {"status": 403, "code": "\#(code)", "message": "\#(message)",
                    "helpUrl": "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html",
                    "action": "\#(action)"}}]}
        """#
    }

    static let hbaMessage =
        "The MVPD has returned a \\\"Deny\\\" decision due home-based authentication policies. The current authentication was obtain through a Home-based authentication flow and but the device is no longer in-home when requesting authorization for the specified resource. The user must re-authenticate with a supported MVPD in order to continue."
    static let parentalMessage = "The MVPD has returned a \\\"Deny\\\" decision due parental controls settings for the specified resource."
    static let networkMessage = "There was a connection timeout with the associated partner service. Retrying the request might solve the issue."

    /// `decisions-apis/…-retrieve-preauthorization-decisions-using-specific-mvpd.md`, example 1, with `"resource1"`
    /// for the published `"resource1 "` (a stray space).
    static let preauthorization = #"""
        {
           "decisions": [
              {"resource": "resource1", "serviceProvider": "REF30", "mvpd": "Cablevision", "source": "mvpd", "authorized": true},
              {"resource": "resource2", "serviceProvider": "REF30", "mvpd": "Cablevision", "source": "mvpd", "authorized": true},
              {
                 "resource": "resource3",
                 "serviceProvider": "REF30",
                 "mvpd": "Cablevision",
                 "source": "mvpd",
                 "authorized": false,
                 "error": {
                    "status": 403,
                    "code": "preauthorization_denied_by_mvpd",
                    "message": "The MVPD has returned a \"Deny\" decision when requesting pre-authorization for the specified resource.",
                    "helpUrl": "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html",
                    "action": "none"
                 }
              }
           ]
        }
        """#
}
