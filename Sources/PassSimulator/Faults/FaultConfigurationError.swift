import Hummingbird
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An invalid ``FaultConfiguration``.
package struct FaultConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    package let description: String

    init(_ description: String) {
        self.description = description
    }
}
