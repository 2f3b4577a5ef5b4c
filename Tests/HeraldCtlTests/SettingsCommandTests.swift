import Foundation
import HeraldCtl
import Postgres
import ServiceSupport
import Testing

/// `heraldctl settings`: the settings catalog as docs/configuration.md, without a database.
@Suite("heraldctl settings")
struct SettingsCommandTests {
    static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/configuration.md")

    @Test("the catalog's HERALD_DB_PREPARED default is the connection options' own")
    func preparedDefault() {
        // ServiceSupport knows no database, so the default is written there and checked against Postgres' here.
        #expect(Settings.databasePrepared.flag == PostgresConnectionOptions().preparedStatements)
    }

    @Test("prints docs/configuration.md with no HERALD_DATABASE_URL")
    func printsTheDocument() throws {
        var printed = ""
        let status = HeraldCtl.run(["settings"], environment: [:], style: .json) { printed += $0 + "\n" }
        #expect(status == 0)
        #expect(printed == (try String(contentsOf: Self.document, encoding: .utf8)))
    }

    @Test("takes no arguments and no options", arguments: [["settings", "all"], ["settings", "--json"]])
    func badUsage(_ words: [String]) {
        #expect(HeraldCtl.run(words, environment: [:], style: .json) { _ in } == 2)
    }
}
