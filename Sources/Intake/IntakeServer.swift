import ServiceSupport
import Foundation
import HTTPFetch
import HTTPServer
import HeraldCore
import HeraldCrypto
import PartnerIcons
import Postgres
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
    let pushHandler: PushHandler
    /// The push endpoint's group commit (one leader writing at a time, sql/021_intake_push_slots.sql).
    let writer: IntakeWriter
    let activityHandler: ActivityHandler
    let adminHandler: AdminHandler
    let hostHandler: HostHandler
    let reminderHandler: ReminderHandler
    let iconHandler: IconHandler
    let consoleGate: ConsoleGate
    let consoleHandler: ConsoleHandler
    /// Fetches `iconUrl`s (its own thread).
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
        pool = PostgresPool(configuration: .init(
            url: configuration.databaseURL, maxConnections: configuration.databasePoolSize,
            acquireTimeout: .seconds(5), connectionOptions: configuration.connectionOptions("herald-intake")))
        logger = Logger(component: "intake", minimum: configuration.logLevel)
        let partners = PartnerStore(pool: pool)
        authenticator = Authenticator(
            admin: .init(configuration.adminToken, previous: configuration.adminTokenPrevious),
            host: .init(configuration.hostToken, previous: configuration.hostTokenPrevious),
            partners: partners, metrics: metrics, cacheSeconds: configuration.partnerCacheSeconds)
        let signer = HMACSigner(keyID: configuration.signingKeyID, key: configuration.signingKeys[configuration.signingKeyID]!)
        notifier = DeliveryNotifier(databaseURL: configuration.databaseURL,
                                    options: configuration.connectionOptions("herald-intake notifier"),
                                    minimumInterval: configuration.notifyInterval, logger: logger)
        let pushStore = PushStore(pool: pool)
        waiter = PreferWaiter(store: pushStore, maxPerPartner: configuration.preferWaitMaxPerPartner, logger: logger)
        writer = IntakeWriter(pool: pool, batchWindow: configuration.pushBatchWindow,
                              notify: { [notifier] in notifier.wakeUpForWrite() })
        pushHandler = PushHandler(store: pushStore, writer: writer, recipients: RecipientCache(
                                      capacity: configuration.recipientCacheSize),
                                  rules: configuration.rules, signer: signer, metrics: metrics, notifier: notifier,
                                  waiter: waiter, clock: clock)
        activityHandler = ActivityHandler(
            store: ActivityStore(pool: pool), channels: ChannelStore(pool: pool), keys: pushStore,
            rules: configuration.liveActivityRules,
            sessionWindow: Double(configuration.sessionWindowDays) * 86_400, budgets: configuration.liveActivityBudgets,
            signer: signer, metrics: metrics,
            notifier: notifier, clock: clock)
        iconSource = PartnerIconSource(fetcher: try HTTPFetcher(configuration: configuration.fetch))
        iconHandler = IconHandler(icons: PartnerIconStore(pool: pool), partners: partners, source: iconSource, logger: logger)
        let audits = AdminAuditStore(pool: pool)
        adminHandler = AdminHandler(partners: partners, audits: audits, icons: iconSource, logger: logger,
                                    defaultTenant: configuration.defaultTenant,
                                    defaultPerMinute: configuration.defaultRateLimitPerMinute,
                                    defaultPerDay: configuration.defaultRateLimitPerDay, signer: signer)
        hostHandler = HostHandler(directory: DirectoryStore(pool: pool), publicURL: configuration.rules.publicURL)
        reminderHandler = ReminderHandler(
            store: ReminderStore(pool: pool), rules: configuration.rules, signer: signer,
            maxPending: configuration.reminderMaxPending, metrics: metrics, notifier: notifier, clock: clock)
        consoleGate = ConsoleGate(
            sessions: ConsoleSessionStore(pool: pool), enabled: configuration.consoleEnabled,
            sessionSeconds: configuration.consoleSessionHours * 3_600,
            idleSeconds: configuration.consoleIdleMinutes * 60,
            secureCookie: configuration.rules.publicURL?.lowercased().hasPrefix("https://") ?? false)
        consoleHandler = ConsoleHandler(
            gate: consoleGate, authenticator: authenticator, console: ConsoleStore(pool: pool), stats: StatsStore(pool: pool),
            workers: WorkerHeartbeatStore(), replays: ReplayStore(pool: pool), partners: partners,
            tokens: TokenReportStore(pool: pool), webhooks: WebhookStore(pool: pool), audits: audits,
            replayTTLSeconds: configuration.rules.defaultTTLSeconds,
            proxies: TrustedProxies(networks: configuration.trustedProxies), logger: logger)
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
        // The icon upload alone may send up to 1 MiB, and only with the admin token (checked here, before the
        // body is read, so unauthenticated clients cannot make the intake hold 1 MiB per connection); every
        // other request keeps 64 KiB.
        settings.largerBodyLimit = { [authenticator] head in
            guard IntakeRoutes.isIconUpload(method: head.method, path: head.path),
                  authenticator.isAdmin(authorization: head.header("authorization"), counted: false)
            else { return nil }
            return PartnerIcon.maxSourceBytes
        }
        // Every connection the server may hold, the database pool, and a margin for the listening socket, the
        // notifier's, waiter's and janitor's connections, icon fetches and logs.
        let descriptorsNeeded = settings.acceptedConnectionLimit + configuration.databasePoolSize + 64
        let descriptors = FileDescriptorLimit.raiseToHard()
        if descriptors.soft < descriptorsNeeded {
            logger.warning("file descriptor limit below what the connection limit needs: raise the hard limit", [
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
        logger.info("listening", [
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
            case .found(let route, let parameters):
                routeName = route.pattern
                try IntakeRoutes.checkParameters(parameters)
                let routed = RoutedRequest(http: request, parameters: parameters)
                response = try dispatch(route, routed, partnerID: &partnerID)
            }
        } catch {
            let herald = StoreErrors.heraldError(for: error)
            errorCode = herald.code
            if herald.status >= 500 {
                // PostgresError's description carries the SQLSTATE, never the server's message.
                logger.log(herald.status == 503 ? .warning : .error, "request failed",
                           [("route", .string(routeName)), ("error", .string(String(describing: error)))])
            }
            response = Reply.error(herald)
        }
        // Admin answers carry partner keys and webhook secrets (each shown once), and every one of them, errors
        // included, is kept out of browser and proxy caches here, for the whole credential group at once.
        if IntakeRoutes.isAdminPath(request.path) { response.headers.append(("Cache-Control", "no-store")) }
        let finish: @Sendable (HTTPResponse) -> Void = { [self, routeName, partnerID, errorCode] final in
            record(method: request.method, route: routeName, status: final.status, started: started,
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
        record(method: IntakeMetrics.other, route: IntakeMetrics.other, status: rejection.status, started: .now, partnerID: nil,
               errorCode: rejection.code)
        return Reply.error(error)
    }

    private func record(method: String, route: String, status: Int, started: ContinuousClock.Instant,
                        partnerID: String?, errorCode: String?) {
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        metrics.recordRequest(route: route, method: method, status: status, seconds: seconds)
        // A rejected request leaves its log line; accepted ones only at debug (one per request
        // at full load would be most of the intake's output), and their fields are built only then.
        let level: LogLevel = status >= 400 ? .info : .debug
        guard level >= logger.minimum, route != IntakeRoutes.healthz.pattern else {
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

    /// An admin change's author for the audit trail (sql/047_admin_audit.sql).
    private func actor(_ caller: AdminCaller, _ request: RoutedRequest) -> AdminActor {
        caller.actor(client: consoleHandler.proxies.client(of: request.http))
    }

    private func dispatch(_ route: Route, _ request: RoutedRequest, partnerID: inout String?) throws -> HTTPResponse {
        if route.endpoint.isConsole && !configuration.consoleEnabled { throw HeraldError.notFound }
        var caller = AdminCaller.bearer(previous: false)
        switch route.auth {
        case .none: break
        case .admin: caller = try consoleGate.requireAdmin(request.http, authenticator: authenticator)
        case .host: try authenticator.requireHost(request.http)
        case .partner: break
        }
        switch route.endpoint {
        case .push:
            let partner = try authenticator.requirePartner(request.http)
            partnerID = partner.id.uuidString.lowercased()
            return try pushHandler.push(request, partner: partner)
        case .pushStatus:
            let partner = try authenticator.requirePartner(request.http)
            partnerID = partner.id.uuidString.lowercased()
            return try pushHandler.status(request, partner: partner)
        case .startActivity, .updateActivity, .endActivity, .getActivity, .listActivityEvents:
            let partner = try authenticator.requirePartner(request.http)
            partnerID = partner.id.uuidString.lowercased()
            switch route.endpoint {
            case .startActivity: return try activityHandler.start(request, partner: partner)
            case .updateActivity: return try activityHandler.update(request, partner: partner)
            case .endActivity: return try activityHandler.end(request, partner: partner)
            case .listActivityEvents: return try activityHandler.events(request, partner: partner)
            default: return try activityHandler.get(request, partner: partner)
            }
        case .openChannel, .updateChannel, .endChannel, .getChannel, .startFromChannel:
            let partner = try authenticator.requirePartner(request.http)
            partnerID = partner.id.uuidString.lowercased()
            switch route.endpoint {
            case .openChannel: return try activityHandler.openChannel(request, partner: partner)
            case .updateChannel: return try activityHandler.updateChannel(request, partner: partner)
            case .endChannel: return try activityHandler.endChannel(request, partner: partner)
            case .startFromChannel: return try activityHandler.startFromChannel(request, partner: partner)
            default: return try activityHandler.getChannel(request, partner: partner)
            }
        case .listLiveChannels: return try activityHandler.listLiveChannels(request)
        case .putActivityToken: return try activityHandler.putToken(request)
        case .putActivityDeviceState: return try activityHandler.putDeviceState(request)
        case .createPartner: return try adminHandler.create(request, by: actor(caller, request))
        case .listPartners: return try adminHandler.list(request)
        case .updatePartner: return try adminHandler.update(request, by: actor(caller, request))
        case .revokePartner: return try adminHandler.revoke(request, by: actor(caller, request))
        case .suspendPartner: return try adminHandler.suspend(request, by: actor(caller, request), true)
        case .resumePartner: return try adminHandler.suspend(request, by: actor(caller, request), false)
        case .rotatePartnerKey: return try adminHandler.rotateKey(request, by: actor(caller, request))
        case .endPreviousPartnerKey: return try adminHandler.endPreviousKey(request, by: actor(caller, request))
        case .putPartnerIcon: return try iconHandler.upload(request, by: actor(caller, request))
        case .rotateWebhookSecret: return try adminHandler.rotateWebhookSecret(request, by: actor(caller, request))
        case .endPreviousWebhookSecret:
            return try adminHandler.endPreviousWebhookSecret(request, by: actor(caller, request))
        case .adminAudit: return try adminHandler.audit(request)
        case .icon: return try iconHandler.serve(request)
        case .putUser: return try hostHandler.putUser(request)
        case .putDevice: return try hostHandler.putDevice(request)
        case .listDevices: return try hostHandler.listDevices(request)
        case .getDevice: return try hostHandler.getDevice(request)
        case .deleteDevice: return try hostHandler.deleteDevice(request)
        case .putSession: return try hostHandler.putSession(request)
        case .putOptOut: return try hostHandler.putOptOut(request)
        case .deleteOptOut: return try hostHandler.deleteOptOut(request)
        case .listSenders: return try hostHandler.senders(request)
        case .scheduleReminder: return try reminderHandler.schedule(request)
        case .listReminders: return try reminderHandler.list(request)
        case .cancelReminder: return try reminderHandler.cancel(request)
        case .consolePage: return consoleHandler.index(request)
        case .consoleLoginPage: return consoleHandler.loginPage(request)
        case .consoleLogin: return try consoleHandler.login(request)
        case .consoleAsset: return try consoleHandler.asset(request)
        case .consoleSession: return consoleHandler.session(request, caller: caller)
        case .consoleSignOut: return try consoleHandler.signOut(request, caller: caller)
        case .consoleOverview: return try consoleHandler.overview(request)
        case .consoleWorkers: return try consoleHandler.workerList(request)
        case .consoleFailures: return try consoleHandler.failures(request)
        case .consoleReplay: return try consoleHandler.replay(request, by: actor(caller, request))
        case .consoleRequests: return try consoleHandler.requests(request)
        case .consoleRequest: return try consoleHandler.requestDetail(request)
        case .consolePartners: return try consoleHandler.partnerList(request)
        case .consoleTokens: return try consoleHandler.tokenReport(request)
        case .consoleActivities: return try consoleHandler.activities(request)
        case .consoleWebhooks: return try consoleHandler.failedWebhooks(request)
        case .consoleWebhookReplay: return try consoleHandler.replayWebhooks(request, by: actor(caller, request))
        case .healthz: return Reply.json(200, .object([("status", .string("ok"))]))
        case .readyz:
            do {
                _ = try pool.withConnection { try $0.query("SELECT 1") }
            } catch {
                throw HeraldError.databaseUnavailable
            }
            return Reply.json(200, .object([("status", .string("ready"))]))
        }
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

