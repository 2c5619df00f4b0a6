import Foundation

/// Whether the daemon's records reach the database.
package struct StorageHealth: Sendable, Equatable {
    package struct Failure: Sendable, Equatable {
        /// The last error, as SQLite put it.
        package var error: String
        package var since: Date
        /// Failed attempts at the current batch.
        package var attempts: Int
    }

    /// Set while writes fail.
    package var failure: Failure?
    /// Steps waiting in memory to be stored (as of the last change).
    package var backlog = 0
    /// Whether new work is held because the backlog reached its bound.
    package var holding = false
    /// Failed write attempts since the start.
    package var failedWrites = 0
    /// Holds since the start.
    package var holds = 0

    /// One line for logs and systemd's `STATUS=`; nil when all is well.
    package var summary: String? {
        switch (failure, holding) {
        case (nil, false): nil
        case (let failure?, false): "storage failing (\(failure.error)); \(backlog) steps kept in memory"
        case (let failure?, true): "storage failing (\(failure.error)); \(backlog) steps kept in memory; devices paused"
        case (nil, true): "catching up on \(backlog) stored steps; devices paused"
        }
    }
}
