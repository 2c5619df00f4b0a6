import BackendHTTP
import DeviceRegistry
import Foundation
import Logging
import RegcodeEngine
import RegcodeSupport
import SoakReport
import Yams

/// Reads the YAML configuration file. Unknown keys are errors (a typo must not silently fall
/// back to a default), and every error names the file, the key path and the reason.
package enum ConfigurationFile {
    package static func load(path: String, into base: DaemonConfiguration = DaemonConfiguration()) throws(ConfigurationError) -> DaemonConfiguration {
        let text: String
        switch readRegularFile(path) {
        case .success(let contents): text = contents
        case .failure(let problem): throw ConfigurationError(file: path, key: "(file)", reason: problem.reason)
        }
        return try parse(text, file: path, into: base)
    }

    /// Why a configuration or secret file cannot be read, in the words of the actual cause.
    struct FileProblem: Error {
        var reason: String
    }

    /// Reads a regular UTF-8 file. A directory, a device such as `/dev/null` or a FIFO is refused as
    /// "not a regular file" (a FIFO would block the start, `/dev/null` would silently mean "no
    /// settings"), and "permission denied" is said only when `open` says so.
    static func readRegularFile(_ path: String) -> Result<String, FileProblem> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(FileProblem(reason: errnoReason(errno))) }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            let kind = type == S_IFDIR ? "a directory" : type == S_IFCHR || type == S_IFBLK ? "a device" : "a special file"
            return .failure(FileProblem(reason: "is \(kind), not a regular file"))
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(FileProblem(reason: errnoReason(errno))) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        let data: Data
        do {
            data = try handle.readToEnd() ?? Data()
        } catch {
            return .failure(FileProblem(reason: "cannot read: \(error.localizedDescription)"))
        }
        guard let text = String(data: data, encoding: .utf8) else {
            return .failure(FileProblem(reason: "is not UTF-8 text"))
        }
        return .success(text)
    }

    private static func errnoReason(_ code: Int32) -> String {
        switch code {
        case ENOENT: "no such file"
        case EACCES, EPERM: "permission denied"
        case ENOTDIR: "a component of the path is not a directory"
        default: "cannot read: \(String(cString: strerror(code)))"
        }
    }

    package static func parse(
        _ text: String,
        file: String?,
        into base: DaemonConfiguration = DaemonConfiguration()
    ) throws(ConfigurationError) -> DaemonConfiguration {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw ConfigurationError(file: file, key: "(syntax)", reason: "\(error)")
        }
        var configuration = base
        configuration.configFile = file
        guard let root else { return configuration }
        try read(root, file: file, into: &configuration)
        return configuration
    }

    /// Walks the top level's rows, then makes the fleets: `fleets` (each over `defaults`), or the one fleet of
    /// `defaults` and the command line without it.
    static func read(_ root: Node, file: String?, into configuration: inout DaemonConfiguration) throws(ConfigurationError) {
        let reader = ConfigurationReader(file: file)
        var state = ConfigurationFileState(configuration: configuration)
        try reader.apply(ConfigurationKeys.daemon, try reader.mapping(root, "(top level)"), prefix: "", to: &state)
        configuration = state.configuration
        if let fleetsNode = state.fleets {
            var fleets: [FleetConfiguration] = []
            for (path, item) in try reader.sequence(fleetsNode, "fleets", expected: "expected a list of fleets") {
                var fleet = state.defaults
                try reader.apply(ConfigurationKeys.fleet, item, prefix: path, to: &fleet)
                fleets.append(fleet)
            }
            configuration.fleets = fleets
        } else {
            var fleet = state.defaults
            fleet.name = configuration.fleets.first?.name ?? fleet.name
            fleet.count = configuration.fleets.first?.count ?? fleet.count
            configuration.fleets = [fleet]
        }
    }
}
