import APNs
import FCM
import Testing

@Suite struct ContractTypesTests {
    @Test func apnsNotificationDefaultsToAnImmediateAlert() {
        let notification = APNsNotification(
            deviceToken: String(repeating: "a", count: 64), environment: .sandbox,
            id: "0192f3a4-0000-7000-8000-000000000001", payload: Array("{}".utf8))
        #expect(notification.pushType == "alert")
        #expect(notification.priority == 10)
        #expect(notification.expiration == nil)
    }

    @Test func fcmMessageKeepsTheStoredBytes() {
        let message = FCMMessage(token: "t", message: Array(#"{"data":{}}"#.utf8), ttlSeconds: 60)
        #expect(String(decoding: message.message, as: UTF8.self) == #"{"data":{}}"#)
    }
}
