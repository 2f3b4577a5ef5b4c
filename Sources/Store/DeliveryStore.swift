import Foundation
import HeraldCore
import Postgres

/// A delivery a worker claimed: what to send, where, and whether it may be sent at all.
public struct ClaimedDelivery: Sendable {
    /// Why a claimed row must not be sent (decided in the claim, from the device and opt-out rows).
    public enum Verdict: String, Sendable {
        case send
        case expired
        case tokenInvalid = "token_invalid"
        case deviceRemoved = "device_removed"
        case suppressed
        /// A Live Activity row with a newer row for the same device, or the start of an ended activity.
        case superseded
        /// A row of a revoked partner (an activity's end excepted): never sent.
        case cancelled
        /// A partner push inside its user's quiet hours: held until `heldUntil`, its attempt unspent.
        case held
        /// A partner push beyond HERALD_USER_MAX_PUSHES_PER_HOUR for its user.
        case userCap = "user_cap"
    }

    public let id: UUID
    public let service: PushService
    public let environment: String
    /// The rendered APNs body or FCM message (see PushPayload), as the bytes that are sent.
    public let payloadBytes: [UInt8]
    /// `payloadBytes` as text.
    public var payload: String { String(decoding: payloadBytes, as: UTF8.self) }
    /// Attempts including this one.
    public let attempts: Int
    public let expiresAt: Date?
    /// The device's current token for `service` (nil when it has none). Never logged.
    public let token: String?
    public let verdict: Verdict
    public let lane: Int
    public let partnerID: UUID
    public let availableAt: Date
    /// The app the device registered (`devices.bundle_id`), nil when the host gave none.
    public let bundleID: String?
    /// The Live Activity event the row carries; nil for a push.
    public let activityEvent: LiveActivityEvent?
    /// A Live Activity push's `apns-priority` (5 silent, 10 with an alert); for a push, 5 for a retract message
    /// (sent as a background push), else nil (10).
    public let priority: Int?
    /// The group row this delivery is a member of (sql/016_delivery_groups.sql), nil for a row of its own:
    /// its lease is the group's, and its outcome is recorded against the group.
    public let groupID: UUID?
    /// The delivery's position in its group (1-based), nil for a row of its own.
    public let member: Int?
    /// When the user's quiet hours end, for a `held` delivery.
    public let heldUntil: Date?
    /// A push with a collapse key: the id its payloads' `apns-collapse-id` and FCM `collapse_key` carry
    /// (Sources/Store/Migrations/functions/collapse_id.sql); nil for the others.
    public let collapseID: String?

    /// The outbox row that holds this delivery's lease: its group's, or its own.
    public var leaseID: UUID { groupID ?? id }
}

/// The lease an intake writes a push's due rows under for the worker it notifies (`DeliveryStore.leasedRows`): the
/// worker's lease name and its lease length, as its listener registered them (`DeliveryStore.listenAsWorker`), and
/// that listener's server process (herald_intake_push leases only while its registration stands).
public struct DeliveryLease: Sendable, Equatable {
    public let worker: String
    public let seconds: Int
    public let listener: Int32
}

/// A worker's listener as an intake sees it: its server process, which names its channel
/// (`DeliveryStore.workerChannel`), and the lease it registered, nil for a worker that registered none.
public struct WorkerListener: Sendable, Equatable {
    public let pid: Int32
    public let lease: DeliveryLease?
}

/// What an intake's write tells the workers (`IntakeWriter`): the channel it notifies and, when that is one worker's
/// and the worker registered a lease, the lease the write's due rows are leased under.
public struct DeliveryWakeUp: Sendable, Equatable {
    public let channel: String
    public let lease: DeliveryLease?

    public init(channel: String, lease: DeliveryLease? = nil) {
        self.channel = channel
        self.lease = lease
    }
}

/// Where a worker's claims of one (lane, partner) queue have got to: the next claim's scan of that
/// queue starts just before it, past the dead index entries of rows already claimed.
public struct QueueCursor: Sendable, Hashable {
    public let lane: Int
    public let partnerID: UUID

    public init(lane: Int, partnerID: UUID) {
        self.lane = lane
        self.partnerID = partnerID
    }
}

/// The outcome of one claimed delivery, for `DeliveryStore.complete`.
public struct CompletedDelivery: Sendable {
    public let id: UUID
    public let outcome: DeliveryOutcome
    /// The token the attempt used: a `tokenInvalid` outcome invalidates it only if the device still
    /// has this token (the host may have registered a new one meanwhile). Nil when no upstream judged it
    /// (a row the claim said not to send): nothing is invalidated again.
    public let token: String?
    /// The claimed delivery's group row and position (ClaimedDelivery), nil for a row of its own.
    public let groupID: UUID?
    public let member: Int?

    public init(id: UUID, outcome: DeliveryOutcome, token: String?, groupID: UUID? = nil, member: Int? = nil) {
        self.id = id
        self.outcome = outcome
        self.token = token
        self.groupID = groupID
        self.member = member
    }

    /// The outcome of `delivery`, recorded against its group if it has one.
    public init(_ delivery: ClaimedDelivery, outcome: DeliveryOutcome) {
        self.init(
            id: delivery.id, outcome: outcome, token: delivery.token, groupID: delivery.groupID,
            member: delivery.member)
    }
}

/// The worker's queries on the outbox (Queries/deliveries.sql; the table: sql/004_outbox.sql): claim, complete,
/// release, rescue and the queue's head. Each is one statement; claim and completion commit
/// asynchronously (see docs/architecture.md: a lost claim is rescued, a lost completion re-sends).
public struct DeliveryStore: Sendable {
    public static let notificationChannel = "herald_deliveries"
    public init() {}

    /// Leases up to `limit` due rows of `services` to `worker` for `leaseSeconds`. `cursors` (the
    /// latest `availableAt` claimed per queue, see herald_claim_deliveries) let the scan skip what was
    /// claimed already; without them every due row is considered.
    /// At most `bulkLimit` of them from the bulk lane (nil: no limit beyond `limit`).
    /// `listed` (the ids an intake's notification named, `WakeUpMessage.listed`) leases those rows alone, by primary
    /// key: the ones still pending and due, of a row of their own without an activity (the walk keeps an activity's
    /// order), in a statement of their own (`ClaimListed`); `cursors` and `bulkLimit` are then not used.
    /// `userMaxPerHour` (HERALD_USER_MAX_PUSHES_PER_HOUR, 0: none) caps the partner pushes one user gets an hour
    /// from all mini-apps; the claim also holds pushes for the user's quiet hours (functions/user_guards.sql).
    public func claim(
        on connection: PostgresConnection, worker: String, limit: Int, bulkLimit: Int? = nil,
        leaseSeconds: Int, services: [PushService], cursors: [QueueCursor: Date] = [:],
        listed: [UUID]? = nil, userMaxPerHour: Int = 0
    ) throws -> [ClaimedDelivery] {
        if let listed {
            return try connection.rows(
                Queries.Deliveries.ClaimListed(
                    worker: worker, limit: limit, leaseSeconds: leaseSeconds,
                    services: services.map(\.rawValue), listed: listed, userMaxPerHour: userMaxPerHour))
        }
        return try connection.rows(
            Claim(
                worker: worker, limit: limit, leaseSeconds: leaseSeconds, services: services,
                cursors: cursors, bulkLimit: bulkLimit ?? limit,
                userMaxPerHour: userMaxPerHour))
    }

    /// Reads the rows an intake leased to `worker` (`WakeUpMessage.leased`) with the claim's columns and verdicts, as a
    /// claim would have leased them: one statement that writes nothing (`ReadLeased`). A row no longer leased to
    /// `worker` (its lease ended and the rescuer took it) is left out.
    public func readLeased(on connection: PostgresConnection, worker: String, ids: [UUID]) throws -> [ClaimedDelivery] {
        guard !ids.isEmpty else { return [] }
        return try connection.rows(Queries.Deliveries.ReadLeased(worker: worker, ids: ids))
    }

    /// Records a batch of outcomes in ONE statement: finished rows move to history, their counts
    /// roll up to the requests' audit rows, dead tokens are invalidated, retries go back to
    /// pending (deferred ones without spending the claim's attempt). Only rows still leased by `worker` are touched
    /// (a rescued row belongs to another).
    /// Returns how many rows were finished and how many rescheduled.
    @discardableResult
    public func complete(on connection: PostgresConnection, worker: String, _ deliveries: [CompletedDelivery])
        throws -> (finished: Int, retried: Int)
    {
        guard !deliveries.isEmpty else { return (0, 0) }
        var ids: [UUID] = [], outcomes: [String] = [], errors: [String] = [], retryAt: [String] = []
        var tokens: [String] = []
        var groups: [UUID?] = [], members: [Int?] = []
        let grouped = deliveries.contains { $0.groupID != nil }
        for delivery in deliveries {
            if grouped {
                groups.append(delivery.groupID)
                members.append(delivery.member)
            }
            ids.append(delivery.id)
            outcomes.append(delivery.outcome.name)
            errors.append(delivery.outcome.reason ?? "")
            switch delivery.outcome {
            // A dead token's slot holds when it stopped being valid (the completion spares a device registered
            // after it).
            case .retry(let at, _), .deferred(let at, _), .tokenInvalid(_, let at?):
                retryAt.append(PostgresTimestamp.format(at))
            default: retryAt.append("")
            }
            if case .tokenInvalid = delivery.outcome { tokens.append(delivery.token ?? "") } else { tokens.append("") }
        }
        let counts = try connection.row(
            Queries.Deliveries.Complete(
                worker: worker, ids: ids, outcomes: outcomes, errors: errors, retryAt: retryAt, tokens: tokens,
                groups: grouped ? groups : nil, members: grouped ? members : nil))
        return (counts?.finishedCount ?? 0, counts?.retriedCount ?? 0)
    }

    /// Gives leased rows back (a draining worker that will not send them): pending again at once,
    /// and the claim's attempt is not counted. `ids` are outbox rows (ClaimedDelivery.leaseID): a group
    /// goes back whole, and its next claim skips the members already done.
    @discardableResult
    public func release(on connection: PostgresConnection, worker: String, ids: [UUID]) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try connection.run(Queries.Deliveries.Release(worker: worker, ids: ids))
    }

    /// Renews the leases of rows `worker` still holds (sends that take long), by `leaseSeconds` from
    /// now; `ids` are outbox rows (ClaimedDelivery.leaseID). Returns how many rows it renewed.
    @discardableResult
    public func extendLeases(on connection: PostgresConnection, worker: String, ids: [UUID], leaseSeconds: Int)
        throws -> Int
    {
        guard !ids.isEmpty else { return 0 }
        return try connection.run(Queries.Deliveries.ExtendLeases(worker: worker, ids: ids, leaseSeconds: leaseSeconds))
    }

    /// Returns rows whose lease expired (their worker crashed or hung) to pending, at most `limit`.
    @discardableResult
    public func rescue(on connection: PostgresConnection, limit: Int = 1000) throws -> Int {
        try connection.run(Queries.Deliveries.Rescue(limit: limit))
    }

    /// When the earliest pending row (due or scheduled) becomes due; nil when nothing is pending. The
    /// claimer sleeps until then (the queue's depth and age, for metrics, are QueueGaugeStore's).
    public func nextAvailableAt(on connection: PostgresConnection) throws -> Date? {
        try connection.row(Queries.Deliveries.NextAvailable())?.nextAvailableAt
    }

    /// A worker service's session: asynchronous commit (a claim or completion lost in a database
    /// crash is rescued or re-sent; see docs/architecture.md) and no JIT (the queue statements'
    /// estimates grow with a backlog, and compiling costs more than it saves). Named for
    /// pg_stat_activity. `listen` subscribes it to the shared deliveries channel and the broadcast channels' one
    /// (`ChannelSyncStore.notificationChannel`); a worker's listener adds its own (`listenAsWorker`). Without prepared
    /// statements (a transaction pooler, PostgresConnectionOptions.preparedStatements) the two SETs
    /// are skipped: they would stay on one server connection and make the commits of whichever
    /// client gets it next (the intake's) asynchronous; a worker role can carry them instead
    /// (docs/deployment.md, "Connection poolers").
    /// `claims` marks the claimer's session, which plans as herald_claim_deliveries' SET clauses do, for the listed
    /// claim (`ClaimListed`): one generic plan (a custom plan for each call's ids cost more to plan than to run) and
    /// index paths only (whatever a plan cached while the tables were small).
    public static func workerSession(
        url: String, role: String, listen: Bool = false, claims: Bool = false,
        statementTimeout: Duration = .seconds(30),
        preparedStatements: Bool = PostgresConnectionOptions().preparedStatements
    )
        -> DatabaseSession
    {
        let options = PostgresConnectionOptions(
            applicationName: workerApplicationName(role: role),
            statementTimeout: statementTimeout,
            preparedStatements: preparedStatements)
        return DatabaseSession(url: url, options: options) { connection in
            if connection.preparedStatements { try connection.run(Queries.WorkerSessions.SessionSettings()) }
            if connection.preparedStatements, claims { try connection.run(Queries.WorkerSessions.ClaimSession()) }
            // Through a pooler a LISTEN stays on whichever server connection ran it, and is never heard here.
            if listen, !connection.poolerDetected {
                for channel in [notificationChannel, ChannelSyncStore.notificationChannel] {
                    try connection.execute(Queries.Notifications.listen.filling("channel", identifier: channel))
                }
            }
        }
    }

    /// What a worker session of `role` is called in pg_stat_activity.
    static func workerApplicationName(role: String) -> String { "herald-worker \(role)" }

    /// The role of a worker's listener session, which names it and the upstreams its worker sends to in
    /// pg_stat_activity (`listenerPIDs`): "listener apns+fcm".
    public static func listenerRole(serving services: some Sequence<PushService>) -> String {
        "listener " + services.map(\.rawValue).sorted().joined(separator: "+")
    }

    /// The start of every listener's application name, its upstreams after it.
    static let listenerName = workerApplicationName(role: "listener")

    /// Tells listening workers that new rows are due (see the intake's DeliveryNotifier): the one whose
    /// listener connection is served by server process `listener`, on that worker's own channel
    /// (`workerChannel`), or every worker when nil, on the shared channel. One row does not cost one claim
    /// per worker of which all but one find nothing, and the other workers' listener threads are not woken
    /// (a named payload on the shared channel reached every worker, a thread switch each a push).
    ///
    /// The commit does not wait for the disk: listeners hear of a NOTIFY once its commit returns, and a durable
    /// commit would put a flush (a tenth of a millisecond, at times ten) in every push's path to its worker. A
    /// notification lost in a crash costs nothing (the workers poll). One statement, its own transaction, whose
    /// setting is local to it (a transaction pooler hands the connection to others).
    public func notifyWorkers(on connection: PostgresConnection, listener: Int32? = nil) throws {
        try connection.run(
            Queries.Notifications.NotifyWithoutFlush(
                channel: Self.channel(listener), payload: WakeUpMessage.due.encode()))
    }

    /// Wakes every worker (`WakeUpMessage.due` on the shared channel) at the commit of `connection`'s transaction:
    /// a write that made rows due again (a replay, a resumed partner).
    public static func notifyDue(on connection: PostgresConnection) throws {
        try connection.run(
            Queries.Notifications.Notify(channel: notificationChannel, payload: WakeUpMessage.due.encode()))
    }

    /// Tells the workers that a broadcast channel changed (the shared channel of `ChannelSyncStore`, no payload).
    public func notifyChannelsChanged(on connection: PostgresConnection) throws {
        try connection.run(Queries.Notifications.Notify(channel: ChannelSyncStore.notificationChannel, payload: ""))
    }

    /// The deliveries channel of the one worker whose listener connection is served by server process `pid`.
    public static func workerChannel(_ pid: Int32) -> String { "\(notificationChannel)_\(pid)" }

    /// The channel that wakes the worker whose listener is `listener`, or every worker when nil.
    public static func channel(_ listener: Int32?) -> String { listener.map(workerChannel) ?? notificationChannel }

    /// Subscribes a worker's listener connection (already on the shared channels, `workerSession`) to its own
    /// deliveries channel, and returns its server process, which names that channel. With `leasingTo`, the connection
    /// first registers the worker's lease name and `leaseSeconds` (worker_listeners, sql/042_intake_lease.sql), so that
    /// intakes lease the rows they notify this worker of to it; the worker's earlier registrations (a listener it lost)
    /// and those of listeners that are gone are removed.
    public func listenAsWorker(
        on connection: PostgresConnection, leasingTo worker: String? = nil, leaseSeconds: Int = 0
    )
        throws -> Int32
    {
        let pid = try serverPID(on: connection)
        if let worker {
            try connection.run(Queries.WorkerSessions.RegisterListener(worker: worker, leaseSeconds: leaseSeconds))
        }
        try connection.execute(Queries.Notifications.listen.filling("channel", identifier: Self.workerChannel(pid)))
        return pid
    }

    /// Withdraws `worker`'s registrations (a draining worker): from the next intake transaction on, no row is leased to
    /// it (herald_intake_push checks the registration it leases under).
    public func unregisterListeners(on connection: PostgresConnection, worker: String) throws {
        try connection.run(Queries.WorkerSessions.UnregisterListeners(worker: worker))
    }

    /// Returns to pending the rows still leased to `worker` but for `keeping` (ids of outbox rows, ClaimedDelivery.leaseID),
    /// their attempts unspent: rows an intake leased to this worker that it never heard of (its listener reconnected,
    /// or it is draining). Found by the lease index; returns how many.
    @discardableResult
    public func releaseLeased(on connection: PostgresConnection, worker: String, keeping: [UUID] = []) throws -> Int {
        try connection.run(Queries.Deliveries.ReleaseLeased(worker: worker, keeping: keeping))
    }

    /// The server process serving `connection`, as pg_stat_activity and a NOTIFY payload name it. Asked of the
    /// server: behind a proxy the process id libpq was told at connect (`PQbackendPID`) is the proxy's.
    public func serverPID(on connection: PostgresConnection) throws -> Int32 {
        guard let row = try connection.row(Queries.WorkerSessions.ServerPID()) else {
            throw PostgresError(code: .decodingFailed, serverMessage: "pg_backend_pid returned no row")
        }
        return row.pid
    }

    /// The server processes of the workers' listener connections a NOTIFY may name now, in order. A worker
    /// that stops or crashes closes its connection, so it leaves this list at once (a heartbeat would take
    /// seconds). See `namable` for which.
    public func listenerPIDs(on connection: PostgresConnection) throws -> [Int32] {
        try listeners(on: connection).map(\.pid)
    }

    /// `listenerPIDs` with the lease each registered.
    public func listeners(on connection: PostgresConnection) throws -> [WorkerListener] {
        let rows = try connection.rows(Queries.WorkerSessions.Listeners(applicationNamePrefix: Self.listenerName + "%"))
            .map { row in
                let lease = row.leaseSeconds.flatMap { seconds in
                    row.workerID.map { DeliveryLease(worker: $0, seconds: seconds, listener: row.pid) }
                }
                return (
                    listener: WorkerListener(pid: row.pid, lease: lease),
                    services: Self.services(ofListener: row.applicationName)
                )
            }
        return Self.namable(rows)
    }

    /// The listeners that may be named: those whose workers send to every upstream any listening worker sends
    /// to, so the one named can claim whatever is due. With none such (APNs-only and FCM-only workers), none:
    /// every worker is woken.
    static func namable(_ listeners: [(listener: WorkerListener, services: Set<PushService>)]) -> [WorkerListener] {
        let all = listeners.reduce(into: Set<PushService>()) { $0.formUnion($1.services) }
        return listeners.filter { $0.services == all }.map(\.listener).sorted { $0.pid < $1.pid }
    }

    /// The upstreams a listener's application name says its worker sends to; a name without them (a worker
    /// from before they were named) counts as sending to all.
    static func services(ofListener applicationName: String) -> Set<PushService> {
        // After the prefix: " apns+fcm" (listenerRole).
        let names = applicationName.dropFirst(listenerName.count).split(whereSeparator: { $0 == " " || $0 == "+" })
        let services = Set(names.compactMap { PushService(rawValue: String($0)) })
        return services.isEmpty ? Set(PushService.allCases) : services
    }

    /// Whether `notification` asks the worker whose listener is served by `listenerPID` to claim: one on its own
    /// channel, or on the shared channel (`WakeUpMessage`) naming no one (backfills, replays), listing rows (an
    /// intake's batch written while no worker was listed), of a later version (a plain wake-up), or, as intakes before
    /// the workers' own channels did, naming it. Leased rows, or a payload that does not read, on the shared channel
    /// are for no one.
    public static func wakes(_ notification: PostgresNotification, listenerPID: Int32) -> Bool {
        if notification.channel == workerChannel(listenerPID) { return true }
        guard notification.channel == notificationChannel else { return false }
        switch WakeUpMessage(decoding: notification.payload) {
        case .due?, .listed?, .later?: return true
        case .named(let listener)?: return listener == listenerPID
        case .leased?, .carried?, nil: return false
        }
    }

    /// The rows a `.carried` notification holds (herald_intake_push: the rows it leased to the worker it names, times
    /// as the intake's session writes them), as `readLeased` would return them, with the verdicts the intake's
    /// resolution gave in that transaction (a live token, a user who has not opted out) and `expired` from `now`. Nil
    /// when a field does not read as its column.
    public static func leasedRows(_ carried: CarriedRows, now: Date) -> [ClaimedDelivery]? {
        var rows: [ClaimedDelivery] = []
        rows.reserveCapacity(carried.count)
        for row in 0..<carried.count {
            func text(_ field: CarriedRows.Field) -> String {
                carried.withField(field, ofRow: row) { String(decoding: $0, as: UTF8.self) }
            }
            func timestamp(_ field: CarriedRows.Field) -> Date? {
                carried.withField(field, ofRow: row) { PostgresTimestamp.parse(bytes: $0) }
            }
            func isEmpty(_ field: CarriedRows.Field) -> Bool { carried.withField(field, ofRow: row) { $0.isEmpty } }
            guard let id = carried.withField(.id, ofRow: row, PostgresUUID.parse(bytes:)),
                let service = PushService(rawValue: text(.service)),
                let partnerID = carried.withField(.partnerID, ofRow: row, PostgresUUID.parse(bytes:)),
                let availableAt = timestamp(.availableAt),
                !isEmpty(.environment), !isEmpty(.token)
            else { return nil }
            let expiresAt: Date?
            if isEmpty(.expiresAt) {
                expiresAt = nil
            } else {
                guard let expiry = timestamp(.expiresAt) else { return nil }
                expiresAt = expiry
            }
            rows.append(
                ClaimedDelivery(
                    id: id, service: service, environment: text(.environment),
                    payloadBytes: carried.field(.payload, ofRow: row), attempts: 1, expiresAt: expiresAt,
                    token: text(.token), verdict: expiresAt.map { $0 <= now } == true ? .expired : .send, lane: 0,
                    partnerID: partnerID, availableAt: availableAt,
                    bundleID: isEmpty(.bundleID) ? nil : text(.bundleID),
                    activityEvent: nil, priority: nil, groupID: nil, member: nil, heldUntil: nil,
                    collapseID: isEmpty(.collapseID) ? nil : text(.collapseID)))
        }
        return rows
    }
}

// The statements of the worker's sessions and listeners (Sources/Store/Queries/worker_sessions.sql).
extension DeliveryStore {
    /// The server process of a connection (`serverPID`).
    struct ServerProcess: QueryRow, Decodable {
        let pid: Int32
    }

    /// A listener connection with the lease its worker registered (`listeners`).
    struct ListenerConnection: QueryRow, Decodable {
        let pid: Int32
        let applicationName: String
        let workerID: String?
        let leaseSeconds: Int?
    }
}
