import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// What schemathesis found against docs/openapi.yaml (scripts/fuzz), each pinned through the real
/// intake and Postgres so it cannot come back.
@Suite(.requiresDatabase, .serialized)
struct LiveActivityFuzzFindingsTests {
    let harness: LiveActivityHarness

    init() throws { harness = try LiveActivityHarness() }

    func error(_ response: TestHTTPClient.Response) -> (code: String?, field: String?) {
        let json = try? JSONParser.parse(response.body)
        return (json?["error"]?["code"]?.stringValue, json?["error"]?["field"]?.stringValue)
    }

    /// ST202: a state patch names keys of every template (the body cannot say which template the stored
    /// activity has), so `{"state":{"statusLabel":"x"}}` is schema-valid for a progress activity. It broke a
    /// rule of that activity, not the request's shape: 422 invalid_state, not 400 unknown_field. A key of no
    /// template stays 400 unknown_field. Neither changes the activity.
    @Test func aPatchKeyOfAnotherTemplateBreaksARuleNotTheShape() throws {
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        let id = try harness.activityID(harness.start(partner, user))
        let patches: [(String, String, String)] = [
            ("PATCH", #"{"state":{"statusLabel":"Pending"}}"#, "state.statusLabel"),
            ("POST", #"{"state":{"progress":0.5,"footnote":null}}"#, "state.footnote"),
        ]
        for (method, body, field) in patches {
            let response = try harness.update(partner, id, body, method: method)
            #expect(response.status == 422, "\(body): \(response.text)")
            #expect(error(response).code == "invalid_state" && error(response).field == field, "\(response.text)")
        }
        let end = try harness.end(partner, id, #"{"state":{"deadline":"2030-01-01T00:00:00Z"}}"#)
        #expect(
            end.status == 422 && error(end).code == "invalid_state" && error(end).field == "state.deadline",
            "\(end.text)")
        let unknown = try harness.update(partner, id, #"{"state":{"colour":"red"}}"#)
        #expect(
            unknown.status == 400 && error(unknown).code == "unknown_field" && error(unknown).field == "state.colour")

        #expect(try harness.db.count("SELECT version FROM live_activities WHERE id = $1::uuid", [id]) == 1)
        let read = try JSONParser.parse(try harness.get(partner, id).body)
        #expect(read["status"]?.stringValue == "active")
        #expect(read["state"]?["statusLabel"] == nil && read["state"]?["progress"]?.numberValue == 0.16)

        // The same patch applied to an activity of its own template is accepted.
        let statusID = try harness.activityID(
            harness.start(
                partner, user, template: "status", state: #"{"statusLabel":"Queued","statusVariant":"info"}"#))
        try harness.expect(
            harness.update(partner, statusID, #"{"state":{"statusLabel":"Pending"}}"#, method: "PATCH"), [200])
    }
}
