import Foundation
import Testing

@testable import RegcodeDaemon

/// What the Kubernetes manifests hand regcoded must be a configuration it starts with. (Their schema is
/// checked by `deploy/kubernetes/check.sh`, which needs kubernetes-validate from PyPI.)
@Suite struct KubernetesManifestTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("deploy/kubernetes")

    static func manifest(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    /// The block under `regcoded.yaml: |` in the ConfigMap, without its indentation.
    static func embeddedConfiguration() throws -> String {
        let lines = try manifest("configmap.yaml").split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "regcoded.yaml: |" })
        let indent = "    "
        return lines[(start + 1)...].prefix { $0.isEmpty || $0.hasPrefix(indent) }.map { $0.dropFirst(min(indent.count, $0.count)) }
            .joined(separator: "\n")
    }

    @Test func theConfigMapHoldsAConfigurationRegcodedAccepts() throws {
        let configuration = try ConfigurationFile.parse(try Self.embeddedConfiguration(), file: "configmap.yaml")
        try configuration.validate()
        #expect(configuration.database == "/var/lib/regcoded/regcoded.sqlite")
        #expect(configuration.metrics == "0.0.0.0:9464")
        // A shared backend: the in-process simulator would give every shard a backend of its own.
        #expect(configuration.backend != nil)
        #expect(configuration.shard == nil)
    }

    @Test func theStatefulSetRunsOneShardPerReplica() throws {
        let text = try Self.manifest("statefulset.yaml")
        let replicas = try #require(text.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("replicas:") })
        let count = try #require(Int(replicas.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)))
        #expect(text.contains(#""--shard", "$(POD_INDEX)/\#(count)""#), "--shard's N must equal replicas (\(count))")
        #expect(text.contains("metadata.labels['apps.kubernetes.io/pod-index']"))
        #expect(text.contains("readOnlyRootFilesystem: true") && text.contains("runAsNonRoot: true"))
        #expect(text.contains("volumeClaimTemplates:"))
        for marker in ["prometheus.io/scrape: \"true\"", "prometheus.io/port: \"9464\"", "prometheus.io/path: /metrics"] {
            #expect(text.contains(marker))
        }
        #expect(FileManager.default.isExecutableFile(atPath: Self.directory.appendingPathComponent("check.sh").path))
    }
}
