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
    /// The partner's collapse key, for the app to replace the notification it shows by.
    public let collapseKey: String?
    /// `aps.category` and FCM data `category`: one of the host build's categories, from the push.
    public let category: String?
    /// The signed URL of the push's media (PushMedia), for the app's notification service extension to download and
    /// attach; nil without media.
    public let attachmentURL: String?

    /// `variant`: one of the push's `localized` texts in place of its title and body, under the same prefix.
    public init(
        request: PushRequest, partner: PartnerProfile, publicURL: String?, attachmentURL: String? = nil,
        variant: LocalizedText? = nil
    ) {
        title = "[\(partner.displayName)] \(variant?.title ?? request.title)"
        body = variant?.body ?? request.body
        miniAppID = partner.miniAppID
        deepLink = request.deepLink
        senderName = partner.displayName
        imageURL = partner.iconPath.flatMap { path in publicURL.map { $0 + path } }
        data = request.data
        sound = partner.sound
        interruptionLevel = request.interruptionLevel
        collapseKey = request.collapseKey
        category = request.category
        self.attachmentURL = attachmentURL
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
    static func renderWhole(
        _ content: PushContent, deliveryID: UUID, recipient userID: String, expiresAt: Int,
        signer: any PayloadSigner
    ) -> RenderedPush {
        let fields = Fields(content, deliveryID: deliveryID, expiresAt: expiresAt)
        let sign = { (message: [UInt8]) in signer.signature(for: message) }
        let apns = Envelope(fields, .apns, recipient: userID, keyID: signer.keyID, sign: sign)
        let fcm = Envelope(fields, .fcm, recipient: userID, keyID: signer.keyID, sign: sign)
        return RenderedPush(apns: apns.payload, fcm: fcm.payload, fcmDataBytes: fcm.fcmDataBytes)
    }

    /// The members of one delivery both payloads share.
    fileprivate struct Fields {
        let content: PushContent
        /// The keys beside `aps` (inside FCM's `data`), partner data included.
        let custom: [(key: String, value: String)]
        /// `exp`: unix seconds, ten digits.
        let exp: String

        init(_ content: PushContent, deliveryID: UUID, expiresAt: Int) {
            var custom: [(key: String, value: String)] = [("channel", "mini-app"), ("miniAppId", content.miniAppID)]
            if let link = content.deepLink { custom.append(("deepLink", link)) }
            custom.append(("deliveryId", UUIDText.string(deliveryID)))
            if let key = content.collapseKey { custom.append(("collapseKey", key)) }
            custom.append(("senderName", content.senderName))
            if let image = content.imageURL { custom.append(("imageUrl", image)) }
            // Beside `aps` on APNs (whose `mutable-content` already runs the extension), a data key on FCM; both
            // signatures cover it, and the size checks count it, as every custom key.
            if let attachment = content.attachmentURL { custom.append(("attachmentUrl", attachment)) }
            for entry in content.data { custom.append((entry.key, entry.value)) }
            self.content = content
            self.custom = custom
            self.exp = String(expiresAt)
        }

        /// What v2 signs of `service`'s payload (SignedEnvelope+V2.swift), collected as rendered, not parsed.
        func v2Leaves(_ service: PushService) -> [SignedEnvelope.Leaf] {
            var leaves: [SignedEnvelope.Leaf] = []
            if service == .apns {
                leaves.append(.init(["aps", "alert", "title"], content.title))
                leaves.append(.init(["aps", "alert", "body"], content.body))
                leaves.append(.init(["aps", "mutable-content"], "1"))
                leaves.append(.init(["aps", "thread-id"], content.miniAppID))
                if let category = content.category { leaves.append(.init(["aps", "category"], category)) }
                if let sound = content.sound.name { leaves.append(.init(["aps", "sound"], sound)) }
                if content.interruptionLevel != .default {
                    leaves.append(.init(["aps", "interruption-level"], content.interruptionLevel.rawValue))
                }
            } else {
                leaves.append(.init(["title"], content.title))
                leaves.append(.init(["body"], content.body))
                if let category = content.category { leaves.append(.init(["category"], category)) }
            }
            for member in custom { leaves.append(.init([member.key], member.value)) }
            leaves.append(.init(["isGroup"], "true"))
            leaves.append(.init(["exp"], exp))
            return leaves
        }

        /// What v1 signs (SignedEnvelope.swift): title, body and every key beside `aps` but `kid` and `sig`, so
        /// `exp` and `sig2` too, as field builds collect them: on FCM every data key, the category included; on
        /// APNs the category sits in `aps`, which v1 leaves out.
        func v1Fields(_ service: PushService, sig2: String) -> [(key: String, value: String)] {
            var fields: [(key: String, value: String)] =
                [("title", content.title), ("body", content.body), ("isGroup", "true")] + custom
            if service == .fcm, let category = content.category { fields.append(("category", category)) }
            return fields + [("exp", exp), ("sig2", sig2)]
        }
    }

    /// One service's payload of one delivery and its two signatures: `sig2` first, then `sig` over it.
    fileprivate struct Envelope {
        let fields: Fields
        let service: PushService
        let keyID: String
        let signature: String
        let signature2: String
        /// What `sig2` and `sig` were computed over (the template finds its offsets in them).
        let v2Lines: [UInt8]
        let v1Canonical: [UInt8]

        init(
            _ fields: Fields, _ service: PushService, recipient userID: String, keyID: String,
            sign: ([UInt8]) -> String
        ) {
            let lines = SignedEnvelope.v2Lines(fields.v2Leaves(service))
            let signature2 = sign(SignedEnvelope.v2Header(recipient: userID) + lines)
            let canonical = SignedEnvelope.canonicalBytes(fields.v1Fields(service, sig2: signature2))
            self.fields = fields
            self.service = service
            self.keyID = keyID
            self.signature2 = signature2
            self.signature = sign(canonical)
            self.v2Lines = lines
            self.v1Canonical = canonical
        }

        /// The bytes sent: the APNs body or the FCM message.
        var payload: [UInt8] { service == .apns ? apnsBody() : fcmMessage() }

        private var content: PushContent { fields.content }

        /// `aps` carries what iOS itself acts on: the alert, the service extension flag, `thread-id` (the
        /// mini-app, so its pushes stack together), the push's category (the action buttons the host build
        /// registered for it), the partner's sound (none when silent) and the interruption level when it is not
        /// APNs' default. `sig2` covers them, `sig` only what the app reads
        /// (docs/security-delivery.md, "The signed envelope"). Written as JSONWriter writes the same object,
        /// member by member: building the value first was most of rendering a push.
        func apnsBody() -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(480 + content.title.utf8.count + content.body.utf8.count)
            out.append(contentsOf: #"{"aps":{"alert":{"title":"#.utf8)
            JSONWriter.writeString(content.title, into: &out)
            out.append(contentsOf: #","body":"#.utf8)
            JSONWriter.writeString(content.body, into: &out)
            out.append(contentsOf: #"},"mutable-content":1,"thread-id":"#.utf8)
            JSONWriter.writeString(content.miniAppID, into: &out)
            if let category = content.category {
                out.append(contentsOf: #","category":"#.utf8)
                JSONWriter.writeString(category, into: &out)
            }
            if let sound = content.sound.name {
                out.append(contentsOf: #","sound":"#.utf8)
                JSONWriter.writeString(sound, into: &out)
            }
            if content.interruptionLevel != .default {
                out.append(contentsOf: #","interruption-level":"#.utf8)
                JSONWriter.writeString(content.interruptionLevel.rawValue, into: &out)
            }
            out.append(UInt8(ascii: "}"))
            writeMembers(fields.custom, into: &out)
            out.append(contentsOf: #","isGroup":true"#.utf8)
            writeSignatures(into: &out)
            out.append(UInt8(ascii: "}"))
            return out
        }

        /// The FCM v1 message: `data` holds the keys beside `aps`, plus the alert and the category, as strings. `aps`'s
        /// other keys stay on APNs: an Android host groups by `miniAppId` and takes sound and importance from its
        /// notification channels, but draws the category's actions itself.
        func fcmMessage() -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(480 + content.title.utf8.count + content.body.utf8.count)
            out.append(contentsOf: #"{"android":{"priority":"HIGH"},"data":{"title":"#.utf8)
            JSONWriter.writeString(content.title, into: &out)
            out.append(contentsOf: #","body":"#.utf8)
            JSONWriter.writeString(content.body, into: &out)
            if let category = content.category {
                out.append(contentsOf: #","category":"#.utf8)
                JSONWriter.writeString(category, into: &out)
            }
            writeMembers(fields.custom, into: &out)
            out.append(contentsOf: #","isGroup":"true""#.utf8)
            writeSignatures(into: &out)
            out.append(contentsOf: "}}".utf8)
            return out
        }

        /// The bytes of `data`'s keys and values, as FCM counts them against its limit.
        var fcmDataBytes: Int {
            var fixed =
                "title".utf8.count + "body".utf8.count + "isGroup".utf8.count + "true".utf8.count
                + "exp".utf8.count + "kid".utf8.count + "sig2".utf8.count + "sig".utf8.count
            if let category = content.category { fixed += "category".utf8.count + category.utf8.count }
            return fields.custom.reduce(
                fixed + content.title.utf8.count + content.body.utf8.count
                    + fields.exp.utf8.count + keyID.utf8.count + signature2.utf8.count
                    + signature.utf8.count
            ) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        }

        private func writeMembers(_ members: [(key: String, value: String)], into out: inout [UInt8]) {
            for member in members {
                out.append(UInt8(ascii: ","))
                JSONWriter.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                JSONWriter.writeString(member.value, into: &out)
            }
        }

        /// `,"exp":…,"kid":…,"sig2":…,"sig":…`: the signatures last, where PushTemplate finds them.
        private func writeSignatures(into out: inout [UInt8]) {
            out.append(contentsOf: #","exp":"#.utf8)
            JSONWriter.writeString(fields.exp, into: &out)
            out.append(contentsOf: #","kid":"#.utf8)
            JSONWriter.writeString(keyID, into: &out)
            out.append(contentsOf: #","sig2":"#.utf8)
            JSONWriter.writeString(signature2, into: &out)
            out.append(contentsOf: #","sig":"#.utf8)
            JSONWriter.writeString(signature, into: &out)
        }
    }

    /// Checks both payloads of a push against their limits at intake. Sizes do not depend on the delivery: ids and
    /// signatures have fixed lengths, so the template decides for every recipient. `variant`: the `localized` tag
    /// the template was rendered in, which the error's field names (`localized.de.body`).
    public static func checkSize(_ template: PushTemplate, variant: String? = nil) throws(HeraldError) {
        let (apnsBytes, fcmDataBytes) = (template.apnsBytes, template.fcmDataBytes)
        let field = template.content.data.isEmpty ? (variant.map { "localized.\($0).body" } ?? "body") : "data"
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

/// One push's payloads rendered once for all its deliveries. A delivery's payload differs from another's only in its
/// id, `sig2` and `sig`, all of fixed length and written unescaped (a lowercase UUID, 43 base64url characters each),
/// and `deliveryId` is a key the partner's data cannot use (PushRules.reservedDataKeys). So a delivery is the
/// template's bytes with its id written in place; `sig2` is signed over the recipient's header and the template's
/// v2 lines with the id in place, `sig` over the v1 canonical bytes with the id and `sig2` in place; both are
/// written last. A template whose bytes do not have that shape (a signer whose signatures are not 43 characters)
/// renders each delivery whole.
public struct PushTemplate: Sendable {
    let content: PushContent
    let signer: any PayloadSigner
    /// `exp`: the end of the push's TTL, unix seconds.
    let expiresAt: Int
    let apns: Part
    let fcm: Part
    /// The sizes of every delivery's payloads.
    public let apnsBytes: Int
    public let fcmDataBytes: Int

    /// One service's bytes with a placeholder id and signatures, and where each is written.
    struct Part: Sendable {
        let payload: [UInt8]
        let v2Lines: [UInt8]
        let v1Canonical: [UInt8]
        /// Nil: every delivery is rendered whole.
        let offsets: Offsets?
    }

    /// Where each holds the delivery id's 36 characters and the signatures' 43.
    struct Offsets: Sendable {
        let payloadID: Int, payloadSignature2: Int, payloadSignature: Int
        let linesID: Int, canonicalID: Int, canonicalSignature2: Int
    }

    static let idLength = UUIDText.count
    static let signatureLength = 43
    static let placeholderID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// `expiresAt`: when the push's TTL ends (`exp`, whole seconds).
    public init(_ content: PushContent, expiresAt: Date, signer: any PayloadSigner) {
        let exp = Int(expiresAt.timeIntervalSince1970.rounded(.down))
        let fields = PushPayload.Fields(content, deliveryID: Self.placeholderID, expiresAt: exp)
        let placeholder = String(repeating: "A", count: Self.signatureLength)
        let apns = PushPayload.Envelope(fields, .apns, recipient: "", keyID: signer.keyID) { _ in placeholder }
        let fcm = PushPayload.Envelope(fields, .fcm, recipient: "", keyID: signer.keyID) { _ in placeholder }
        self.content = content
        self.signer = signer
        self.expiresAt = exp
        self.apns = Self.part(apns, closing: 1)
        self.fcm = Self.part(fcm, closing: 2)
        apnsBytes = self.apns.payload.count
        fcmDataBytes = fcm.fcmDataBytes
    }

    /// Both payloads of delivery `deliveryID` to `userID`.
    public func render(deliveryID: UUID, recipient userID: String) -> RenderedPush {
        RenderedPush(
            apns: render(deliveryID: deliveryID, recipient: userID, for: .apns),
            fcm: render(deliveryID: deliveryID, recipient: userID, for: .fcm), fcmDataBytes: fcmDataBytes)
    }

    /// The payload one device of `service`, of user `userID`, needs.
    public func render(deliveryID: UUID, recipient userID: String, for service: PushService) -> [UInt8] {
        let part = service == .apns ? apns : fcm
        guard let offsets = part.offsets else { return whole(deliveryID, userID, service) }
        var lines = part.v2Lines
        lines.withUnsafeMutableBufferPointer { UUIDText.write(deliveryID, into: $0, at: offsets.linesID) }
        let signature2 = Array(signer.signature(for: SignedEnvelope.v2Header(recipient: userID) + lines).utf8)
        guard signature2.count == Self.signatureLength else { return whole(deliveryID, userID, service) }
        var canonical = part.v1Canonical
        canonical.withUnsafeMutableBufferPointer { UUIDText.write(deliveryID, into: $0, at: offsets.canonicalID) }
        Self.place(signature2, in: &canonical, at: offsets.canonicalSignature2)
        let signature = Array(signer.signature(for: canonical).utf8)
        guard signature.count == Self.signatureLength else { return whole(deliveryID, userID, service) }
        var bytes = part.payload
        bytes.withUnsafeMutableBufferPointer { UUIDText.write(deliveryID, into: $0, at: offsets.payloadID) }
        Self.place(signature2, in: &bytes, at: offsets.payloadSignature2)
        Self.place(signature, in: &bytes, at: offsets.payloadSignature)
        return bytes
    }

    private func whole(_ deliveryID: UUID, _ userID: String, _ service: PushService) -> [UInt8] {
        let rendered = PushPayload.renderWhole(
            content, deliveryID: deliveryID, recipient: userID,
            expiresAt: expiresAt, signer: signer)
        return service == .apns ? rendered.apns : rendered.fcm
    }

    private static func place(_ signature: [UInt8], in bytes: inout [UInt8], at offset: Int) {
        bytes.replaceSubrange(offset..<offset + signatureLength, with: signature)
    }

    /// An envelope rendered with placeholders, and its offsets when every one was found where expected.
    private static func part(_ envelope: PushPayload.Envelope, closing: Int) -> Part {
        let payload = envelope.payload
        let offsets: Offsets?
        if let payloadID = uniqueOffset(after: #""deliveryId":""#, in: payload, length: idLength),
            let linesID = uniqueOffset(after: #"["deliveryId",""#, in: envelope.v2Lines, length: idLength),
            let canonicalID = uniqueOffset(after: #""deliveryId":""#, in: envelope.v1Canonical, length: idLength),
            let canonicalSignature2 = uniqueOffset(
                after: #""sig2":""#, in: envelope.v1Canonical,
                length: signatureLength),
            let signature = signatureOffset(in: payload, closing: closing),
            let signature2 = signature2Offset(in: payload, signature: signature)
        {
            offsets = Offsets(
                payloadID: payloadID, payloadSignature2: signature2, payloadSignature: signature,
                linesID: linesID, canonicalID: canonicalID, canonicalSignature2: canonicalSignature2)
        } else {
            offsets = nil
        }
        return Part(payload: payload, v2Lines: envelope.v2Lines, v1Canonical: envelope.v1Canonical, offsets: offsets)
    }

    /// The start of the `length` bytes after the one `key` in `bytes`; nil unless there is exactly one.
    private static func uniqueOffset(after key: String, in bytes: [UInt8], length: Int) -> Int? {
        let needle = Array(key.utf8)
        return bytes.withUnsafeBufferPointer { haystack -> Int? in
            var found: Int?
            var start = 0
            while start + needle.count <= haystack.count {
                if haystack[start] == needle[0], (1..<needle.count).allSatisfy({ haystack[start + $0] == needle[$0] }) {
                    guard found == nil else { return nil }
                    found = start + needle.count
                }
                start += 1
            }
            guard let found, haystack.count - found >= length else { return nil }
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

    /// The start of `sig2`'s value in `"sig2":"…","sig":"` just before `sig`'s at `signature`.
    private static func signature2Offset(in bytes: [UInt8], signature: Int) -> Int? {
        let between = Array(#"","sig":""#.utf8)
        let key = Array(#""sig2":""#.utf8)
        let offset = signature - between.count - signatureLength
        guard offset - key.count >= 0, bytes[(offset - key.count)..<offset].elementsEqual(key),
            bytes[(offset + signatureLength)..<signature].elementsEqual(between)
        else { return nil }
        return offset
    }
}
