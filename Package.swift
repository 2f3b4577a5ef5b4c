// swift-tools-version:6.1
import PackageDescription

// Herald: the arrows point one way (see docs/architecture.md):
// executables -> Intake / Worker / Simulator / HeraldCtl -> Store / APNs / FCM / PartnerIcons -> Icons /
// Postgres / HTTP2 / HTTPFetch
// -> C libraries; everything may use HeraldCore. ServiceSupport (logs, signals, settings; used by the services and
// HTTPFetch) knows no database: PostgresLogging joins its Logger to Postgres for the executables.
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
        // Icons: librsvg (with the cairo and GIO it draws and reads through) and gdk-pixbuf.
        .systemLibrary(name: "CRsvg", pkgConfig: "librsvg-2.0", providers: [.apt(["librsvg2-dev"])]),
        .systemLibrary(name: "CGdkPixbuf", pkgConfig: "gdk-pixbuf-2.0", providers: [.apt(["libgdk-pixbuf-2.0-dev"])]),
        // gdk-pixbuf loader signal handlers in C (g_signal_connect is a macro): the pixel-limit guard.
        .target(name: "CGdkPixbufShim", dependencies: ["CGdkPixbuf"]),
        // jemalloc in place of glibc's malloc in every process, with its settings (CAllocator.c says why).
        .target(name: "CAllocator", linkerSettings: [.linkedLibrary("jemalloc")]),
        // Non-variadic, prefixed wrappers around libmicrohttpd's variadic start function.
        .target(name: "CMicroHTTPD", linkerSettings: [.linkedLibrary("microhttpd")]),
        // Non-variadic, prefixed wrappers around libcurl's variadic setopt/getinfo, and macros that do not import.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),

        // Pure domain: validation, payload rendering, canonical forms, rate-limit arithmetic.
        .target(name: "HeraldCore"),
        // Partner icons: PNG, JPEG or SVG to square PNGs in memory, bounded in bytes, pixels, time and concurrency.
        .target(name: "Icons", dependencies: ["CRsvg", "CGdkPixbuf", "CGdkPixbufShim", "HeraldCrypto", "HeraldCore"]),
        // OpenSSL: HMAC, hashes, random keys.
        .target(name: "HeraldCrypto", dependencies: ["COpenSSL", "HeraldCore"]),
        // libpq client: connections, pool, prepared statements, transactions.
        .target(name: "Postgres", dependencies: ["CLibPQ", "HeraldCore"]),
        // Every query the intake and heraldctl run, split by concern.
        // Its named queries (Queries/*.sql) are embedded at build time by the EmbedQueries plugin.
        .target(
            name: "Store", dependencies: ["Postgres", "HeraldCore"], exclude: ["Queries"],
            resources: [.copy("Migrations")], plugins: ["EmbedQueries"]),
        // The build-time tool and plugin that embed Sources/Store/Queries/*.sql as typed constants.
        .executableTarget(name: "embed-queries"),
        .plugin(name: "EmbedQueries", capability: .buildTool(), dependencies: ["embed-queries"]),
        // HTTP/1.1 server on libmicrohttpd.
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        // What every long-running process shares: JSON logs, signals, environment settings.
        .target(name: "ServiceSupport", dependencies: ["CAllocator", "CSystem", "HeraldCore"]),
        // The database server's notices in a process's log: ServiceSupport's Logger over Postgres' notices, kept out
        // of ServiceSupport so that what uses it without a database (HTTPFetch) does not link libpq.
        .target(name: "PostgresLogging", dependencies: ["ServiceSupport", "Postgres"]),
        // A partner's icon (shared by the admin API and heraldctl) or a push's media, from an upload or a fetched URL.
        .target(name: "PartnerIcons", dependencies: ["HTTPFetch", "Icons", "Store", "HeraldCore", "ServiceSupport"]),
        // The intake: routing, auth, handlers, metrics.
        .target(
            name: "Intake",
            dependencies: [
                "ServiceSupport", "HTTPServer", "Store", "Postgres", "HeraldCore", "HeraldCrypto",
                "HTTPFetch", "PartnerIcons", "Icons",
            ]),
        // The operator's commands.
        .target(
            name: "HeraldCtl",
            dependencies: [
                "Store", "Postgres", "HeraldCore", "HeraldCrypto", "HTTP2", "ServiceSupport",
                "PartnerIcons",
            ]),

        // HTTP/2 on nghttp2 + OpenSSL: an epoll event loop, TLS with ALPN h2 and cleartext h2c, client and
        // server sessions (the worker's APNs/FCM clients and the simulator share it).
        .target(name: "HTTP2", dependencies: ["CNghttp2", "COpenSSL", "CSystem", "HeraldCore"]),
        // Outbound HTTPS on libcurl's multi interface (icons, webhooks): one thread, https only, an address policy.
        .target(name: "HTTPFetch", dependencies: ["CCurl", "ServiceSupport", "HeraldCore"]),
        // APNs: provider JWT, request headers, response classification, the client.
        .target(name: "APNs", dependencies: ["HTTP2", "HeraldCrypto", "HeraldCore"]),
        // FCM HTTP v1: service-account OAuth2, message building, error classification, the client.
        .target(name: "FCM", dependencies: ["HTTP2", "HeraldCrypto", "HeraldCore"]),
        // The worker: claim loop, senders, batched completion, rescuer, wake-up, health and metrics.
        .target(
            name: "Worker",
            dependencies: [
                "ServiceSupport", "Store", "Postgres", "APNs", "FCM", "HTTPServer", "HeraldCore",
                "HTTPFetch", "HeraldCrypto", "HTTP2",
            ]),
        // The APNs + FCM + OAuth2 simulator (herald-sim).
        // It shares the clients' file formats and token builder (service account, provider JWT),
        // never their request checks: those it implements as APNs and FCM do.
        .target(name: "Simulator", dependencies: ["HTTP2", "APNs", "FCM", "HeraldCrypto", "HeraldCore"]),

        // Helpers shared by the test targets: an HTTP client, child processes, the test database, a TLS server.
        .target(name: "HeraldTestSupport", dependencies: ["Postgres", "Store", "HeraldCore", "HTTP2"]),

        .executableTarget(name: "herald-intake", dependencies: ["Intake", "ServiceSupport", "PostgresLogging"]),
        .executableTarget(name: "heraldctl", dependencies: ["HeraldCtl"]),
        .executableTarget(
            name: "herald-worker",
            dependencies: ["Worker", "ServiceSupport", "PostgresLogging", "HeraldCore"]),
        .executableTarget(name: "herald-sim", dependencies: ["Simulator", "ServiceSupport", "HeraldCore"]),

        .testTarget(name: "HeraldCoreTests", dependencies: ["HeraldCore", "HeraldCrypto", "HeraldTestSupport"]),
        .testTarget(name: "IconsTests", dependencies: ["Icons", "CGdkPixbuf", "HeraldTestSupport"]),
        .testTarget(name: "ServiceSupportTests", dependencies: ["ServiceSupport", "HeraldCore", "HeraldTestSupport"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "HeraldCore", "HeraldTestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HeraldTestSupport"]),
        // Fixtures/ holds databases of earlier releases, read by path (MigrationBaselineTests).
        .testTarget(
            name: "StoreTests", dependencies: ["Store", "Postgres", "HeraldCore", "HeraldTestSupport"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "HeraldCtlTests",
            dependencies: [
                "HeraldCtl", "Store", "Postgres", "HeraldCore", "HeraldCrypto", "HeraldTestSupport", "ServiceSupport",
            ]),
        .testTarget(
            name: "IntakeTests",
            dependencies: [
                "Intake", "Store", "HeraldCore", "HeraldCrypto", "Postgres", "HeraldCtl", "HeraldTestSupport",
                "HTTP2", "HTTPServer",
            ]),
        .testTarget(name: "HTTP2Tests", dependencies: ["HTTP2", "COpenSSL", "HeraldCore", "HeraldTestSupport"]),
        .testTarget(
            name: "HTTPFetchTests", dependencies: ["HTTPFetch", "HTTP2", "ServiceSupport", "HeraldTestSupport"]),
        .testTarget(
            name: "SimulatorTests",
            dependencies: ["Simulator", "APNs", "HTTP2", "HeraldCrypto", "HeraldCore", "HeraldTestSupport"]),
        .testTarget(
            name: "DeliveryClientTests",
            dependencies: ["APNs", "FCM", "Simulator", "HTTP2", "HeraldCrypto", "HeraldCore", "HeraldTestSupport"]),
        .testTarget(
            name: "WorkerTests",
            dependencies: [
                "Worker", "Store", "Postgres", "APNs", "FCM", "Simulator", "HTTP2", "HeraldCore",
                "HeraldCrypto", "Intake", "HeraldTestSupport",
            ]),
    ]
)
