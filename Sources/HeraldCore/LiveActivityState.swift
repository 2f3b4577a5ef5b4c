import Foundation

/// A validated, complete state of one template. Partners send it in their field names; the
/// stored form (`json`) is what GET returns and what the database keeps; the payloads carry it as
/// the app's `ContentState` (`contentState(displayName:miniAppID:)`).
public enum LiveActivityState: Sendable, Equatable {
    case progress(ProgressState)
    case status(StatusState)
    case countdown(CountdownState)

    /// A journey of named stages: the card shows the stages, the current one and a bar.
    public struct ProgressState: Sendable, Equatable {
        /// 1-8 stage names.
        public var stages: [String]
        /// An index into `stages`.
        public var currentStage: Int
        /// 0...1.
        public var progress: Double
        public var statusText: String?
    }

    /// A label with a colour-coded variant.
    public struct StatusState: Sendable, Equatable {
        public var statusLabel: String
        public var statusVariant: StatusVariant
        public var footnote: String?
    }

    public enum StatusVariant: String, CaseIterable, Sendable {
        case pending, success, failure, info
    }

    /// A timer counting down to `deadline`.
    public struct CountdownState: Sendable, Equatable {
        /// Kept to the whole second, so the stored ISO-8601 form and the payload's number agree.
        public var deadline: Date
        public var footnote: String?
    }

    public var template: LiveActivityTemplate {
        switch self {
        case .progress: return .progress
        case .status: return .status
        case .countdown: return .countdown
        }
    }

    /// The stored form: partner field names, optional fields omitted when nil, `deadline` as
    /// ISO-8601 (`ISO8601.format`). `decode(template:json:)` reads it back.
    public var json: JSONValue {
        switch self {
        case .progress(let state):
            var members: [(key: String, value: JSONValue)] = [
                ("stages", .array(state.stages.map { .string($0) })),
                ("currentStage", .number(Double(state.currentStage))),
                ("progress", .number(state.progress)),
            ]
            if let text = state.statusText { members.append(("statusText", .string(text))) }
            return .object(members)
        case .status(let state):
            var members: [(key: String, value: JSONValue)] = [
                ("statusLabel", .string(state.statusLabel)), ("statusVariant", .string(state.statusVariant.rawValue)),
            ]
            if let footnote = state.footnote { members.append(("footnote", .string(footnote))) }
            return .object(members)
        case .countdown(let state):
            var members: [(key: String, value: JSONValue)] = [("deadline", .string(ISO8601.format(state.deadline)))]
            if let footnote = state.footnote { members.append(("footnote", .string(footnote))) }
            return .object(members)
        }
    }

    /// The app's `ContentState` as JSON: what a Swift `Codable` struct decodes with the default
    /// `JSONDecoder` strategies (docs/live-activities.md declares the structs). camelCase keys,
    /// optional fields omitted when nil, `deadline` as seconds since 2001-01-01T00:00:00Z (the
    /// default `.deferredToDate` reads `Date.timeIntervalSinceReferenceDate`), then the brand
    /// every content-state carries.
    public func contentState(displayName: String, miniAppID: String) -> JSONValue {
        var members: [(key: String, value: JSONValue)]
        if case .countdown(let state) = self {
            members = [("deadline", .number(state.deadline.timeIntervalSinceReferenceDate))]
            if let footnote = state.footnote { members.append(("footnote", .string(footnote))) }
        } else {
            members = json.objectMembers ?? []
        }
        members.append(("displayName", .string(displayName)))
        members.append(("miniAppId", .string(miniAppID)))
        return .object(members)
    }

    /// Reads and validates a complete state of `template`: a partner's start state, a merged
    /// state, or the stored form. Shape and type problems are 400 (`missing_field`,
    /// `invalid_field`, `unknown_field`); template rules are 422 `invalid_state`; both name the
    /// field under `path` (`state.currentStage`, `state.stages[2]`).
    public static func decode(
        template: LiveActivityTemplate, json: JSONValue, rules: LiveActivityRules = LiveActivityRules(),
        path: String = "state"
    ) throws(HeraldError) -> LiveActivityState {
        let fields = try JSONFields(json, allowed: Set(template.stateKeys), path: path)
        switch template {
        case .progress: return .progress(try progress(fields, rules: rules))
        case .status: return .status(try status(fields, rules: rules))
        case .countdown: return .countdown(try countdown(fields, rules: rules))
        }
    }

    /// Merges a partial state (the `state` object of an update or end: any subset of the
    /// template's keys; a key set to null clears an optional field) and validates the result as
    /// a whole, so a patch that shrinks `stages` below `currentStage` is refused. A key of
    /// another template is 422 `invalid_state`; a key of no template 400 `unknown_field`.
    public func merged(with patch: JSONValue, rules: LiveActivityRules = LiveActivityRules(), path: String = "state")
        throws(HeraldError) -> LiveActivityState
    {
        // The template is the stored activity's, not the body's: a key of another template is well-formed
        // JSON for some activity, so it breaks a rule of this one (422), not the request's shape (400).
        let fields = try JSONFields(patch, allowed: Self.allStateKeys, path: path)
        for member in fields.members where !template.stateKeys.contains(member.key) {
            throw Self.invalidState(
                fields.field(member.key),
                "\(fields.field(member.key)) is not a field of the \(template.rawValue) template.")
        }
        var members = json.objectMembers ?? []
        for member in fields.members {
            let index = members.firstIndex { $0.key == member.key }
            if member.value == .null {
                guard template.optionalStateKeys.contains(member.key) else {
                    throw .invalidField(fields.field(member.key), "\(fields.field(member.key)) cannot be cleared.")
                }
                if let index { members.remove(at: index) }
            } else if let index {
                members[index].value = member.value
            } else {
                members.append(member)
            }
        }
        return try Self.decode(template: template, json: .object(members), rules: rules, path: path)
    }

    /// Every template's state keys: what a patch may name before its activity's template is applied.
    static let allStateKeys = Set(LiveActivityTemplate.allCases.flatMap(\.stateKeys))

    static func invalidState(_ field: String, _ message: String) -> HeraldError {
        .ruleViolated("invalid_state", message, field: field)
    }

    private static func progress(_ fields: JSONFields, rules: LiveActivityRules) throws(HeraldError) -> ProgressState {
        let stagesField = fields.field("stages")
        guard let stagesValue = fields.value("stages") else { throw .missingField(stagesField) }
        guard let items = stagesValue.arrayValue else {
            throw .invalidField(stagesField, "\(stagesField) must be an array of stage names.")
        }
        guard rules.stageCount.contains(items.count) else {
            throw invalidState(
                stagesField,
                "\(stagesField) must have \(rules.stageCount.lowerBound)-\(rules.stageCount.upperBound) stages; got \(items.count)."
            )
        }
        var stages: [String] = []
        for (index, item) in items.enumerated() {
            let field = "\(stagesField)[\(index)]"
            guard let name = item.stringValue else { throw .invalidField(field, "\(field) must be a string.") }
            stages.append(try rules.text(name, field: field, length: rules.stageNameLength))
        }

        let stageField = fields.field("currentStage")
        guard let stage = try fields.number("currentStage") else { throw .missingField(stageField) }
        guard stage == stage.rounded() else { throw .invalidField(stageField, "\(stageField) must be a whole number.") }
        // Compared as a Double first: a huge number must not trap in Int(_:).
        guard stage >= 0, stage < Double(stages.count) else {
            throw invalidState(
                stageField,
                "\(stageField) must be the index of a stage, 0 to \(stages.count - 1); got \(JSONWriter.string(.number(stage)))."
            )
        }

        let progressField = fields.field("progress")
        guard let progress = try fields.number("progress") else { throw .missingField(progressField) }
        guard (0...1).contains(progress) else {
            throw invalidState(
                progressField, "\(progressField) must be from 0 to 1; got \(JSONWriter.string(.number(progress))).")
        }

        var statusText: String?
        if let text = try fields.string("statusText") {
            statusText = try rules.text(
                text, field: fields.field("statusText"), length: 0...rules.maxStatusTextCharacters, blankAllowed: true)
        }
        return ProgressState(stages: stages, currentStage: Int(stage), progress: progress, statusText: statusText)
    }

    private static func status(_ fields: JSONFields, rules: LiveActivityRules) throws(HeraldError) -> StatusState {
        let label = try rules.text(
            fields.requiredString("statusLabel"), field: fields.field("statusLabel"), length: rules.statusLabelLength)
        let variantField = fields.field("statusVariant")
        let variantName = try fields.requiredString("statusVariant")
        guard let variant = StatusVariant(rawValue: variantName) else {
            throw invalidState(
                variantField,
                "\(variantField) must be one of \(StatusVariant.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        return StatusState(statusLabel: label, statusVariant: variant, footnote: try footnote(fields, rules: rules))
    }

    private static func countdown(_ fields: JSONFields, rules: LiveActivityRules) throws(HeraldError) -> CountdownState
    {
        let deadlineField = fields.field("deadline")
        let text = try fields.requiredString("deadline")
        guard let deadline = ISO8601.parse(text) else {
            throw invalidState(deadlineField, "\(deadlineField) must be an ISO-8601 timestamp with a time zone.")
        }
        // Whole seconds: the app's number and the stored text then round-trip exactly.
        let rounded = Date(timeIntervalSince1970: deadline.timeIntervalSince1970.rounded())
        return CountdownState(deadline: rounded, footnote: try footnote(fields, rules: rules))
    }

    private static func footnote(_ fields: JSONFields, rules: LiveActivityRules) throws(HeraldError) -> String? {
        guard let text = try fields.string("footnote") else { return nil }
        return try rules.text(
            text, field: fields.field("footnote"), length: 0...rules.maxFootnoteCharacters, blankAllowed: true)
    }
}
