// swift-tools-version:6.0
import PackageDescription

// Herald: the arrows point one way (see docs/architecture.md):
// executables -> Intake / HeraldCtl -> Store -> Postgres -> C libraries; everything may use HeraldCore.
let package = Package(
    name: "Herald",
    products: [
        .executable(name: "herald-intake", targets: ["herald-intake"]),
        .executable(name: "heraldctl", targets: ["heraldctl"]),
    ],
    targets: [
        // C libraries from Debian.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CNghttp2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "CSystem"),
        // Non-variadic, prefixed wrappers around libmicrohttpd's variadic start function.
        .target(name: "CMicroHTTPD", linkerSettings: [.linkedLibrary("microhttpd")]),

        // Pure domain: validation, payload rendering, canonical forms, rate-limit arithmetic.
        .target(name: "HeraldCore"),
        // OpenSSL: HMAC, hashes, random keys.
        .target(name: "HeraldCrypto", dependencies: ["COpenSSL", "HeraldCore"]),
        // libpq client: connections, pool, prepared statements, transactions.
        .target(name: "Postgres", dependencies: ["CLibPQ"]),
        // Every query the intake and heraldctl run, split by concern.
        .target(name: "Store", dependencies: ["Postgres", "HeraldCore"], resources: [.copy("Migrations")]),
        // HTTP/1.1 server on libmicrohttpd.
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        // The intake: routing, auth, handlers, metrics.
        .target(name: "Intake", dependencies: ["HTTPServer", "Store", "Postgres", "HeraldCore", "HeraldCrypto"]),
        // The operator's commands.
        .target(name: "HeraldCtl", dependencies: ["Store", "Postgres", "HeraldCore", "HeraldCrypto"]),

        // Helpers shared by the test targets: an HTTP client, child processes, the test database.
        .target(name: "HeraldTestSupport"),

        .executableTarget(name: "herald-intake", dependencies: ["Intake"]),
        .executableTarget(name: "heraldctl", dependencies: ["HeraldCtl"]),

        .testTarget(name: "HeraldCoreTests", dependencies: ["HeraldCore", "HeraldCrypto"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "HeraldTestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HeraldTestSupport"]),
        .testTarget(name: "StoreTests", dependencies: ["Store", "Postgres", "HeraldCore", "HeraldTestSupport"]),
        .testTarget(name: "HeraldCtlTests", dependencies: ["HeraldCtl", "Store", "Postgres", "HeraldTestSupport"]),
        .testTarget(
            name: "IntakeTests",
            dependencies: ["Intake", "Store", "HeraldCore", "HeraldCrypto", "Postgres", "HeraldCtl", "HeraldTestSupport"]),
    ]
)
