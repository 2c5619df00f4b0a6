/// A requestor × MVPD pair.
struct IntegrationKey: Sendable, Hashable, Codable {
    let serviceProvider: String
    let mvpd: String
}
