import ControlRPC
import DeviceEvents
import RegcodeStore

/// Pages through stored events after a sequence number, for `subscribe` replays.
struct StoredEventReplay: AsyncSequence, Sendable {
    typealias Element = EventNotification
    let store: RegcodeStore
    let after: Int64
    let devices: Set<String>?
    let names: Set<String>?

    struct AsyncIterator: AsyncIteratorProtocol {
        let store: RegcodeStore
        var cursor: Int64
        let devices: Set<String>?
        let names: Set<String>?
        var page: [StoredEvent] = []
        var index = 0
        var exhausted = false

        mutating func next() async throws -> EventNotification? {
            if index == page.count {
                guard !exhausted else { return nil }
                let (store, cursor, devices, names) = (self.store, self.cursor, self.devices, self.names)
                page = try await store.events(after: cursor, devices: devices, names: names, limit: 500)
                index = 0
                if page.count < 500 { exhausted = true }
                guard !page.isEmpty else { return nil }
            }
            let event = page[index]
            index += 1
            cursor = event.seq
            // One subscriber reads a replay: its transport encodes it, as it needs.
            return EventNotification(unencoded: EventEncoding.params(event))
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(store: store, cursor: after, devices: devices, names: names)
    }
}
