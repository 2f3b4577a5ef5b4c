import HTTP2
import Testing

@Suite struct HTTP2MessageTests {
    @Test func headerLookupReturnsTheFirstValueByName() {
        let response = HTTP2Response(status: 200, headers: [HTTP2Header("apns-id", "a"), HTTP2Header("apns-id", "b")])
        #expect(response.header("apns-id") == "a")
        #expect(response.header("retry-after") == nil)
    }

    @Test func errorDescriptionCarriesTheStableCode() {
        #expect(HTTP2Error(.goAway, "peer sent GOAWAY").description == "goaway: peer sent GOAWAY")
    }
}
