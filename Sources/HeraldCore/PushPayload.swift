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

    /// Both payloads of one delivery written whole: what a template's delivery equals byte for byte, and what it
    /// falls back to when its bytes cannot be patched.
    static func renderWhole(_ content: PushContent, deliveryID: UUID, signer: any PayloadSigner) -> RenderedPush {
        let envelope = Envelope(content, deliveryID: deliveryID, keyID: signer.keyID) { signer.signature(for: $0) }
        return RenderedPush(apns: envelope.apnsBody(), fcm: envelope.fcmMessage(), fcmDataBytes: envelope.fcmDataBytes)
    }

    /// The fields of one delivery and their signature, shared by both payloads.
    fileprivate struct Envelope {
        let content: PushContent
        let custom: [(key: String, value: String)]
        let keyID: String
        let signature: String

        /// `sign` turns the canonical bytes of the signed fields into the signature.
        init(_ content: PushContent, deliveryID: UUID, keyID: String, sign: ([UInt8]) -> String) {
            var custom: [(key: String, value: String)] = [("channel", "mini-app"), ("miniAppId", content.miniAppID)]
            if let link = content.deepLink { custom.append(("deepLink", link)) }
            custom.append(("deliveryId", UUIDText.string(deliveryID)))
            custom.append(("senderName", content.senderName))
            if let image = content.imageURL { custom.append(("imageUrl", image)) }
            for entry in content.data { custom.append((entry.key, entry.value)) }
            let signed = [("title", content.title), ("body", content.body), ("isGroup", "true")] + custom
            self.content = content
            self.custom = custom
            self.keyID = keyID
            self.signature = sign(SignedEnvelope.canonicalBytes(signed))
        }

        /// `aps` carries what iOS itself acts on: the alert, the service extension flag, `thread-id` (the
        /// mini-app, so its pushes stack together), the partner's sound (none when silent) and the
        /// interruption level when it is not APNs' default. None of these is signed: `sig` covers what
        /// the app reads (docs/security.md, "The signed envelope"). Written as JSONWriter writes the same object,
        /// member by member: building the value first was most of rendering a push.
        func apnsBody() -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(384 + content.title.utf8.count + content.body.utf8.count)
            out.append(contentsOf: #"{"aps":{"alert":{"title":"#.utf8)
            JSONWriter.writeString(content.title, into: &out)
            out.append(contentsOf: #","body":"#.utf8)
            JSONWriter.writeString(content.body, into: &out)
            out.append(contentsOf: #"},"mutable-content":1,"thread-id":"#.utf8)
            JSONWriter.writeString(content.miniAppID, into: &out)
            if let sound = content.sound.name {
                out.append(contentsOf: #","sound":"#.utf8)
                JSONWriter.writeString(sound, into: &out)
            }
            if content.interruptionLevel != .default {
                out.append(contentsOf: #","interruption-level":"#.utf8)
                JSONWriter.writeString(content.interruptionLevel.rawValue, into: &out)
            }
            out.append(UInt8(ascii: "}"))
            writeMembers(custom, into: &out)
            out.append(contentsOf: #","isGroup":true"#.utf8)
            writeSignature(into: &out)
            out.append(UInt8(ascii: "}"))
            return out
        }

        /// The FCM v1 message: `data` holds the keys beside `aps`, plus the alert, as strings. `aps`'s own keys stay
        /// on APNs: an Android host groups by `miniAppId` and takes sound and importance from its notification
        /// channels.
        func fcmMessage() -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(384 + content.title.utf8.count + content.body.utf8.count)
            out.append(contentsOf: #"{"android":{"priority":"HIGH"},"data":{"title":"#.utf8)
            JSONWriter.writeString(content.title, into: &out)
            out.append(contentsOf: #","body":"#.utf8)
            JSONWriter.writeString(content.body, into: &out)
            writeMembers(custom, into: &out)
            out.append(contentsOf: #","isGroup":"true""#.utf8)
            writeSignature(into: &out)
            out.append(contentsOf: "}}".utf8)
            return out
        }

        /// The bytes of `data`'s keys and values, as FCM counts them against its limit.
        var fcmDataBytes: Int {
            let fixed = "title".utf8.count + "body".utf8.count + "isGroup".utf8.count + "true".utf8.count
                + "kid".utf8.count + "sig".utf8.count
            return custom.reduce(fixed + content.title.utf8.count + content.body.utf8.count + keyID.utf8.count
                                 + signature.utf8.count) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        }

        private func writeMembers(_ members: [(key: String, value: String)], into out: inout [UInt8]) {
            for member in members {
                out.append(UInt8(ascii: ","))
                JSONWriter.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                JSONWriter.writeString(member.value, into: &out)
            }
        }

        /// `,"kid":…,"sig":…`: the signature last, where PushTemplate finds it.
        private func writeSignature(into out: inout [UInt8]) {
            out.append(contentsOf: #","kid":"#.utf8)
            JSONWriter.writeString(keyID, into: &out)
            out.append(contentsOf: #","sig":"#.utf8)
            JSONWriter.writeString(signature, into: &out)
        }
    }

    /// Checks both payloads of a push against their limits at intake. Sizes do not depend on the delivery: ids and
    /// signatures have fixed lengths, so the template decides for every recipient.
    public static func checkSize(_ template: PushTemplate) throws(HeraldError) {
        let (apnsBytes, fcmDataBytes) = (template.apnsBytes, template.fcmDataBytes)
        let field = template.content.data.isEmpty ? "body" : "data"
        if apnsBytes > maxAPNsBytes {
            throw .ruleViolated(
                "payload_too_large",
                "The rendered APNs payload is \(apnsBytes) bytes, \(apnsBytes - maxAPNsBytes) over the \(maxAPNsBytes)-byte limit.",
                field: field)
        }
        if fcmDataBytes > maxFCMDataBytes {
            throw .ruleViolated(
                "payload_too_large",
                "The rendered FCM data is \(fcmDataBytes) bytes, \(fcmDataBytes - maxFCMDataBytes) over the \(maxFCMDataBytes)-byte limit.",
                field: field)
        }
    }
}

/// One push's payloads rendered once for all its deliveries. A delivery's payloads differ from another's only in its
/// id and its signature, both of fixed length and written unescaped (a lowercase UUID, 43 base64url characters), and
/// `deliveryId` is a key the partner's data cannot use (PushRules.reservedDataKeys): so a delivery is the template's
/// bytes with its id written in place, signed over the canonical bytes with the same id in place, the signature
/// written last. A template whose bytes do not have that shape (a signer whose signatures are not 43 characters)
/// renders each delivery whole.
public struct PushTemplate: Sendable {
    let content: PushContent
    let signer: any PayloadSigner
    let apns: [UInt8]
    let fcm: [UInt8]
    let canonical: [UInt8]
    /// Where each holds the delivery id's 36 characters and (apns, fcm) the signature's 43.
    struct Offsets {
        let apnsID: Int, apnsSignature: Int, fcmID: Int, fcmSignature: Int, canonicalID: Int
    }
    /// Nil: every delivery is rendered whole.
    let offsets: Offsets?
    /// The sizes of every delivery's payloads.
    public let apnsBytes: Int
    public let fcmDataBytes: Int

    static let idLength = UUIDText.count
    static let signatureLength = 43
    static let placeholderID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    public init(_ content: PushContent, signer: any PayloadSigner) {
        var canonical: [UInt8] = []
        let envelope = PushPayload.Envelope(content, deliveryID: Self.placeholderID, keyID: signer.keyID) {
            canonical = $0
            return String(repeating: "A", count: Self.signatureLength)
        }
        let apns = envelope.apnsBody()
        let fcm = envelope.fcmMessage()
        self.content = content
        self.signer = signer
        self.apns = apns
        self.fcm = fcm
        self.canonical = canonical
        apnsBytes = apns.count
        fcmDataBytes = envelope.fcmDataBytes
        // Each payload ends with the signature: `"sig":"…"}` (APNs) and `"sig":"…"}}` (FCM, inside `data`).
        if let apnsID = Self.idOffset(in: apns), let fcmID = Self.idOffset(in: fcm),
           let canonicalID = Self.idOffset(in: canonical),
           let apnsSignature = Self.signatureOffset(in: apns, closing: 1),
           let fcmSignature = Self.signatureOffset(in: fcm, closing: 2) {
            offsets = Offsets(apnsID: apnsID, apnsSignature: apnsSignature, fcmID: fcmID, fcmSignature: fcmSignature,
                              canonicalID: canonicalID)
        } else {
            offsets = nil
        }
    }

    /// Both payloads of delivery `deliveryID`.
    public func render(deliveryID: UUID) -> RenderedPush {
        guard let offsets, let signature = signature(deliveryID, at: offsets.canonicalID) else {
            return PushPayload.renderWhole(content, deliveryID: deliveryID, signer: signer)
        }
        return RenderedPush(apns: payload(.apns, deliveryID, signature, offsets),
                            fcm: payload(.fcm, deliveryID, signature, offsets), fcmDataBytes: fcmDataBytes)
    }

    /// The payload one device of `service` needs.
    public func render(deliveryID: UUID, for service: PushService) -> [UInt8] {
        guard let offsets, let signature = signature(deliveryID, at: offsets.canonicalID) else {
            let whole = PushPayload.renderWhole(content, deliveryID: deliveryID, signer: signer)
            return service == .apns ? whole.apns : whole.fcm
        }
        return payload(service, deliveryID, signature, offsets)
    }

    /// The signature of delivery `deliveryID`'s canonical bytes (its id at `idOffset`); nil when the signer's is not
    /// 43 characters.
    private func signature(_ deliveryID: UUID, at idOffset: Int) -> [UInt8]? {
        var bytes = canonical
        bytes.withUnsafeMutableBufferPointer { UUIDText.write(deliveryID, into: $0, at: idOffset) }
        let signature = Array(signer.signature(for: bytes).utf8)
        return signature.count == Self.signatureLength ? signature : nil
    }

    /// `service`'s template bytes with the delivery's id and signature written in place.
    private func payload(_ service: PushService, _ deliveryID: UUID, _ signature: [UInt8], _ offsets: Offsets) -> [UInt8] {
        var bytes = service == .apns ? apns : fcm
        let signatureOffset = service == .apns ? offsets.apnsSignature : offsets.fcmSignature
        bytes.withUnsafeMutableBufferPointer {
            UUIDText.write(deliveryID, into: $0, at: service == .apns ? offsets.apnsID : offsets.fcmID)
        }
        bytes.replaceSubrange(signatureOffset..<signatureOffset + Self.signatureLength, with: signature)
        return bytes
    }

    /// The start of the id after the one `"deliveryId":"` of `bytes`; nil unless there is exactly one.
    private static func idOffset(in bytes: [UInt8]) -> Int? {
        let key: StaticString = #""deliveryId":""#
        return bytes.withUnsafeBufferPointer { haystack -> Int? in
            let needle = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
            var found: Int?
            var start = 0
            while start + needle.count <= haystack.count {
                if haystack[start] == needle[0], (1..<needle.count).allSatisfy({ haystack[start + $0] == needle[$0] }) {
                    guard found == nil else { return nil }
                    found = start + needle.count
                }
                start += 1
            }
            guard let found, haystack.count - found >= idLength else { return nil }
            return found
        }
    }

    /// The start of the signature in `"sig":"…"` followed by `closing` braces at the end of `bytes`.
    private static func signatureOffset(in bytes: [UInt8], closing: Int) -> Int? {
        let key = Array(#""sig":""#.utf8)
        let offset = bytes.count - closing - 1 - signatureLength
        guard offset - key.count >= 0, bytes[(offset - key.count)..<offset].elementsEqual(key),
              bytes[offset + signatureLength] == UInt8(ascii: "\""),
              bytes[(offset + signatureLength + 1)...].allSatisfy({ $0 == UInt8(ascii: "}") })
        else { return nil }
        return offset
    }
}
