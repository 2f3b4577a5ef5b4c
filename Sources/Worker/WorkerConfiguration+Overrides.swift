import ServiceSupport

extension WorkerConfiguration {
    /// A field the environment may override, read over the value it has in code.
    enum Override: Sendable {
        case wholeNumber(WritableKeyPath<WorkerConfiguration, Int> & Sendable)
        /// A whole number of the setting's unit.
        case time(WritableKeyPath<WorkerConfiguration, Duration> & Sendable)
        /// A whole number that must be 0 or 1.
        case onOff(WritableKeyPath<WorkerConfiguration, Bool> & Sendable)

        /// Reads `setting` without its range: each part's `validate()` checks it, for values set in code too.
        func read(_ setting: Setting, from reader: EnvironmentReader, into configuration: inout WorkerConfiguration)
            throws(ConfigurationError)
        {
            switch self {
            case .wholeNumber(let field):
                configuration[keyPath: field] = try reader.integer(setting.name, default: configuration[keyPath: field])
            case .time(let field):
                let count = Int(configuration[keyPath: field] / setting.duration(1))
                configuration[keyPath: field] = setting.duration(try reader.integer(setting.name, default: count))
            case .onOff(let field):
                let value = try reader.integer(setting.name, default: configuration[keyPath: field] ? 1 : 0)
                guard value == 0 || value == 1 else {
                    throw ConfigurationError(variable: setting.name, problem: "must be 0 or 1")
                }
                configuration[keyPath: field] = value == 1
            }
        }
    }

    /// Every setting read over a field's value in code, in the order they are read (the first wrong one is named).
    static let overrides: [(Setting, Override)] = [
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
        (Settings.workerListen, .onOff(\.listener.enabled)),
        (Settings.activitySweepEnabled, .onOff(\.activitySweeper.enabled)),
        (Settings.activitySweepInterval, .time(\.activitySweeper.interval)),
        (Settings.activitySweepBatch, .wholeNumber(\.activitySweeper.batchSize)),
        (Settings.liveActivityStartConfirmSeconds, .time(\.activitySweeper.startConfirmation)),
        (Settings.queueGaugeInterval, .time(\.queueGauge.interval)),
        (Settings.heartbeatInterval, .time(\.heartbeat.interval)),
        (Settings.webhooksEnabled, .onOff(\.webhooks.enabled)),
        (Settings.webhookMaxInFlight, .wholeNumber(\.webhooks.maxInFlight)),
        (Settings.webhookConcurrencyPerPartner, .wholeNumber(\.webhooks.perPartner)),
        (Settings.webhookPoll, .time(\.webhooks.pollInterval)),
        (Settings.channelsEnabled, .onOff(\.channels.enabled)),
        (Settings.channelMaxInFlight, .wholeNumber(\.channels.maxInFlight)),
        (Settings.channelPoll, .time(\.channels.pollInterval)),
        (Settings.drainSeconds, .time(\.drainTimeout)),
        (Settings.statementTimeout, .time(\.statementTimeout)),
    ]
}
