import ServiceSupport

extension IntakeConfiguration {
    /// Every setting read as the catalog says (its default, range and unit: `EnvironmentReader.read`), in the order
    /// they are read (the first wrong one is named). 32 threads and 32 connections measured as fast as any size on
    /// 2 cores, and keep headroom when commits are slow (docs/operations.md, "Threads and pool size").
    static let cataloged: [(Setting, SettingField<IntakeConfiguration>)] = [
        (Settings.intakeThreads, .wholeNumber(\.threads)),
        (Settings.databasePoolSize, .wholeNumber(\.databasePoolSize)),
        (Settings.databasePrepared, .flag(\.databasePreparedStatements)),
        (Settings.consoleEnabled, .flag(\.consoleEnabled)),
        (Settings.consoleSessionHours, .wholeNumber(\.consoleSessionHours)),
        (Settings.consoleIdleMinutes, .wholeNumber(\.consoleIdleMinutes)),
        (Settings.defaultRateLimitPerMinute, .wholeNumber(\.defaultRateLimitPerMinute)),
        (Settings.defaultRateLimitPerDay, .wholeNumber(\.defaultRateLimitPerDay)),
        (Settings.intakeMaxConnections, .wholeNumber(\.maxConnections)),
        (Settings.intakeMaxConnectionsPerAddress, .wholeNumber(\.maxConnectionsPerAddress)),
        (Settings.intakeIdleTimeoutSeconds, .wholeNumber(\.idleTimeoutSeconds)),
        (Settings.intakeRequestTimeoutSeconds, .wholeNumber(\.requestTimeoutSeconds)),
        (Settings.intakeQueueWaitLimit, .wholeNumber(\.queueWaitLimitMilliseconds)),
        (Settings.sessionWindowDays, .wholeNumber(\.sessionWindowDays)),
        (Settings.reminderMaxPending, .wholeNumber(\.reminderMaxPending)),
        (Settings.mediaTTLHours, .wholeNumber(\.mediaLifetimeHours)),
        (Settings.mediaMaxPerPartner, .wholeNumber(\.mediaMaxPerPartner)),
        (Settings.preferWaitMaxPerPartner, .wholeNumber(\.preferWaitMaxPerPartner)),
        (Settings.notifyInterval, .time(\.notifyInterval)),
        (Settings.intakeBatchWindow, .time(\.pushBatchWindow)),
        (Settings.intakeRecipientCacheSize, .wholeNumber(\.recipientCacheSize)),
    ]
}
