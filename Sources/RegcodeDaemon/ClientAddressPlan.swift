import DeviceRegistry
import NIOCore
import RegcodeEngine
import RegcodeSupport

/// Adobe's throttle: per client address, 1 request per second with a burst of 10 beyond it (reference §8.2; counted as
/// nginx `limit_req` does, so a new address gets 11 at once, as pass-sim answers).
struct AddressThrottle: Sendable, Equatable {
    var burst = 10
    var requestsPerSecond = 1.0
}

extension DaemonConfiguration {
    /// The mode `fleet`'s devices use.
    package func clientAddressMode(of fleet: FleetConfiguration) -> ClientAddressMode {
        fleet.clientAddress.mode ?? (backendIsLocal ? .bind : .host)
    }

    /// The addresses `fleet`'s devices take theirs from; nil in `host` mode (no device needs one).
    package func clientAddressRange(of fleet: FleetConfiguration) -> String? {
        switch clientAddressMode(of: fleet) {
        case .host: nil
        case .bind: fleet.clientAddress.addresses ?? clientAddresses ?? ClientAddressPool.loopbackRange
        case .forwardedFor: fleet.clientAddress.addresses ?? clientAddresses ?? ClientAddressPool.forwardedForRange
        }
    }

    /// The configuration key that sets `fleet`'s addresses, for messages.
    func clientAddressKey(ofFleetAt index: Int) -> String {
        fleets[index].clientAddress.addresses != nil
            ? "fleets[\(index)].client_address.addresses" : clientAddresses != nil ? "client_addresses" : "fleets[\(index)].client_address"
    }

    /// Checks every fleet's addresses: they parse, hold every device of the fleets sharing them, and (`bind`) are this
    /// host's own. `localAddresses` lists the host's interface addresses (nil: read them); every 127.0.0.0/8 address is
    /// local on Linux.
    func validateClientAddresses(localAddresses: Set<UInt32>? = nil) throws(ConfigurationError) {
        if let clientAddresses, ClientAddressPool(addresses: clientAddresses) == nil {
            throw ConfigurationError(file: configFile, key: "client_addresses", reason: Self.addressesProblem(clientAddresses))
        }
        var devicesByRange: [String: Int] = [:]
        var interfaces = localAddresses
        for (index, fleet) in fleets.enumerated() {
            guard let range = clientAddressRange(of: fleet) else { continue }
            let key = clientAddressKey(ofFleetAt: index)
            guard let pool = ClientAddressPool(addresses: range) else {
                throw ConfigurationError(file: configFile, key: key, reason: Self.addressesProblem(range))
            }
            devicesByRange[range, default: 0] += max(0, fleet.count)
            if UInt64(devicesByRange[range, default: 0]) > pool.size {
                throw ConfigurationError(
                    file: configFile,
                    key: key,
                    reason: "\(range) has \(pool.size) addresses for \(devicesByRange[range, default: 0]) devices; each device needs its own"
                )
            }
            guard clientAddressMode(of: fleet) == .bind else { continue }
            if pool.isLoopback {
                guard backendIsLocal else {
                    throw ConfigurationError(
                        file: configFile,
                        key: key,
                        reason:
                            "\(range) is on loopback, which cannot reach \(backend ?? "the backend"); bind needs addresses of this host's outgoing interface"
                    )
                }
                continue
            }
            if interfaces == nil { interfaces = Self.interfaceAddresses() }
            let local = interfaces ?? []
            for block in pool.blocks {
                for offset in 0..<block.count {
                    let address = block.first &+ UInt32(truncatingIfNeeded: offset)
                    if address >> 24 != 127, !local.contains(address) {
                        throw ConfigurationError(
                            file: configFile,
                            key: key,
                            reason: "\(ClientAddressPool.format(address)) is not an address of this host; bind needs local addresses"
                        )
                    }
                }
            }
        }
    }

    private static func addressesProblem(_ text: String) -> String {
        "'\(text)' is not a list of IPv4 addresses and ranges such as 127.0.1.0/24 or 10.0.0.5, 10.0.0.6 (each once)"
    }

    /// This host's IPv4 interface addresses.
    static func interfaceAddresses() -> Set<UInt32> {
        let devices = (try? System.enumerateDevices()) ?? []
        return Set(devices.compactMap { $0.address?.ipAddress.flatMap(ClientAddressPool.parse) })
    }

    /// The start-up warning for fleets whose devices share one address under a throttling backend, with the
    /// arithmetic; nil when no address carries more than the throttle's rate. Every backend is taken to throttle as
    /// Adobe does (the embedded simulator does too).
    func sharedAddressWarning(throttle: AddressThrottle = AddressThrottle()) -> String? {
        let sharing = fleets.filter { clientAddressMode(of: $0) == .host && $0.count > 0 }
        let devices = sharing.reduce(0) { $0 + $1.deviceNames(in: shard).count }
        guard devices > 1 else { return nil }
        let pollsPerSecond = sharing.reduce(0.0) { total, fleet in
            total + Double(fleet.deviceNames(in: shard).count) / max(fleet.poll.interval.seconds, 0.001)
        }
        guard pollsPerSecond > throttle.requestsPerSecond else { return nil }
        let names = sharing.map(\.name).joined(separator: ", ")
        let perDevice = pollsPerSecond / Double(devices)
        let throttled = Int(((pollsPerSecond - throttle.requestsPerSecond) / pollsPerSecond * 100).rounded())
        return "\(devices) devices (fleet \(names), client_address: host) share this host's address: \(devices) × "
            + "\(Self.rate(perDevice)) polls/s = \(Self.rate(pollsPerSecond)) requests/s per address against Adobe's "
            + "\(Self.rate(throttle.requestsPerSecond)) request/s (burst \(throttle.burst)) per address; expect about \(throttled)% "
            + "of polls answered 429 once the burst is spent (client_address: bind gives each device its own address)"
    }

    private static func rate(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
