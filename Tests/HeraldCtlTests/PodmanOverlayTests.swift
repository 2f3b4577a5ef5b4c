import Foundation
import HeraldTestSupport
import Testing

/// deploy/k8s/podman/render.py, the overlay scripts/kube-demo plays deploy/k8s/ through (docs/deployment.md): run
/// here without podman, so a manifest change that the overlay cannot render fails the tests, not the next demo.
@Suite("deploy/k8s/podman overlay")
struct PodmanOverlayTests {
    struct Plan: Decodable {
        struct Pod: Decodable {
            struct Container: Decodable {
                let name: String
                let probes: [String: String]
                let ports: [String: Int]
            }
            let name: String
            let source: String
            let containers: [Container]
            let stopSeconds: Int
        }
        struct Skipped: Decodable {
            let file: String
            let kind: String
        }
        let pods: [Pod]
        let skipped: [Skipped]
        let settings: [String: String]
    }

    static let render = DeployManifestTests.root.appendingPathComponent("deploy/k8s/podman/render.py")

    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ChildProcess.runDetached(
            try DeployManifestTests.tool("python3"), [render.path] + arguments,
            environment: ProcessInfo.processInfo.environment)
    }

    /// Renders for `workers` worker replicas into a new folder; returns the folder.
    static func renderPods(workers: Int) async throws -> URL {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("herald-overlay-\(UUID().uuidString)")
        let result = try await run([
            "pods", "--out", out.path, "--image", "localhost/herald:test", "--postgres-image", "localhost/pg:test",
            "--port-base", "47500", "--workers", String(workers),
        ])
        #expect(result.status == 0, "\(result.output)")
        return out
    }

    static func plan(in folder: URL) throws -> Plan {
        try JSONDecoder().decode(Plan.self, from: Data(contentsOf: folder.appendingPathComponent("plan.json")))
    }

    @Test("every manifest renders: each pod valid Kubernetes, every other kind named as not run by podman")
    func everyManifestRenders() async throws {
        let out = try await Self.renderPods(workers: 3)
        defer { try? FileManager.default.removeItem(at: out) }
        let plan = try Self.plan(in: out)
        #expect(
            plan.pods.map(\.name).sorted() == [
                "herald-intake-0", "herald-intake-1", "herald-migrate", "herald-partitions", "herald-postgres",
                "herald-sim", "herald-worker-0", "herald-worker-1", "herald-worker-2",
            ])
        // Each applied manifest is either played or listed as skipped, with its reason.
        let accounted = Set(plan.pods.map(\.source) + plan.skipped.map(\.file) + ["configmap.yaml"])
        for manifest in DeployManifestTests.appliedManifests {
            #expect(
                accounted.contains(manifest.lastPathComponent), "\(manifest.lastPathComponent) is not accounted for")
        }
        #expect(
            Set(plan.skipped.map(\.kind)) == ["Namespace", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"])
        let files = DeployManifestTests.yamlFiles(in: out)
        #expect(files.count == plan.pods.count * 2, "\(files.map(\.lastPathComponent))")  // a pod, its herald-config
        for file in files {
            let result = try await DeployManifestTests.kubernetesValidate(file)
            #expect(result.status == 0, "\(file.lastPathComponent): \(result.output)")
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains("registry.example.com"), "\(file.lastPathComponent) keeps the placeholder image")
        }
    }

    @Test("host networking: no two pods share a port, each moved with its setting, probes on the moved ports")
    func portsAreDistinct() async throws {
        let out = try await Self.renderPods(workers: 3)
        defer { try? FileManager.default.removeItem(at: out) }
        let plan = try Self.plan(in: out)
        let ports = plan.pods.flatMap { $0.containers.flatMap { $0.ports.values } }
        #expect(ports.count == 7, "\(ports)")  // two intakes (API, metrics), three workers (metrics)
        #expect(Set(ports).count == ports.count, "\(ports)")
        for pod in plan.pods where pod.name.hasPrefix("herald-worker") || pod.name.hasPrefix("herald-intake") {
            let container = try #require(pod.containers.first)
            let text = try String(contentsOf: out.appendingPathComponent("\(pod.name).yaml"), encoding: .utf8)
            #expect(text.contains("hostNetwork: true"))
            #expect(
                !text.contains("containerPort"), "\(pod.name): podman 4.3 refuses port mappings on the host network")
            #expect(!text.contains("httpGet"), "\(pod.name): podman would probe with curl, which the image lacks")
            #expect(!text.contains("preStop"))
            // podman 4.3 lets envFrom win over env: the port's setting is moved in the pod's own herald-config.
            let config = try String(contentsOf: out.appendingPathComponent("\(pod.name).config.yaml"), encoding: .utf8)
            for (name, port) in container.ports {
                #expect(config.contains("_PORT: '\(port)'"), "\(pod.name): port \(name) moved without its setting")
            }
            let readiness = try #require(container.probes["readinessProbe"])
            #expect(container.ports.values.contains { readiness.hasPrefix("http://127.0.0.1:\($0)/") }, "\(readiness)")
            #expect(text.contains("/opt/herald/bin/heraldctl"), "\(pod.name): the liveness probe is heraldctl probe")
        }
        // The grace periods come from the manifests: the workers' outlasts the drain.
        let worker = try #require(plan.pods.first { $0.name == "herald-worker-0" })
        let drain = try #require(plan.settings["HERALD_DRAIN_SECONDS"].flatMap(Int.init))
        #expect(worker.stopSeconds > drain)
    }

    @Test("scaling renders one pod per replica: two workers, then five")
    func replicas() async throws {
        for workers in [2, 5] {
            let out = try await Self.renderPods(workers: workers)
            defer { try? FileManager.default.removeItem(at: out) }
            let names = try Self.plan(in: out).pods.map(\.name).filter { $0.hasPrefix("herald-worker-") }.sorted()
            #expect(names == (0..<workers).map { "herald-worker-\($0)" })
        }
    }

    @Test("the Secrets come out in the shapes podman 4.3 reads: base64 values for env, file contents for volumes")
    func secrets() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-secret-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let env = folder.appendingPathComponent("secrets.env")
        try "HERALD_ADMIN_TOKEN=a=b c\nHERALD_HOST_TOKEN=xyz\n".write(to: env, atomically: true, encoding: .utf8)
        let envResult = try await Self.run(["secret-env", env.path])
        #expect(envResult.status == 0, "\(envResult.output)")
        let values = try JSONDecoder().decode([String: String].self, from: Data(envResult.output.utf8))
        #expect(values["HERALD_ADMIN_TOKEN"].flatMap { Data(base64Encoded: $0) } == Data("a=b c".utf8))
        #expect(values["HERALD_HOST_TOKEN"].flatMap { Data(base64Encoded: $0) } == Data("xyz".utf8))

        let key = folder.appendingPathComponent("key.p8")
        try "-----BEGIN PRIVATE KEY-----\nabc\n".write(to: key, atomically: true, encoding: .utf8)
        let filesResult = try await Self.run(["secret-files", "creds", "apns-key.p8=\(key.path)"])
        #expect(filesResult.status == 0, "\(filesResult.output)")
        struct Secret: Decodable {
            struct Metadata: Decodable { let name: String }
            let kind: String
            let metadata: Metadata
            let data: [String: String]
        }
        let secret = try JSONDecoder().decode(Secret.self, from: Data(filesResult.output.utf8))
        #expect(secret.kind == "Secret" && secret.metadata.name == "creds")
        #expect(secret.data["apns-key.p8"] == "-----BEGIN PRIVATE KEY-----\nabc\n")
    }

    @Test("a manifest the overlay cannot place fails the render with a message, not a traceback")
    func unknownKindFails() async throws {
        let manifests = FileManager.default.temporaryDirectory.appendingPathComponent("herald-k8s-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: manifests, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: manifests) }
        for name in ["configmap.yaml", "worker-deployment.yaml"] {
            try FileManager.default.copyItem(
                at: DeployManifestTests.deploy.appendingPathComponent("k8s/\(name)"),
                to: manifests.appendingPathComponent(name))
        }
        try "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: herald}\n".write(
            to: manifests.appendingPathComponent("ingress.yaml"), atomically: true, encoding: .utf8)
        let out = manifests.appendingPathComponent("out")
        let result = try await Self.run([
            "pods", "--manifests", manifests.path, "--out", out.path, "--image", "i", "--postgres-image", "p",
            "--port-base", "47500", "--workers", "1",
        ])
        #expect(result.status == 1)
        #expect(result.output.contains("ingress.yaml: podman cannot run a Ingress"), "\(result.output)")
        #expect(!result.output.contains("Traceback"))
    }
}
