import Foundation
import Testing

extension EndToEnd {
    /// The control socket's directory as the units and tmpfiles.d leave it: never removed by a stop of the service
    /// (a `RuntimeDirectory=` without `RuntimeDirectoryPreserve=yes` would take `regcoded.socket`'s node with it) and
    /// open to the socket's group. systemd is not PID 1 on the machines the tests run on, so the restart itself is
    /// not run; the settings are read, and tmpfiles.d and a client in the group are run for real.
    @Suite(.serialized, .timeLimit(.minutes(2))) struct SystemdSocketDirectoryTests {
        static let systemd = SystemdTests.repository.appendingPathComponent("systemd")

        static func unit(_ name: String) throws -> [(key: String, value: String)] {
            let text = try String(contentsOf: systemd.appendingPathComponent(name), encoding: .utf8)
            return text.split(separator: "\n").compactMap { line in
                guard !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { return nil }
                return (String(line[..<equals]), String(line[line.index(after: equals)...]))
            }
        }

        static func values(_ key: String, in unit: [(key: String, value: String)]) -> [String] {
            unit.filter { $0.key == key }.flatMap { $0.value.split(separator: " ").map(String.init) }
        }

        /// The socket's directory under /run, e.g. `regcoded` or `regcoded/%i`.
        static func socketDirectory(_ socketUnit: String) throws -> String {
            let listen = try #require(values("ListenStream", in: try unit(socketUnit)).first)
            let directory = (listen as NSString).deletingLastPathComponent
            #expect(directory.hasPrefix("/run/"), "\(listen)")
            return String(directory.dropFirst("/run/".count))
        }

        @Test(arguments: [("regcoded.service", "regcoded.socket"), ("regcoded@.service", "regcoded@.socket")])
        func aStopOfTheServiceNeverRemovesTheSocketsDirectory(service: String, socket: String) throws {
            let directory = try Self.socketDirectory(socket)
            let settings = try Self.unit(service)
            if Self.values("RuntimeDirectory", in: settings).contains(directory) {
                #expect(Self.values("RuntimeDirectoryPreserve", in: settings) == ["yes"], "\(service) would remove /run/\(directory) on stop")
                let mode = try #require(Self.values("RuntimeDirectoryMode", in: settings).first.flatMap { Int($0, radix: 8) })
                #expect(mode & 0o001 != 0, "\(service): systemd chowns /run/\(directory) to the service's group; others must traverse it")
            } else {
                // Not the service's: made by tmpfiles.d, and writable to the service through its sandbox.
                let tmpfiles = try String(contentsOf: Self.systemd.appendingPathComponent("regcoded.tmpfiles"), encoding: .utf8)
                #expect(tmpfiles.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().first == "/run/\(directory)" })
                #expect(Self.values("ReadWritePaths", in: settings).contains("/run/\(directory)"))
                #expect(settings.contains { $0.key == "ExecStart" && $0.value.contains("--socket /run/\(directory)/regcoded.sock") })
            }
        }

        @Test func tmpfilesMakesTheSocketsDirectoryForTheLabGroupAndAClientInTheGroupConnects() async throws {
            let root = try TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: root.path("etc"), withIntermediateDirectories: true)
            let sysusers = try SystemdTests.run(
                "/usr/bin/systemd-sysusers",
                ["--root=\(root.path(""))", Self.systemd.appendingPathComponent("regcoded.sysusers").path]
            )
            #expect(sysusers.status == 0, "\(sysusers.output)")
            let tmpfiles = try SystemdTests.run(
                "/usr/bin/systemd-tmpfiles",
                ["--create", "--root=\(root.path(""))", Self.systemd.appendingPathComponent("regcoded.tmpfiles").path]
            )
            let socketGroup = try #require(Self.values("SocketGroup", in: try Self.unit("regcoded.socket")).first)
            let groups = try String(contentsOfFile: root.path("etc/group"), encoding: .utf8)
            let gid = try #require(
                groups.split(separator: "\n").first { $0.hasPrefix("\(socketGroup):") }.flatMap { Int($0.split(separator: ":")[2]) }
            )
            let passwd = try String(contentsOfFile: root.path("etc/passwd"), encoding: .utf8)
            let uid = try #require(passwd.split(separator: "\n").first { $0.hasPrefix("regcoded:") }.flatMap { Int($0.split(separator: ":")[2]) })
            guard getuid() == 0 else {
                // tmpfiles cannot chown as another user; the settings test above still reads the line.
                return
            }
            #expect(tmpfiles.status == 0, "\(tmpfiles.output)")
            let directory = root.path("run/regcoded")
            let attributes = try FileManager.default.attributesOfItem(atPath: directory)
            #expect((attributes[.posixPermissions] as? Int) == 0o750)
            #expect((attributes[.groupOwnerAccountID] as? Int) == gid)
            #expect((attributes[.ownerAccountID] as? Int) == uid)

            // The socket as regcoded.socket makes it (SocketUser, SocketGroup, SocketMode=0660); a lab user (an
            // unused uid in the group) connects, the same user outside the group is refused by the directory.
            let socketPath = "\(directory)/regcoded.sock"
            let listener = """
                import os, socket, sys
                s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chown(sys.argv[1], \(uid), \(gid)); os.chmod(sys.argv[1], 0o660)
                s.listen(4); print("listening", flush=True)
                for _ in range(2):
                    c, _ = s.accept(); c.sendall(b"hello\\n"); c.close()
                """
            let server = try ChildProcess("/usr/bin/python3", ["-c", listener, socketPath], absolute: true)
            defer { server.signal(SIGKILL) }
            #expect(await server.waitForOutput("listening"), "\(server.text)")
            let client = "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(6).decode().strip())"
            let member = try SystemdTests.run(
                "/usr/bin/setpriv",
                ["--reuid=42424", "--regid=42424", "--groups=\(gid)", "/usr/bin/python3", "-c", client, socketPath]
            )
            #expect(member.status == 0 && member.output.contains("hello"), "\(member.output)")
            let stranger = try SystemdTests.run(
                "/usr/bin/setpriv",
                ["--reuid=42424", "--regid=42424", "--clear-groups", "/usr/bin/python3", "-c", client, socketPath]
            )
            #expect(stranger.status != 0 && stranger.output.contains("Permission denied"), "\(stranger.output)")
        }
    }
}
