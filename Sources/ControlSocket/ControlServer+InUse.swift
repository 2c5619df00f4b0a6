extension ControlServer {
    /// Why a daemon cannot serve the control socket at `path` because another process listens on it now, or nil: a
    /// daemon checks this before it creates any file of its own.
    package static func inUseProblem(path: String) -> String? {
        UnixSocketFile.probe(path: path) == .live ? ControlServerError.socketInUse(path).description : nil
    }
}
