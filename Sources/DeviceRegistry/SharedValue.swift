import Synchronization

/// A value shared between tasks and closures (a `Mutex` cannot be captured).
package final class SharedValue<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    package init(_ value: Value) {
        storage = Mutex(value)
    }

    package var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
