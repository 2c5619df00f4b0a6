import Crypto
import Glibc
import Synchronization
import _CryptoExtras

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The RSA key the simulator signs and checks DCR software statements with (RS256, as the statements Adobe's TVE
/// Dashboard issues), standing in for Adobe's own key: a statement the simulator did not sign does not register.
///
/// A key made with ``ephemeral()`` is generated on first use and lives as long as the process; one read from a file
/// (``loadOrCreate(path:)``) is kept from run to run, so statements issued once keep working.
package struct SoftwareStatementKey: Sendable {
    private final class Storage: Sendable {
        let key: Mutex<_RSA.Signing.PrivateKey?>
        init(_ key: _RSA.Signing.PrivateKey?) { self.key = Mutex(key) }
    }

    private let storage: Storage
    /// The file the key was read from or written to; `nil` for an in-memory key.
    package let path: String?

    /// A key generated when first needed, never written anywhere.
    package static func ephemeral() -> SoftwareStatementKey {
        SoftwareStatementKey(storage: Storage(nil), path: nil)
    }

    /// A key from its PKCS#1 or PKCS#8 PEM text.
    package init(pemRepresentation: String) throws {
        self.init(storage: Storage(try _RSA.Signing.PrivateKey(pemRepresentation: pemRepresentation)), path: nil)
    }

    private init(storage: Storage, path: String?) {
        self.storage = storage
        self.path = path
    }

    /// The file holding the statement key of a simulator that keeps its state in `statePath`: its name without
    /// `.sqlite`, then `.statement-key.pem`.
    package static func path(besideState statePath: String) -> String {
        (statePath.hasSuffix(".sqlite") ? String(statePath.dropLast(".sqlite".count)) : statePath) + ".statement-key.pem"
    }

    /// Reads the key in `path`, or generates one and writes it there (mode 0600) when the file does not exist.
    /// - Returns: the key and whether it was created now.
    package static func loadOrCreate(path: String) throws(SoftwareStatementKeyError) -> (key: SoftwareStatementKey, created: Bool) {
        if FileManager.default.fileExists(atPath: path) {
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw .unreadable(path: path, reason: String(describing: error))
            }
            do {
                return (SoftwareStatementKey(storage: Storage(try _RSA.Signing.PrivateKey(pemRepresentation: text)), path: path), false)
            } catch {
                throw .unreadable(path: path, reason: "not an RSA private key in PEM")
            }
        }
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        } catch {
            throw .cannotWrite(path: path, reason: String(describing: error))
        }
        let pem = key.pemRepresentation
        // Created exclusively with its final mode: the key is never readable by others, not even for a moment, and two
        // processes creating it at once cannot both win.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            if errno == EEXIST { return try Self.loadOrCreate(path: path) }
            throw .cannotWrite(path: path, reason: reason)
        }
        defer { close(descriptor) }
        let bytes = Array(pem.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw .cannotWrite(path: path, reason: String(cString: strerror(errno))) }
        return (SoftwareStatementKey(storage: Storage(key), path: path), true)
    }

    private var privateKey: _RSA.Signing.PrivateKey? {
        self.storage.key.withLock { key in
            if let key { return key }
            key = try? _RSA.Signing.PrivateKey(keySize: .bits2048)
            return key
        }
    }

    /// Issues a software statement for `softwareId`, as the TVE Dashboard does for a registered application:
    /// `{"software_id", "client_name"?, "redirect_uris"?, "iat"}`, signed RS256.
    ///
    /// A client registering with the statement may name only one of `redirectURIs` as its `redirect_uri`.
    package func issue(
        softwareId: String,
        redirectURIs: [String] = [],
        clientName: String? = nil,
        issuedAt: Date = Date()
    ) throws(SoftwareStatementKeyError) -> String {
        guard !softwareId.isEmpty else { throw .invalidClaims("software_id is empty") }
        guard let key = self.privateKey else { throw .cannotWrite(path: self.path ?? "(memory)", reason: "no RSA key could be generated") }
        var claims: [String: MetadataValue] = [
            "software_id": .string(softwareId),
            "iat": .integer(Int64(issuedAt.timeIntervalSince1970)),
        ]
        if let clientName { claims["client_name"] = .string(clientName) }
        if !redirectURIs.isEmpty { claims["redirect_uris"] = .list(redirectURIs.map { .string($0) }) }
        do {
            return try JWS.sign(claims: claims, key: .rsa(key))
        } catch {
            throw .invalidClaims(String(describing: error))
        }
    }

    /// The claims of `statement` when it is an RS256 JWS this key signed; else `nil`.
    func verify(_ statement: String) -> JWS.Claims? {
        guard let key = self.privateKey else { return nil }
        return JWS.verify(statement, key: .rsa(key.publicKey))
    }
}

/// Why a statement key could not be read, written or used.
package enum SoftwareStatementKeyError: Error, Sendable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    case invalidClaims(String)

    package var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the statement key \(path): \(reason)"
        case .cannotWrite(let path, let reason): "cannot write the statement key \(path): \(reason)"
        case .invalidClaims(let reason): "cannot issue the statement: \(reason)"
        }
    }
}
