import DeviceRegistry
import Logging
import RegcodeEngine
import RegcodeRecords
import Synchronization

/// Says once, as an error with the way out, that the backend refused the unsigned lab statement that fleets without a
/// statement send to a local backend other than the embedded simulator. Every device otherwise reports its own bare
/// `R400`, and a separately started pass-sim (as strict as Adobe) refuses it unless told to accept unsigned ones.
final class UnsignedStatementHint: Sendable {
    /// Fleets that send the unsigned lab statement.
    private let fleets: Set<String>
    /// Whether devices of no configured fleet (added over the socket) send it.
    private let others: Bool
    private let catalog: DeviceCatalog
    private let said = Atomic(false)
    private let logger: Logger

    /// The DCR errors of a statement the backend will not take.
    static let refusals: Set<String> = ["invalid_software_statement", "unapproved_software_statement"]

    /// Nil when no fleet sends the unsigned statement (the embedded simulator replaces it with one it signed).
    init?(catalog: DeviceCatalog, logger: Logger) {
        let fleets = Set(catalog.secrets.filter { $0.value.softwareStatement == DeviceCatalog.embeddedSoftwareStatement }.keys)
        let others = catalog.embeddedStatement == DeviceCatalog.embeddedSoftwareStatement
        guard !fleets.isEmpty || others else { return nil }
        self.fleets = fleets
        self.others = others
        self.catalog = catalog
        self.logger = logger
    }

    /// A pipeline observer (see ``Daemon/stepObservers(_:activationURL:liveStats:hint:)``).
    func record(_ steps: [DeviceStep]) {
        guard !said.load(ordering: .relaxed) else { return }
        for step in steps {
            for request in step.requests where request.stage == .registration {
                guard let error = request.errorCode, Self.refusals.contains(error) else { continue }
                let fleet = catalog.fleet(forDevice: step.device)?.name
                guard fleet.map(fleets.contains) ?? others,
                    said.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
                else { continue }
                logger.error(
                    "the backend refused the unsigned lab statement of fleets that name no software statement: give them one it signed (pass-sim statement --statement-key KEY --software-id regcoded-lab > FILE, then --software-statement FILE or software_statement_file: FILE), or start pass-sim with --accept-unsigned-statements",
                    metadata: ["device": "\(step.device)", "fleet": "\(fleet ?? "-")", "dcr.error": "\(error)"]
                )
                return
            }
        }
    }
}
