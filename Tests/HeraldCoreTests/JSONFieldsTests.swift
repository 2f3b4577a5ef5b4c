import Foundation
import HeraldCore
import Testing

@Suite struct JSONFieldsTests {
    static func fields(_ document: String, allowed: Set<String>, path: String = "") throws -> JSONFields {
        try JSONFields(try JSONParser.parse(document), allowed: allowed, path: path)
    }

    @Test func theBodyItselfKeepsItsMessages() {
        let error = expectHeraldError(status: 400, code: "invalid_field", field: "") { () throws(HeraldError) in
            _ = try JSONFields(.array([]), allowed: [])
        }
        #expect(error?.message == "The body must be a JSON object.")
        expectHeraldError(status: 400, code: "unknown_field", field: "colour") { () throws(HeraldError) in
            _ = try JSONFields(.object([("colour", .string("red"))]), allowed: ["color"])
        }
    }

    @Test func nestedObjectsNameTheirPath() throws {
        let body = try Self.fields(#"{"state":{"stages":["a",3],"n":"x"}}"#, allowed: ["state"])
        let state = try #require(try body.object("state", allowed: ["stages", "n"]))
        #expect(state.path == "state")
        #expect(state.field("n") == "state.n")
        expectHeraldError(status: 400, code: "invalid_field", field: "state.stages[1]") { () throws(HeraldError) in
            _ = try state.stringArray("stages", maxCount: 8)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state.n") { () throws(HeraldError) in
            _ = try state.integer("n", range: 0...1)
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "state.n") { () throws(HeraldError) in
            _ = try body.object("state", allowed: ["stages"])
        }
        expectHeraldError(status: 400, code: "missing_field", field: "state.title") { () throws(HeraldError) in
            _ = try state.requiredString("title")
        }
        expectHeraldError(status: 400, code: "missing_field", field: "alert") { () throws(HeraldError) in
            _ = try body.requiredObject("alert", allowed: [])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "a.b") { () throws(HeraldError) in
            _ = try JSONFields(.string("x"), allowed: [], path: "a.b")
        }
    }

    @Test func nullReadsAsAbsentButIsTold() throws {
        let fields = try Self.fields(#"{"a":null}"#, allowed: ["a", "b"])
        #expect(fields.value("a") == nil)
        #expect(fields.has("a") && !fields.has("b"))
        #expect(fields.isNull("a") && !fields.isNull("b"))
        #expect(try fields.string("a") == nil)
        #expect(try fields.object("a", allowed: []) == nil)
    }

    @Test func typedReaders() throws {
        let fields = try Self.fields(
            #"{"n":0.5,"b":true,"d":"2026-06-01T00:00:00Z","s":"x"}"#, allowed: ["n", "b", "d", "s"])
        #expect(try fields.number("n") == 0.5)
        #expect(try fields.number("n", range: 0...1) == 0.5)
        expectHeraldError(status: 400, code: "invalid_field", field: "n") { () throws(HeraldError) in
            _ = try fields.number("n", range: 1...2)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "s") { () throws(HeraldError) in
            _ = try fields.number("s")
        }
        #expect(try fields.bool("b") == true)
        expectHeraldError(status: 400, code: "invalid_field", field: "n") { () throws(HeraldError) in
            _ = try fields.bool("n")
        }
        #expect(try fields.date("d") == Fixtures.now)
        expectHeraldError(status: 400, code: "invalid_field", field: "s") { () throws(HeraldError) in
            _ = try fields.date("s")
        }
        #expect(try fields.date("missing") == nil)
    }
}
