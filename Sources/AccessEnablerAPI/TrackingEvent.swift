/// `sendTrackingData` event types.
package enum TrackingEvent: Int64, Sendable, CaseIterable {
    case authenticationDetection = 0
    case authorizationDetection = 1
    case mvpdSelection = 2

    package var name: String {
        switch self {
        case .authenticationDetection: "authenticationDetection"
        case .authorizationDetection: "authorizationDetection"
        case .mvpdSelection: "mvpdSelection"
        }
    }
}
