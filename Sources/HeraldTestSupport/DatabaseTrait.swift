import Foundation
import Testing

extension TestEnvironment {
    /// True when `scripts/test` (or the caller) provided a database. Evaluated once; when false it
    /// says so once on stderr, and every suite marked `.requiresDatabase` is skipped instead of the
    /// whole test process stopping at the first suite that needs Postgres.
    public static let hasDatabase: Bool = {
        let present = !(ProcessInfo.processInfo.environment["HERALD_DATABASE_URL"] ?? "").isEmpty
        if !present {
            let message =
                "HERALD_DATABASE_URL is not set: skipping every suite that needs Postgres "
                + "(run scripts/test, which starts a throwaway database).\n"
            message.withCString { _ = write(2, $0, strlen($0)) }
        }
        return present
    }()
}

extension Trait where Self == ConditionTrait {
    /// Marks a suite that needs the test database (TestEnvironment.hasDatabase).
    public static var requiresDatabase: Self {
        .enabled(if: TestEnvironment.hasDatabase, "needs Postgres: run scripts/test")
    }
}
