import APNs
import HTTP2
import Testing

@Suite struct APNsRequestBuilderTests {
    @Test func alertRequestCarriesEveryHeaderInOrder() {
        let notification = APNsNotification(
            deviceToken: sampleDeviceToken, environment: .production, id: sampleAPNsID,
            payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8))
        let request = APNsRequestBuilder.request(for: notification, topic: "app.herald.demo", providerToken: "h.c.s")
        #expect(request.method == "POST")
        #expect(request.path == "/3/device/" + sampleDeviceToken)
        #expect(
            request.headers == [
                HTTP2Header("authorization", "bearer h.c.s"),
                HTTP2Header("apns-push-type", "alert"),
                HTTP2Header("apns-topic", "app.herald.demo"),
                HTTP2Header("apns-priority", "10"),
                HTTP2Header("apns-id", sampleAPNsID),
            ])
        #expect(request.bodyText == #"{"aps":{"alert":"hi"}}"#)
        #expect(request.timeout == nil)
    }

    @Test func optionalHeadersAppearWhenSet() {
        let notification = APNsNotification(
            deviceToken: sampleDeviceToken, environment: .sandbox, id: sampleAPNsID,
            priority: 5, expiration: 1_750_003_600, collapseID: "score-42",
            payload: [])
        let request = APNsRequestBuilder.request(
            for: notification, topic: "app.herald.demo", providerToken: "t",
            timeout: .seconds(3))
        #expect(request.header("apns-priority") == "5")
        #expect(request.header("apns-expiration") == "1750003600")
        #expect(request.header("apns-collapse-id") == "score-42")
        #expect(request.timeout == .seconds(3))
    }

    @Test("The ids are never indexed (a collapse id only when it is the apns-id); the repeating fields are")
    func onlyPerNotificationIDsAreNeverIndexed() {
        var notification = APNsNotification(
            deviceToken: sampleDeviceToken, environment: .production, id: sampleAPNsID,
            expiration: 1_750_003_600, collapseID: sampleAPNsID, payload: [])
        var request = APNsRequestBuilder.request(for: notification, topic: "app.herald.demo", authorization: "bearer t")
        #expect(request.headers.filter(\.neverIndexed).map(\.name) == ["apns-collapse-id", "apns-id"])
        #expect(request.header("authorization") == "bearer t")
        notification.collapseID = "score-42"
        request = APNsRequestBuilder.request(for: notification, topic: "app.herald.demo", providerToken: "t")
        #expect(request.headers.filter(\.neverIndexed).map(\.name) == ["apns-id"])
        #expect(request.header("authorization") == "bearer t")
    }

    @Test func liveActivityGetsTheSuffixedTopicUnlessExplicit() {
        var notification = APNsNotification(
            deviceToken: sampleDeviceToken, environment: .production, id: sampleAPNsID,
            pushType: "liveactivity", payload: [])
        var request = APNsRequestBuilder.request(for: notification, topic: "app.herald.demo", providerToken: "t")
        #expect(request.header("apns-push-type") == "liveactivity")
        #expect(request.header("apns-topic") == "app.herald.demo.push-type.liveactivity")
        notification.topic = "com.other.app.push-type.liveactivity"
        request = APNsRequestBuilder.request(for: notification, topic: "app.herald.demo", providerToken: "t")
        #expect(request.header("apns-topic") == "com.other.app.push-type.liveactivity")
        notification.pushType = "alert"
        notification.topic = "com.explicit"
        request = APNsRequestBuilder.request(for: notification, topic: "app.herald.demo", providerToken: "t")
        #expect(request.header("apns-topic") == "com.explicit")
    }

    @Test(arguments: [
        (sampleDeviceToken, true), (sampleDeviceToken.uppercased(), true), (String(repeating: "a", count: 200), true),
        ("", false), ("zz", false), ("abcd/../x", false), ("ab cd", false), (String(repeating: "a", count: 201), false),
    ])
    func deviceTokenShape(_ token: String, _ wellFormed: Bool) {
        #expect(APNsRequestBuilder.isWellFormedDeviceToken(token) == wellFormed)
    }
}
