import Foundation
import HeraldCore
import Postgres

/// A partner's retraction of its push, as `PushStore.retract` recorded it.
public struct PushRetraction: Sendable {
    /// A device the push went to, or may have (a delivery in flight): it gets a message naming the delivery.
    public struct Target: Sendable, Equatable {
        public let deliveryID: UUID
        public let service: PushService
        public let userID: String
        public let deviceID: String
        public let environment: String
        /// Now, or when the lease of a delivery in flight ends.
        public let dueAt: Date
    }

    /// One retract message, rendered for its target by the caller.
    public struct Message: Sendable {
        public let id: UUID
        public let payload: [UInt8]
        public let ttlSeconds: Int

        public init(id: UUID, payload: [UInt8], ttlSeconds: Int) {
            self.id = id
            self.payload = payload
            self.ttlSeconds = ttlSeconds
        }
    }

    /// False when the push was retracted before: the counts are that retraction's, and nothing was done now.
    public let firstTime: Bool
    public let retractedAt: Date
    /// When the push itself expires.
    public let expiresAt: Date?
    /// Deliveries stopped before they went out.
    public let cancelled: Int
    /// Retract messages written.
    public let retracted: Int
    /// The messages to write (none unless `firstTime`).
    public let targets: [Target]
}

/// One line of `herald_push_retract` (Migrations/functions/push_retract.sql): the counts, and a target when the
/// target columns are set.
struct PushRetractionLine: QueryRow, Decodable {
    let firstTime: Bool
    let retractedAt: Date
    let expiresAt: Date?
    let cancelled: Int
    let retracted: Int
    let deliveryID: UUID?
    let service: String?
    let userID: String?
    let deviceID: String?
    let environment: String?
    let dueAt: Date?
}

extension PushStore {
    /// The rows an outbox write reports.
    struct Written: QueryRow, Decodable {
        let written: Int
    }

    /// Retracts a push of `partnerID`'s in one transaction: cancels what is still queued, and writes the messages
    /// `render` makes for the devices it reached (each under `retractionID` as its request), waking the workers at
    /// the commit. Nil for a request that is not the partner's; a repeated call changes nothing and answers as
    /// the first did.
    public func retract(
        requestID: UUID, createdAt: Date, partnerID: UUID, retractionID: UUID, now: Date,
        render: (PushRetraction) -> [PushRetraction.Message]
    ) throws -> PushRetraction? {
        let (from, to) = Self.millisecond(of: createdAt)
        return try retryingDeadlocks {
            try pool.withTransaction { connection -> PushRetraction? in
                let lines = try connection.rows(
                    Queries.PushRequests.Retract(
                        requestID: requestID, from: from, to: to, partnerID: partnerID, retractionID: retractionID))
                guard let first = lines.first else { return nil }
                let targets = try lines.compactMap { line -> PushRetraction.Target? in
                    guard let id = line.deliveryID else { return nil }
                    guard let service = line.service, let userID = line.userID, let deviceID = line.deviceID,
                        let environment = line.environment, let dueAt = line.dueAt
                    else { throw PostgresError(code: .decodingFailed, serverMessage: "a retract target is partial") }
                    return .init(
                        deliveryID: id, service: try RecipientResolution.service(service), userID: userID,
                        deviceID: deviceID, environment: environment, dueAt: dueAt)
                }
                let retraction = PushRetraction(
                    firstTime: first.firstTime, retractedAt: first.retractedAt, expiresAt: first.expiresAt,
                    cancelled: first.cancelled, retracted: first.retracted, targets: targets)
                guard !targets.isEmpty else { return retraction }
                let messages = render(retraction)
                precondition(messages.count == targets.count, "one retract message per target")
                try connection.run(
                    Queries.PushRequests.WriteRetractMessages(
                        retractionID: retractionID, createdAt: now, partnerID: partnerID, ids: messages.map(\.id),
                        services: targets.map(\.service.rawValue), users: targets.map(\.userID),
                        devices: targets.map(\.deviceID), environments: targets.map(\.environment),
                        payloads: messages.map { String(decoding: $0.payload, as: UTF8.self) },
                        due: targets.map(\.dueAt), ttlSeconds: messages.map(\.ttlSeconds)))
                try DeliveryStore.notifyDue(on: connection)
                return retraction
            }
        }
    }

    /// The millisecond of an id's creation (`UUIDv7`), whose bounds name one partition of push_requests. In
    /// integers, from whole microseconds (as Postgres keeps them), so no Double rounding moves an instant on a
    /// millisecond's edge to the one before.
    static func millisecond(of createdAt: Date) -> (from: Date, to: Date) {
        let millis = Int64((createdAt.timeIntervalSince1970 * 1_000_000).rounded()) / 1000
        return (
            Date(timeIntervalSince1970: Double(millis) / 1000), Date(timeIntervalSince1970: Double(millis + 1) / 1000)
        )
    }
}
