import Foundation

/// What an Android 16 app needs to build the activity's notification as a promoted ongoing notification (a Live
/// Update: a status-bar chip, the top of the shade, the lock screen), derived from the template's state so every
/// app draws it the same way. Carried as extra FCM data keys (docs/live-activity-payloads.md lists them):
///
/// - `shortCriticalText`, the chip's text (`setShortCriticalText`), at most `maxShortCriticalTextCharacters`
///   grapheme clusters, which Android's guidance suggests because the chip truncates longer text: a progress
///   activity's stage as "2/4" (current stage + 1 / stages), a status activity's label, trimmed and, when longer,
///   cut on a grapheme boundary with "…" in the last place. A countdown has none: its chip shows the chronometer.
/// - A countdown's chronometer: `whenEpochMillis` (the deadline, Unix milliseconds: `setWhen`) and
///   `chronometerCountDown` "true" (`setUsesChronometer`, `setChronometerCountDown`).
/// - A progress activity's bar as `Notification.ProgressStyle` reads it: `progressSegments`, one segment of
///   `progressUnitsPerStage` per stage as a JSON array string (`[{"length":100},...]`), `progressValue` and
///   `progressMax` (the segments' sum, for `setProgress(max, value, false)` before Android 16). The value is
///   `progress` of the whole, kept inside the current stage's segment, so bar and stage never disagree.
///
/// An end leaves the notification no longer ongoing, so it cannot stay promoted: it carries the final bar but no
/// chip text and no chronometer (a ticking chronometer would show a finished activity as live).
public struct AndroidLiveUpdate: Sendable, Equatable {
    /// A progress activity's bar as `Notification.ProgressStyle` draws it.
    public struct Progress: Sendable, Equatable {
        /// Each segment's length, in order: one per stage.
        public var segmentLengths: [Int]
        /// 0 to `max`.
        public var value: Int
        /// The segments' total length.
        public var max: Int { segmentLengths.reduce(0, +) }
    }

    /// Android's guidance for the chip: longer text is truncated by the system.
    public static let maxShortCriticalTextCharacters = 7
    /// Whole units per stage: fine enough that a bar moves by 1% of a stage, and every stage as long as another,
    /// as the iOS card draws them.
    public static let progressUnitsPerStage = 100

    public var shortCriticalText: String?
    /// A countdown's deadline in Unix milliseconds; the chronometer counts down to it.
    public var whenEpochMillis: Int?
    public var progress: Progress?

    public init(state: LiveActivityState, event: LiveActivityEvent) {
        let live = event != .end
        switch state {
        case .progress(let state):
            shortCriticalText = live ? "\(state.currentStage + 1)/\(state.stages.count)" : nil
            progress = Self.progress(state)
        case .status(let state):
            shortCriticalText = live ? Self.shortText(state.statusLabel) : nil
        case .countdown(let state):
            whenEpochMillis = live ? Int((state.deadline.timeIntervalSince1970 * 1_000).rounded()) : nil
        }
    }

    /// The FCM data pairs, every value a string, in this order; none for what does not apply.
    public var dataPairs: [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = []
        if let shortCriticalText { pairs.append(("shortCriticalText", shortCriticalText)) }
        if let whenEpochMillis {
            pairs.append(("whenEpochMillis", String(whenEpochMillis)))
            pairs.append(("chronometerCountDown", "true"))
        }
        if let progress {
            let segments = progress.segmentLengths.map { JSONValue.object([("length", .number(Double($0)))]) }
            pairs.append(("progressSegments", JSONWriter.string(.array(segments))))
            pairs.append(("progressValue", String(progress.value)))
            pairs.append(("progressMax", String(progress.max)))
        }
        return pairs
    }

    /// `text` without surrounding whitespace, cut to `maxShortCriticalTextCharacters` grapheme clusters: a
    /// longer one keeps one fewer and ends in "…" (a cut word reads as a different word without it).
    static func shortText(_ text: String) -> String {
        let trimmed = trimmingWhitespace(Substring(text))
        guard trimmed.count > maxShortCriticalTextCharacters else { return String(trimmed) }
        return String(trimmingWhitespace(trimmed.prefix(maxShortCriticalTextCharacters - 1))) + "…"
    }

    /// Whole grapheme clusters of whitespace off both ends (Foundation's trimming works on scalars, and could
    /// leave a combining mark without its base).
    static func trimmingWhitespace(_ text: Substring) -> Substring {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }),
            let last = text.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return text[first...last]
    }

    static func progress(_ state: LiveActivityState.ProgressState) -> Progress {
        let unit = progressUnitsPerStage
        let total = unit * state.stages.count
        let whole = Int((state.progress * Double(total)).rounded())
        let stage = (unit * state.currentStage)...(unit * (state.currentStage + 1))
        return Progress(
            segmentLengths: Array(repeating: unit, count: state.stages.count),
            value: min(max(whole, stage.lowerBound), stage.upperBound))
    }
}
