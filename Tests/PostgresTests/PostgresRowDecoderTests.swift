import Foundation
import HeraldTestSupport
import Postgres
import Testing

/// Row types that state only their fields, decoded by `PostgresRowDecoder` from real rows.
@Suite("Postgres row decoder", .requiresDatabase)
struct PostgresRowDecoderTests {
    let pool = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 2))

    enum Color: String, Decodable, Equatable { case red, green }

    struct Everything: QueryRow, Decodable, Equatable {
        let id: UUID
        let name: String
        let count: Int
        let small: Int32
        let big: Int64
        let flag: Bool
        let at: Date
        let ratio: Double
        let blob: Data
        let tags: [String]
        let numbers: [Int?]
        let color: Color
        let partnerID: UUID
        let miniAppID: String
        let note: String?
        let missingAt: Date?
    }

    struct Optionals: QueryRow, Decodable {
        let note: String?
        let count: Int?
        let color: Color?
    }

    struct Count: QueryRow, Decodable { let count: Int }

    func decode<Row: QueryRow>(_: Row.Type, _ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> Row
    {
        try Row(row: try #require(try pool.withConnection { try $0.query(sql, parameters).first }))
    }

    func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as PostgresError {
            #expect(error.code == .decodingFailed)
            return error.serverMessage
        } catch {
            return "\(error)"
        }
    }

    @Test("every supported type decodes by column name, snake_case columns into camelCase and ID fields")
    func everyType() throws {
        let id = UUID()
        let partner = UUID()
        let at = Date(timeIntervalSince1970: 1_795_959_651.25)
        let row = try decode(
            Everything.self,
            """
            SELECT $1::uuid AS id, 'it''s ☃' AS name, 42::bigint AS count, (-7)::int4 AS small,
                9007199254740993::int8 AS big, true AS flag, $2::timestamptz AS at, 0.25::float8 AS ratio,
                '\\x00ff10'::bytea AS blob, ARRAY['a', 'b c', 'd"e', 'NULL', '']::text[] AS tags,
                ARRAY[1, NULL, -3]::int[] AS numbers, 'green' AS color, $3::uuid AS partner_id,
                'app.one' AS mini_app_id, NULL::text AS note, NULL::timestamptz AS missing_at
            """, [id, at, partner])
        #expect(
            row
                == Everything(
                    id: id, name: "it's ☃", count: 42, small: -7, big: 9_007_199_254_740_993, flag: true, at: at,
                    ratio: 0.25, blob: Data([0, 255, 16]), tags: ["a", "b c", "d\"e", "NULL", ""],
                    numbers: [1, nil, -3], color: .green, partnerID: partner, miniAppID: "app.one", note: nil,
                    missingAt: nil))
    }

    @Test("NULL reads as nil into optional fields, of every kind")
    func nullIntoOptional() throws {
        let row = try decode(Optionals.self, "SELECT NULL::text AS note, NULL::int AS count, NULL::text AS color")
        #expect(row.note == nil && row.count == nil && row.color == nil)
        let filled = try decode(Optionals.self, "SELECT 'x' AS note, 3 AS count, 'red' AS color")
        #expect(filled.note == "x" && filled.count == 3 && filled.color == .red)
    }

    @Test("a missing column throws naming it and the row type, for an optional field too")
    func missingColumn() throws {
        let required = message { _ = try decode(Count.self, "SELECT 1 AS total") }
        #expect(required?.contains("Count") == true && required?.contains("count") == true)
        let optional = message { _ = try decode(Optionals.self, "SELECT 'x' AS note, 3 AS count") }
        #expect(optional?.contains("Optionals") == true && optional?.contains("color") == true)
    }

    @Test("a mistyped column, a NULL into a required field and an unknown raw value throw naming the column")
    func mistypedColumn() throws {
        let text = message { _ = try decode(Count.self, "SELECT 'many' AS count") }
        #expect(text?.contains("Count") == true && text?.contains("column count") == true)
        let null = message { _ = try decode(Count.self, "SELECT NULL::int AS count") }
        #expect(null?.contains("column count") == true)
        let color = message {
            _ = try decode(Optionals.self, "SELECT NULL AS note, NULL::int AS count, 'blue' AS color")
        }
        #expect(color?.contains("Optionals") == true && color?.contains("column color") == true)
        let element = message {
            _ = try decode(Everything.self, "SELECT ARRAY['x']::text[] AS numbers, 1 AS id")
        }
        #expect(element?.contains("Everything") == true)
    }

    @Test("arrays in Postgres' output form split into their elements, NULL and quoting included")
    func arrays() throws {
        struct Lists: QueryRow, Decodable {
            let ids: [UUID]
            let texts: [String?]
            let empty: [Int]
        }
        let ids = [UUID(), UUID()]
        let row = try decode(
            Lists.self, "SELECT $1::uuid[] AS ids, ARRAY['a\\b', NULL, '{x,y}']::text[] AS texts, '{}'::int[] AS empty",
            [ids])
        #expect(row.ids == ids)
        #expect(row.texts == ["a\\b", nil, "{x,y}"])
        #expect(row.empty == [])
    }
}
