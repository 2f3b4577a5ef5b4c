import ServiceSupport

extension WorkerConfiguration {
    /// Every setting read over a field's value in code (`EnvironmentReader.override`), in the order they are read
    /// (the first wrong one is named).
    static let overrides: [(Setting, SettingField<WorkerConfiguration>)] = [
        (Settings.leaseSeconds, .wholeNumber(\.claimer.leaseSeconds)),
        (Settings.batchSize, .wholeNumber(\.claimer.batchSize)),
        (Settings.workerMaxInFlight, .wholeNumber(\.claimer.maxInFlight)),
        (Settings.workerMaxBulkInFlight, .wholeNumber(\.claimer.maxBulkInFlight)),
        (Settings.pollInterval, .time(\.claimer.pollInterval)),
        (Settings.claimSpacing, .time(\.claimer.minimumClaimSpacing)),
        (Settings.userMaxPushesPerHour, .wholeNumber(\.claimer.userMaxPushesPerHour)),
        (Settings.completionInterval, .time(\.completer.minimumInterval)),
        (Settings.maxAttempts, .wholeNumber(\.retry.maxAttempts)),
        (Settings.retryBase, .time(\.retry.baseDelay)),
        (Settings.retryMaxSeconds, .time(\.retry.maxDelay)),
        (Settings.upstreamPauseMaxSeconds, .time(\.pauses.maximum)),
        (Settings.tokenStormTokens, .wholeNumber(\.tokenVerdicts.stormTokens)),
        (Settings.tokenStormWindowSeconds, .time(\.tokenVerdicts.stormWindow)),
        (Settings.tokenSuspectWaitSeconds, .time(\.tokenVerdicts.wait)),
        (Settings.workerListen, .flag(\.listener.enabled)),
        (Settings.activitySweepEnabled, .flag(\.activitySweeper.enabled)),
        (Settings.activitySweepInterval, .time(\.activitySweeper.interval)),
        (Settings.activitySweepBatch, .wholeNumber(\.activitySweeper.batchSize)),
        (Settings.liveActivityStartConfirmSeconds, .time(\.activitySweeper.startConfirmation)),
        (Settings.queueGaugeInterval, .time(\.queueGauge.interval)),
        (Settings.heartbeatInterval, .time(\.heartbeat.interval)),
        (Settings.webhooksEnabled, .flag(\.webhooks.enabled)),
        (Settings.webhookMaxInFlight, .wholeNumber(\.webhooks.maxInFlight)),
        (Settings.webhookConcurrencyPerPartner, .wholeNumber(\.webhooks.perPartner)),
        (Settings.webhookPoll, .time(\.webhooks.pollInterval)),
        (Settings.channelsEnabled, .flag(\.channels.enabled)),
        (Settings.channelMaxInFlight, .wholeNumber(\.channels.maxInFlight)),
        (Settings.channelPoll, .time(\.channels.pollInterval)),
        (Settings.channelSweepEnabled, .flag(\.channels.sweep.enabled)),
        (Settings.channelSweepInterval, .time(\.channels.sweep.interval)),
        (Settings.channelSweepMaxDeletes, .wholeNumber(\.channels.sweep.maxDeletes)),
        (Settings.drainSeconds, .time(\.drainTimeout)),
        (Settings.statementTimeout, .time(\.statementTimeout)),
    ]
}
