/// Whether each backend request is stored before it is sent (`write_ahead`).
package enum WriteAhead: String, Sendable, CaseIterable {
    /// Each request is stored first (``RegcodeEngine/RequestInFlight``): a kill leaves no answer unaccounted for. The
    /// default; it costs a record and its removal per request, and each call waits for the commit of its record.
    case requests
    /// Requests go out as soon as the steps before them are stored: an answer in flight at a kill is lost without a
    /// trace. For the largest fleets, where the record per poll costs more than the machine has to spare.
    case none
}
