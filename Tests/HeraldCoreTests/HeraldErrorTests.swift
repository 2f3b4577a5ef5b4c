import HeraldCore
import Testing

@Suite struct HeraldErrorTests {
    @Test func jsonBodyHasCodeMessageAndField() {
        let error = HeraldError.ruleViolated("too_many_recipients", "At most 1000.", field: "recipients")
        #expect(
            JSONWriter.string(error.json)
                == #"{"error":{"code":"too_many_recipients","message":"At most 1000.","field":"recipients"}}"#)
        #expect(error.status == 422)
    }

    @Test func missingFieldIsNull() {
        #expect(
            JSONWriter.string(HeraldError.unauthorized.json)
                == #"{"error":{"code":"unauthorized","message":"A valid bearer token is required.","field":null}}"#)
    }

    @Test func factoriesUseTheSpecStatuses() {
        #expect(HeraldError.invalidJSON("x").status == 400 && HeraldError.invalidJSON("x").code == "invalid_json")
        #expect(
            HeraldError.invalidField("f", "m")
                == HeraldError(status: 400, code: "invalid_field", message: "m", field: "f"))
        #expect(HeraldError.missingField("title").status == 400 && HeraldError.missingField("title").field == "title")
        #expect(HeraldError.unknownField("x").code == "unknown_field")
        #expect(HeraldError.unauthorized.status == 401)
        #expect(HeraldError.notFound.status == 404)
        #expect(HeraldError.methodNotAllowed.status == 405)
        #expect(HeraldError.bodyTooLarge.status == 413)
        #expect(HeraldError.unsupportedMediaType.status == 415)
        #expect(HeraldError.databaseUnavailable.status == 503 && HeraldError.databaseUnavailable.retryAfter == 1)
        #expect(HeraldError.internalError.status == 500)
    }

    @Test func messagesWithQuotesStayValidJSON() throws {
        let error = HeraldError.invalidField("data.\"k\"", "bad \"k\"\n")
        let parsed = try JSONParser.parse(JSONWriter.bytes(error.json))
        #expect(parsed["error"]?["field"] == .string("data.\"k\""))
        #expect(parsed["error"]?["message"] == .string("bad \"k\"\n"))
    }
}
