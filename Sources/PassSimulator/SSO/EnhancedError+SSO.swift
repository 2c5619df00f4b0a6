extension EnhancedError {
    static var invalidPartner: EnhancedError {
        EnhancedError(.none, .badRequest, code: "invalid_parameter_partner", message: "The partner parameter value is missing or invalid.")
    }

    static var invalidSAMLResponse: EnhancedError {
        EnhancedError(
            .none,
            .badRequest,
            code: "invalid_parameter_saml_response",
            message: "The SAML response parameter value is missing or invalid."
        )
    }
}
