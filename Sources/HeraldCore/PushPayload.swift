import Foundation

/// What every delivery of one push carries, before the per-delivery id and signature.
public struct PushContent: Sendable, Equatable {
    /// `[<displayName>] <title>`: the partner cannot override the prefix.
    public let title: String
    public let body: String
    public let miniAppID: String
    public let deepLink: String?
    /// The partner's display name, for communication-style rendering.
    public let senderName: String
    /// The intake's PNG of the mini-app icon (`publicURL` + its path), when the partner has one and the
    /// intake knows its public URL.
    public let imageURL: String?
    public let data: [PushRequest.DataEntry]
    /// `aps.sound`, from the partner row.
    public let sound: NotificationSound
    /// `aps.interruption-level`, from the push (already authorised for the partner).
    public let interruptionLevel: InterruptionLevel

    public init(request: PushRequest, partner: PartnerProfile, publicURL: String?) {
        title = "[\(partner.displayName)] \(request.title)"
        body = request.body
        miniAppID = partner.miniAppID
        deepLink = request.deepLink
        senderName = partner.displayName
        imageURL = partner.iconPath.flatMap { path in publicURL.map { $0 + path } }
        data = request.data
        sound = partner.sound
        interruptionLevel = request.interruptionLevel
    }
}

/// The upstream a delivery goes to.
public enum PushService: String, Sendable, CaseIterable {
    case apns, fcm
}

/// The two payloads of one delivery, exactly as the worker sends them.
public struct RenderedPush: Sendable {
    /// The APNs request body.
    public let apns: [UInt8]
    /// The FCM v1 `message` without `token` and `android.ttl` (the worker adds both at send time).
    public let fcm: [UInt8]
    /// FCM counts the bytes of data keys and values against its 4,096-byte limit.
    public let fcmDataBytes: Int
}

public enum PushPayload {
    public static let maxAPNsBytes = 4096
    public static let maxFCMDataBytes = 4096

    /// Renders both payloads for one delivery, signed with `signer` (what the size check needs).
    public static func render(_ content: PushContent, deliveryID: UUID, signer: any PayloadSigner) -> RenderedPush {
        let envelope = Envelope(content, deliveryID: deliveryID, signer: signer)
        let data = envelope.fcmData()
        let dataBytes = data.reduce(0) { $0 + $1.key.utf8.count + ($1.value.stringValue?.utf8.count ?? 0) }
        return RenderedPush(apns: JSONWriter.bytes(envelope.apnsBody()), fcm: JSONWriter.bytes(Envelope.fcmMessage(data)),
                            fcmDataBytes: dataBytes)
    }

    /// Renders only the payload one device needs.
    public static func render(_ content: PushContent, deliveryID: UUID, signer: any PayloadSigner,
                              for service: PushService) -> [UInt8] {
        let envelope = Envelope(content, deliveryID: deliveryID, signer: signer)
        switch service {
        case .apns: return JSONWriter.bytes(envelope.apnsBody())
        case .fcm: return JSONWriter.bytes(Envelope.fcmMessage(envelope.fcmData()))
        }
    }

    /// The fields of one delivery and their signature, shared by both payloads.
    private struct Envelope {
        let content: PushContent
        let custom: [(key: String, value: String)]
        let keyID: String
        let signature: String

        init(_ content: PushContent, deliveryID: UUID, signer: any PayloadSigner) {
            var custom: [(key: String, value: String)] = [("channel", "mini-app"), ("miniAppId", content.miniAppID)]
            if let link = content.deepLink { custom.append(("deepLink", link)) }
            custom.append(("deliveryId", deliveryID.uuidString.lowercased()))
            custom.append(("senderName", content.senderName))
            if let image = content.imageURL { custom.append(("imageUrl", image)) }
            for entry in content.data { custom.append((entry.key, entry.value)) }
            let signed = [("title", content.title), ("body", content.body), ("isGroup", "true")] + custom
            self.content = content
            self.custom = custom
            self.keyID = signer.keyID
            self.signature = signer.signature(for: SignedEnvelope.canonicalBytes(signed))
        }

        /// `aps` carries what iOS itself acts on: the alert, the service extension flag, `thread-id` (the
        /// mini-app, so its pushes stack together), the partner's sound (none when silent) and the
        /// interruption level when it is not APNs' default. None of these is signed: `sig` covers what
        /// the app reads (docs/security.md, "The signed envelope").
        func apnsBody() -> JSONValue {
            var aps: [(key: String, value: JSONValue)] = [
                ("alert", .object([("title", .string(content.title)), ("body", .string(content.body))])),
                ("mutable-content", .number(1)),
                ("thread-id", .string(content.miniAppID)),
            ]
            if let sound = content.sound.name { aps.append(("sound", .string(sound))) }
            if content.interruptionLevel != .default {
                aps.append(("interruption-level", .string(content.interruptionLevel.rawValue)))
            }
            var apns: [(key: String, value: JSONValue)] = [("aps", .object(aps))]
            apns.append(contentsOf: custom.map { ($0.key, JSONValue.string($0.value)) })
            apns.append(("isGroup", .bool(true)))
            apns.append(("kid", .string(keyID)))
            apns.append(("sig", .string(signature)))
            return .object(apns)
        }

        /// The keys beside `aps`, plus the alert, as strings. `aps`'s own keys stay on APNs: an Android
        /// host groups by `miniAppId` and takes sound and importance from its notification channels.
        func fcmData() -> [(key: String, value: JSONValue)] {
            var data: [(key: String, value: JSONValue)] = [("title", .string(content.title)), ("body", .string(content.body))]
            data.append(contentsOf: custom.map { ($0.key, JSONValue.string($0.value)) })
            data.append(("isGroup", .string("true")))
            data.append(("kid", .string(keyID)))
            data.append(("sig", .string(signature)))
            return data
        }

        static func fcmMessage(_ data: [(key: String, value: JSONValue)]) -> JSONValue {
            .object([("android", .object([("priority", .string("HIGH"))])), ("data", .object(data))])
        }
    }

    /// Checks both payloads against their limits at intake. Sizes do not depend on the delivery:
    /// ids and signatures have fixed lengths, so one rendering decides for every recipient.
    public static func checkSize(_ content: PushContent, signer: any PayloadSigner) throws(HeraldError) {
        try checkSize(render(content, deliveryID: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                             signer: signer), of: content)
    }

    /// Checks an already rendered delivery of `content` (the intake checks the first delivery it
    /// renders rather than rendering a probe as well).
    public static func checkSize(_ probe: RenderedPush, of content: PushContent) throws(HeraldError) {
        let field = content.data.isEmpty ? "body" : "data"
        if probe.apns.count > maxAPNsBytes {
            throw .ruleViolated(
                "payload_too_large",
                "The rendered APNs payload is \(probe.apns.count) bytes, \(probe.apns.count - maxAPNsBytes) over the \(maxAPNsBytes)-byte limit.",
                field: field)
        }
        if probe.fcmDataBytes > maxFCMDataBytes {
            throw .ruleViolated(
                "payload_too_large",
                "The rendered FCM data is \(probe.fcmDataBytes) bytes, \(probe.fcmDataBytes - maxFCMDataBytes) over the \(maxFCMDataBytes)-byte limit.",
                field: field)
        }
    }
}
