import Foundation

/// The silent message that tells the host app to take a retracted push's notification away (docs/api.md,
/// "Retracting a push"): `event: "retract"` and the `deliveryId` the shown notification carries, signed as a push is
/// (v1 `sig` and v2 `sig2`, SignedEnvelope.swift), for the user it went to.
///
/// APNs: `aps` holds `content-available: 1` alone, so iOS wakes the app in the background and shows nothing; the
/// worker sends it as `apns-push-type: background` at priority 5, as Apple requires for such a push
/// (Sources/Worker/APNsUpstream.swift). FCM: a data message at NORMAL priority: FCM deprioritizes high-priority
/// messages that show the user nothing.
public enum RetractMessage {
    /// The value of `event`.
    public static let event = "retract"

    /// The payload for `service` of the message retracting `deliveryID`, for `userID`, expiring (`exp`) at
    /// `expiresAt` (unix seconds): the APNs body or the FCM message, as the worker sends it.
    public static func render(
        retracting deliveryID: UUID, miniAppID: String, recipient userID: String, expiresAt: Int,
        for service: PushService, signer: any PayloadSigner
    ) -> [UInt8] {
        let members: [(key: String, value: String)] = [
            ("channel", "mini-app"), ("event", event), ("miniAppId", miniAppID),
            ("deliveryId", UUIDText.string(deliveryID)), ("exp", String(expiresAt)),
        ]
        switch service {
        case .apns:
            let apnsLeaves = [SignedEnvelope.Leaf(["aps", "content-available"], "1")] + leaves(members)
            var body = Array(#"{"aps":{"content-available":1}"#.utf8)
            write(signed(members, leaves: apnsLeaves, recipient: userID, signer: signer), into: &body)
            body.append(UInt8(ascii: "}"))
            return body
        case .fcm:
            var message = Array(#"{"android":{"priority":"NORMAL"},"data":{"#.utf8)
            let dataStart = message.count
            write(signed(members, leaves: leaves(members), recipient: userID, signer: signer), into: &message)
            // `data`'s first member follows its brace without a comma.
            message.remove(at: dataStart)
            message.append(contentsOf: "}}".utf8)
            return message
        }
    }

    private static func leaves(_ members: [(key: String, value: String)]) -> [SignedEnvelope.Leaf] {
        members.map { SignedEnvelope.Leaf([$0.key], $0.value) }
    }

    /// `members` followed by `kid`, `sig2` (over the leaves, for the recipient) and `sig` (over every member but
    /// `kid` and `sig`, `sig2` included).
    private static func signed(
        _ members: [(key: String, value: String)], leaves: [SignedEnvelope.Leaf], recipient userID: String,
        signer: any PayloadSigner
    ) -> [(key: String, value: String)] {
        let sig2 = signer.signature(for: SignedEnvelope.v2Message(leaves, recipient: userID))
        let sig = signer.signature(for: SignedEnvelope.canonicalBytes(members + [("sig2", sig2)]))
        return members + [("kid", signer.keyID), ("sig2", sig2), ("sig", sig)]
    }

    /// `,"key":"value"` for each member.
    private static func write(_ members: [(key: String, value: String)], into out: inout [UInt8]) {
        for member in members {
            out.append(UInt8(ascii: ","))
            JSONWriter.writeString(member.key, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.writeString(member.value, into: &out)
        }
    }
}
