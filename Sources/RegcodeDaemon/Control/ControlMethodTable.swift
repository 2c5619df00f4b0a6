import ControlRPC
import RegcodeSupport

/// The control surface's methods by name, built from the ``ControlMethod`` values that answer them, so what is
/// dispatched, what is checked and what `rpc.discover` describes cannot drift (as the simulator's `RouteTable`).
struct ControlMethodTable: Sendable {
    /// In the order `rpc.discover` lists them.
    let methods: [ControlMethod]
    private let byName: [String: ControlMethod]

    init(_ methods: [ControlMethod]) {
        var byName: [String: ControlMethod] = [:]
        for method in methods {
            precondition(byName.updateValue(method, forKey: method.name) == nil, "control method \(method.name) listed twice")
        }
        self.methods = methods
        self.byName = byName
    }

    /// Every method's name.
    var names: [String] { methods.map(\.name) }

    /// The method called `name`, if the surface has one.
    func method(named name: String) -> ControlMethod? { byName[name] }

}
