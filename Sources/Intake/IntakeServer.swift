import Foundation
import HTTPFetch
import HTTPServer
import HeraldCore
import HeraldCrypto
import PartnerIcons
import Postgres
import ServiceSupport
import Store

/// The intake process: HTTP server, routing, auth, handlers, metrics and the janitor.
public final class IntakeServer: Sendable {
    public let configuration: IntakeConfiguration
    public let pool: PostgresPool
    let metrics = IntakeMetrics()
    /// The log lines of refusals that come in floods: one a second for each code and partner (`record`).
    let rejectionLog = LogThrottle()
    let logger: Logger
    let authenticator: Authenticator
    /// The push endpoint's group commit (one leader writing at a time, sql/functions/intake_push.sql).
    let writer: IntakeWriter
    /// What answers the routes of `IntakeRoutes.all`, and the check of their credentials.
    let handlers: IntakeHandlers
    let routeGuard: RouteGuard
    /// Fetches `iconUrl`s and media URLs (its own thread).
    let iconSource: PartnerIconSource
    let maintenance: MaintenanceStore
    let notifier: DeliveryNotifier
    let waiter: PreferWaiter
    let janitor: BackgroundService
    private let server: LockedBox<HTTPServer?> = LockedBox(nil)
    private let metricsServer: LockedBox<IntakeMetricsServer?> = LockedBox(nil)

    /// Throws when the icon fetcher cannot start (an unreadable HERALD_CA_FILE).
    public init(configuration: IntakeConfiguration, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.configuration = configuration
        pool = PostgresPool(
            configuration: .init(
                url: configuration.databaseURL, maxConnections: configuration.databasePoolSize,
                acquireTimeout: .seconds(5), connectionOptions: configuration.connectionOptions("herald-intake")))
        logger = Logger(component: "intake", minimum: configuration.logLevel)
        let partners = PartnerStore(pool: pool)
        authenticator = Authenticator(
            admin: .init(configuration.adminToken, previous: configuration.adminTokenPrevious),
            host: .init(configuration.hostToken, previous: configuration.hostTokenPrevious),
            partners: partners, metrics: metrics, cacheSeconds: configuration.partnerCacheSeconds)
        let signer = HMACSigner(
            keyID: configuration.signingKeyID, key: configuration.signingKeys[configuration.signingKeyID]!)
        notifier = DeliveryNotifier(
            databaseURL: configuration.databaseURL,
            options: configuration.connectionOptions("herald-intake notifier"),
            minimumInterval: configuration.notifyInterval, logger: logger)
        let pushStore = PushStore(pool: pool)
        waiter = PreferWaiter(store: pushStore, maxPerPartner: configuration.preferWaitMaxPerPartner, logger: logger)
        writer = IntakeWriter(
            pool: pool, batchWindow: configuration.pushBatchWindow,
            notify: { [notifier] in notifier.wakeUpForWrite() })
        // One fetch thread for icons and media.
        let fetcher = try HTTPFetcher(configuration: configuration.fetch)
        iconSource = PartnerIconSource(fetcher: fetcher)
        let mediaHandler = MediaHandler(
            store: MediaStore(pool: pool), source: PartnerMediaSource(fetcher: fetcher), rules: configuration.rules,
            signer: signer,
            verifiers: configuration.signingKeys.sorted { $0.key < $1.key }.map {
                HMACSigner(keyID: $0.key, key: $0.value)
            },
            lifetimeHours: configuration.mediaLifetimeHours, maxPerPartner: configuration.mediaMaxPerPartner,
            logger: logger, clock: clock)
        let pushHandler = PushHandler(
            store: pushStore, writer: writer, media: mediaHandler,
            recipients: RecipientCache(
                capacity: configuration.recipientCacheSize),
            rules: configuration.rules, signer: signer, metrics: metrics, notifier: notifier,
            waiter: waiter, clock: clock)
        let activityHandler = ActivityHandler(
            store: ActivityStore(pool: pool), channels: ChannelStore(pool: pool), keys: pushStore,
            directory: DirectoryStore(pool: pool), rules: configuration.liveActivityRules,
            sessionWindow: Double(configuration.sessionWindowDays) * 86_400, budgets: configuration.liveActivityBudgets,
            signer: signer, metrics: metrics,
            notifier: notifier, clock: clock)
        let iconHandler = IconHandler(
            icons: PartnerIconStore(pool: pool), partners: partners, source: iconSource, logger: logger)
        let audits = AdminAuditStore(pool: pool)
        let adminHandler = AdminHandler(
            partners: partners, audits: audits, icons: iconSource, logger: logger,
            defaultTenant: configuration.defaultTenant,
            defaultPerMinute: configuration.defaultRateLimitPerMinute,
            defaultPerDay: configuration.defaultRateLimitPerDay, signer: signer)
        let hostHandler = HostHandler(directory: DirectoryStore(pool: pool), publicURL: configuration.rules.publicURL)
        let reminderHandler = ReminderHandler(
            store: ReminderStore(pool: pool), rules: configuration.rules, signer: signer,
            maxPending: configuration.reminderMaxPending, metrics: metrics, notifier: notifier, clock: clock)
        let consoleGate = ConsoleGate(
            sessions: ConsoleSessionStore(pool: pool), enabled: configuration.consoleEnabled,
            sessionSeconds: configuration.consoleSessionHours * 3_600,
            idleSeconds: configuration.consoleIdleMinutes * 60,
            secureCookie: configuration.rules.publicURL?.lowercased().hasPrefix("https://") ?? false)
        let consoleHandler = ConsoleHandler(
            gate: consoleGate, authenticator: authenticator, console: ConsoleStore(pool: pool),
            stats: StatsStore(pool: pool),
            workers: WorkerHeartbeatStore(), replays: ReplayStore(pool: pool), partners: partners,
            tokens: TokenReportStore(pool: pool), webhooks: WebhookStore(pool: pool), audits: audits,
            replayTTLSeconds: configuration.rules.defaultTTLSeconds,
            proxies: TrustedProxies(networks: configuration.trustedProxies), logger: logger)
        handlers = IntakeHandlers(
            push: pushHandler, activity: activityHandler, admin: adminHandler, host: hostHandler,
            deliveryEvents: DeliveryEventHandler(store: DeliveryEventStore(pool: pool), clock: clock),
            reminder: reminderHandler, icon: iconHandler, media: mediaHandler, console: consoleHandler,
            probe: ProbeHandler(pool: pool))
        routeGuard = RouteGuard(
            authenticator: authenticator, consoleGate: consoleGate,
            consoleEnabled: configuration.consoleEnabled)
        maintenance = MaintenanceStore(pool: pool)
        janitor = Self.janitor(maintenance, logger: logger)
    }

    /// Starts listening (the API, and `/metrics` on its own port) and the janitor; returns the API's bound port.
    @discardableResult
    public func start() throws -> UInt16 {
        try configuration.validateTokens()
        try configuration.validatePorts()
        var settings = HTTPServerConfiguration(
            port: configuration.port, threadCount: configuration.threads, maxBodyBytes: 65_536,
            connectionLimit: configuration.maxConnections,
            perAddressConnectionLimit: configuration.maxConnectionsPerAddress,
            connectionTimeoutSeconds: configuration.idleTimeoutSeconds,
            requestReadTimeoutSeconds: configuration.requestTimeoutSeconds,
            queueWaitLimitMilliseconds: configuration.queueWaitLimitMilliseconds)
        // Liveness stays true under overload: /healthz never waits behind the queue nor is refused as overloaded.
        settings.answeredAtOnce = { request in IntakeRoutes.isLiveness(method: request.method, path: request.path) }
        // A route with a larger body limit (the icon upload's 1 MiB, the media upload's 5 MiB) has it only with the
        // route's credential (checked here, before the body is read, so unauthenticated clients cannot make the
        // intake hold megabytes per connection); every other request keeps 64 KiB. A partner key not in the
        // authenticator's cache costs one indexed lookup here, as it would on a handler thread.
        settings.largerBodyLimit = { [authenticator] head in
            guard let larger = IntakeRoutes.largerBodyLimit(method: head.method, path: head.path) else { return nil }
            let authorization = head.header("authorization")
            switch larger.access {
            case .admin: return authenticator.isAdmin(authorization: authorization, counted: false) ? larger.limit : nil
            case .partner:
                return (try? authenticator.partner(authorization: authorization, counted: false)) != nil
                    ? larger.limit : nil
            default: return nil
            }
        }
        // Every connection the server may hold, the database pool, and a margin for the listening socket, the
        // notifier's, waiter's and janitor's connections, icon fetches and logs.
        let descriptorsNeeded = settings.acceptedConnectionLimit + configuration.databasePoolSize + 64
        let descriptors = FileDescriptorLimit.raiseToHard()
        if descriptors.soft < descriptorsNeeded {
            logger.warning(
                "file descriptor limit below what the connection limit needs: raise the hard limit",
                [
                    ("limit", .number(Double(descriptors.soft))), ("needed", .number(Double(descriptorsNeeded))),
                ])
        }
        let http = try HTTPServer(
            configuration: settings,
            rejection: { [self] rejection in reject(rejection) },
            handler: { [self] request in handle(request) })
        server.set(http)
        let metricsHTTP: IntakeMetricsServer
        do {
            metricsHTTP = try IntakeMetricsServer(host: settings.host, port: configuration.metricsPort) { [self] in
                metrics.render(preferWaiting: waiter.count, writer: writer.counts)
            }
        } catch {
            http.stop()
            server.set(nil)
            throw ConfigurationError(variable: "HERALD_INTAKE_METRICS_PORT", problem: "cannot listen: \(error)")
        }
        metricsServer.set(metricsHTTP)
        if !HTTPServer.replacesLibraryErrorPages {
            logger.warning("libmicrohttpd's own error pages are not replaced: some 4xx/505 answers stay HTML")
        }
        notifier.start()
        waiter.start()
        janitor.start()
        logger.info(
            "listening",
            [
                ("port", .number(Double(http.port))),
                ("metricsPort", .number(Double(metricsHTTP.port))),
                ("allocator", .string(Allocator.name)),
                ("fileDescriptors", .number(Double(descriptors.soft))),
            ])
        return http.port
    }

    /// The port `/metrics` is served on (the one picked when HERALD_INTAKE_METRICS_PORT is 0); 0 before `start`.
    public var metricsPort: UInt16 {
        metricsServer.get()?.port ?? 0
    }

    /// Connections the HTTP server has admitted and not yet seen closed; for tests.
    var admittedConnections: Int {
        server.get()?.admittedConnectionCount ?? 0
    }

    public func stop() {
        // Waiting requests are answered first (with their counts as they are), so the server's drain
        // does not wait for them.
        waiter.stop()
        server.get()?.stop()
        server.set(nil)
        metricsServer.get()?.stop()
        metricsServer.set(nil)
        // After the server's drain: the handlers it waited for have been answered.
        writer.stop()
        notifier.stop()
        janitor.stop()
        iconSource.close()
        pool.close()
        logger.info("stopped")
    }

    /// Routes, authenticates and answers one request; logs a line and records metrics (for a deferred
    /// answer, once it is given).
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let started = ContinuousClock.now
        var routeName = IntakeMetrics.other
        var logged = true
        var partnerID: String?
        var errorCode: String?
        var response: HTTPResponse
        do {
            switch IntakeRoutes.match(method: request.method, path: request.path) {
            case .notFound: throw HeraldError.notFound
            case .methodNotAllowed(let allowed):
                errorCode = HeraldError.methodNotAllowed.code
                response = Reply.error(.methodNotAllowed)
                response.headers.append(("Allow", allowed.joined(separator: ", ")))
            case .found(let route, let values):
                routeName = route.path.text
                logged = !route.isLiveness
                let routed = RoutedRequest(http: request, parameters: try PathParameters(values, of: route.path))
                let credential = try routeGuard.credential(for: route.access, request)
                if case .partner(let partner) = credential { partnerID = partner.id.uuidString.lowercased() }
                response = try route.respond(handlers, routed, credential)
            }
        } catch {
            let herald = StoreErrors.heraldError(for: error)
            errorCode = herald.code
            if herald.status >= 500 {
                // PostgresError's description carries the SQLSTATE, never the server's message.
                logger.log(
                    herald.status == 503 ? .warning : .error, "request failed",
                    [("route", .string(routeName)), ("error", .string(String(describing: error)))])
            }
            response = Reply.error(herald)
        }
        // Admin answers carry partner keys and webhook secrets (each shown once), and every one of them, errors
        // included, is kept out of browser and proxy caches here, for the whole credential group at once.
        if IntakeRoutes.isAdminPath(request.path) { response.headers.append(("Cache-Control", "no-store")) }
        let finish: @Sendable (HTTPResponse) -> Void = { [self, routeName, logged, partnerID, errorCode] final in
            record(
                method: request.method, route: routeName, logged: logged, status: final.status, started: started,
                partnerID: partnerID, errorCode: errorCode)
        }
        if let pending = response.deferred {
            pending.whenComplete(finish)
        } else {
            finish(response)
        }
        return response
    }

    /// A request the HTTP server refused before routing (framing, target, sizes, or libmicrohttpd's own
    /// refusals): the JSON error shape, a log line and a metric like every other rejection.
    func reject(_ rejection: HTTPRejection) -> HTTPResponse {
        let error = HeraldError(status: rejection.status, code: rejection.code, message: rejection.message)
        record(
            method: IntakeMetrics.other, route: IntakeMetrics.other, logged: true, status: rejection.status,
            started: .now, partnerID: nil, errorCode: rejection.code)
        return Reply.error(error)
    }

    /// `logged` is false for the liveness route, which leaves no log line.
    private func record(
        method: String, route: String, logged: Bool, status: Int, started: ContinuousClock.Instant,
        partnerID: String?, errorCode: String?
    ) {
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        metrics.recordRequest(route: route, method: method, status: status, seconds: seconds)
        // A rejected request leaves its log line; accepted ones only at debug (one per request
        // at full load would be most of the intake's output), and their fields are built only then.
        let level: LogLevel = status >= 400 ? .info : .debug
        guard level >= logger.minimum, logged else {
            return
        }
        // Refusals that come in floods log one line a second for each code (and partner), the next written saying
        // how many were skipped: the server's own (an overload, a client reconnecting in a loop, a scanner's
        // unknown paths) and a partner's requests over its limits (429).
        var skippedLines = 0
        if route == IntakeMetrics.other || status == 429 {
            guard let skipped = rejectionLog.admit("\(errorCode ?? "")|\(partnerID ?? "")") else { return }
            skippedLines = skipped
        }
        let knownMethod = IntakeMetrics.knownMethods.contains(method) ? method : IntakeMetrics.other
        var fields: [(String, JSONValue)] = [
            ("method", .string(knownMethod)), ("route", .string(route)),
            ("status", .number(Double(status))), ("ms", .number((seconds * 1000 * 100).rounded() / 100)),
        ]
        if let partnerID { fields.append(("partner", .string(partnerID))) }
        if let errorCode { fields.append(("code", .string(errorCode))) }
        if skippedLines > 0 { fields.append(("skipped", .number(Double(skippedLines)))) }
        logger.log(level, "request", fields)
    }

    /// Every minute: make sure next months' partitions exist, delete expired rate buckets and
    /// idempotency keys. Cheap and idempotent, so every intake process runs it.
    static func janitor(_ maintenance: MaintenanceStore, logger: Logger) -> BackgroundService {
        BackgroundService(.init(name: "herald-janitor"), logger: logger) { service in
            // Each task on its own: a role that may not create partitions still cleans.
            do {
                try maintenance.ensurePartitions(monthsAhead: 2)
            } catch {
                logger.warning("janitor: creating partitions failed", [("error", .string(String(describing: error)))])
            }
            do {
                try maintenance.cleanExpired()
            } catch {
                logger.warning("janitor: cleaning failed", [("error", .string(String(describing: error)))])
            }
            service.sleep(for: .seconds(60))
        }
    }
}
