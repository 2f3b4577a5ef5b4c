import Foundation

/// How far back a console report or a console replay reaches: the `hours` a request gives (1-720, 24 when it gives
/// none) before `now`. One reading for every report, so their limits and default cannot drift apart.
struct ReportWindow {
    static let hours = 1...720
    static let defaultHours = 24

    let hours: Int
    let since: Date

    init(hours given: Int?, now: Date = Date()) {
        hours = given ?? Self.defaultHours
        since = now.addingTimeInterval(-Double(hours) * 3_600)
    }
}
