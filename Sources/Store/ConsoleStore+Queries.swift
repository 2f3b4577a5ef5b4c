import Foundation
import Postgres

/// The console's statements (Queries/console.sql), typed: parameters in, rows out.
extension ConsoleStore {

    /// One outcome's deliveries finished in one minute of the last hour.
    struct MinuteOutcome: QueryRow, Decodable {
        let minutesAgo: Int
        let outcome: String
        let deliveries: Int
    }

}

extension FailureGroup: QueryRow {
    public init(row: PostgresRow) throws {
        self.init(
            miniAppID: try row.string("mini_app_id"), outcome: try row.string("outcome"),
            reason: try row.optionalString("last_error"), count: try row.int("deliveries"),
            firstAt: try row.date("first_at"), lastAt: try row.date("last_at"))
    }
}

/// A row of the request search (Queries/console.sql, `requests`).
extension RequestSummary: QueryRow {
    public init(row: PostgresRow) throws {
        self.init(
            id: try row.uuid("id"), createdAt: try row.date("created_at"),
            miniAppID: try row.string("mini_app_id"), title: try row.string("title"), lane: try row.int("lane"),
            recipients: try row.int("recipients"), deliveries: try row.int("deliveries"),
            suppressed: try row.int("suppressed"), suppressedDeliveries: try row.int("suppressed_deliveries"),
            sent: try row.int("sent"), failed: try row.int("failed"), held: try row.int("held"))
    }
}

extension RequestDelivery: QueryRow {
    public init(row: PostgresRow) throws {
        self.init(
            id: try row.uuid("id"), service: try row.string("service"), deviceID: try row.string("device_id"),
            outcome: try row.string("outcome"), reason: try row.optionalString("last_error"),
            attempts: try row.int("attempts"), members: try row.int("members"),
            finishedAt: try row.date("finished_at"), replayed: try row.bool("replayed"))
    }
}

extension PartnerUsage: QueryRow {
    public init(row: PostgresRow) throws {
        self.init(
            partnerID: try row.uuid("id"), lastMinute: try row.int("minute_count"),
            lastDay: try row.int("day_count"), webhookFailedDay: try row.int("webhook_failed_day"),
            webhookLastError: try row.optionalString("webhook_last_error"))
    }
}

extension ActivityCounts: QueryRow {
    public init(row: PostgresRow) throws {
        self.init(miniAppID: try row.string("mini_app_id"), active: try row.int("active"), held: try row.int("held"))
    }
}

extension FailedWebhookEvent: QueryRow {
    public init(row: PostgresRow) throws {
        self.init(
            id: try row.uuid("id"), miniAppID: try row.string("mini_app_id"), type: try row.string("type"),
            subjectID: try row.uuid("subject_id"), attempts: try row.int("attempts"),
            lastStatus: try row.optionalInt("last_status"), lastError: try row.optionalString("last_error"),
            finishedAt: try row.date("finished_at"))
    }
}
