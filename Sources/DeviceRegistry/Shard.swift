import RegcodeSupport

/// One slice of every fleet (`--shard K/N`, `shard: K/N`): N processes, on one host or many, each
/// run with their own K in 0…N-1, together run every configured device exactly once.
///
/// The rule: member `i` (1-based) of fleet `F` belongs to shard `(i - 1 + fnv1a64(F) mod N) mod N`.
/// Consecutive members go to consecutive shards, so every fleet is balanced to within one device;
/// the rotation by the fleet name's FNV-1a hash spreads small fleets (one device, a few) over the
/// shards instead of piling them on shard 0. The rule reads only the fleet name, the member index
/// and N — never the host, the order of the fleets or the other fleets' sizes — so a device lands on
/// the same shard on every start and its name and settings are those of an unsharded run.
package struct Shard: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// K, 0-based (a Kubernetes StatefulSet pod ordinal).
    package let index: Int
    /// N, the number of shards.
    package let count: Int

    /// The most shards a fleet is split into; far beyond any deployment, it bounds the input.
    package static let maximumCount = 10_000

    /// `K/N` with 0 ≤ K < N ≤ ``maximumCount``, or a reason it is not one.
    package static func parse(_ text: String) -> Result<Shard, ShardSyntaxError> {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Self.decimal(parts[0]), let count = Self.decimal(parts[1]) else {
            return .failure(ShardSyntaxError(reason: "'\(text)' is not K/N (shard K of N, K counted from 0: 0/3, 1/3, 2/3)"))
        }
        guard (1...maximumCount).contains(count) else {
            return .failure(ShardSyntaxError(reason: "'\(text)': N must be between 1 and \(maximumCount)"))
        }
        guard index < count else {
            return .failure(ShardSyntaxError(reason: "'\(text)': K must be below N (K counts from 0: 0…\(count - 1))"))
        }
        return .success(Shard(validIndex: index, count: count))
    }

    private init(validIndex: Int, count: Int) {
        self.index = validIndex
        self.count = count
    }

    /// Digits only: `Int("+1")` would accept a sign, and a shard is never written with one.
    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 6, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    /// `K/N`: the flag's syntax, the `shard` metrics label and what the database records.
    package var description: String { "\(index)/\(count)" }

    /// Whether member `member` (1-based) of the fleet named `fleet` is this shard's.
    package func owns(fleet: String, member: Int) -> Bool {
        Self.shard(ofFleet: fleet, member: member, count: count) == index
    }

    /// The shard (0-based) member `member` (1-based) of `fleet` belongs to when there are `count` shards.
    package static func shard(ofFleet fleet: String, member: Int, count: Int) -> Int {
        let rotation = Int(StableHash.fnv1a64(fleet) % UInt64(count))
        return ((member - 1) % count + rotation) % count
    }
}

/// Why a shard text is not `K/N`.
package struct ShardSyntaxError: Error, Equatable {
    package var reason: String
}
