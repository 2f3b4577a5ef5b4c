import Testing

@testable import Icons

@Suite struct IconLimitsTests {
    let rasterizer = IconRasterizer()

    @Test func emptyIsInvalid() {
        #expect(throws: IconError.empty) { try rasterizer.render([]) }
        #expect(IconError.empty.code == .invalidIcon && IconError.empty.status == 422)
    }

    @Test func garbageIsInvalid() throws {
        let garbage: [UInt8] = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        let error = try #require(throws: IconError.self) { try rasterizer.render(garbage) }
        #expect(error.code == .invalidIcon && error.message == "The icon is not a PNG, JPEG or SVG image.")
        #expect(throws: IconError.self) { try rasterizer.render(Array("hello".utf8), declaredType: "text/plain") }
    }

    @Test func declaredTypeOnlyWordsTheMessage() throws {
        let error = try #require(throws: IconError.self) {
            try rasterizer.render(Array("GIF89a....".utf8), declaredType: "image/png; charset=x")
        }
        #expect(error.message == "The icon was sent as image/png but is not a PNG, JPEG or SVG image.")
        let odd = try #require(throws: IconError.self) {
            try rasterizer.render(Array("GIF89a....".utf8), declaredType: "<script>")
        }
        #expect(!odd.message.contains("script"))
        // A PNG declared as SVG is still a PNG.
        let png = TestImages.solid(width: 4, height: 4, rgba: 0xFFFF_FFFF, format: "png")
        #expect(try rasterizer.render(png, sizes: [16], declaredType: "image/svg+xml").count == 1)
    }

    @Test func overTheByteLimitIsRefusedFirst() {
        var big = TestImages.solid(width: 4, height: 4, rgba: 0xFFFF_FFFF, format: "png")
        big += [UInt8](repeating: 0, count: 1_048_577 - big.count)
        #expect(throws: IconError.tooManyBytes(limit: 1_048_576)) { try rasterizer.render(big) }
        let tooMany = IconError.tooManyBytes(limit: 1)
        #expect(tooMany.code == .iconTooLarge && tooMany.status == 413)
        let exactly = Array(repeating: UInt8(ascii: " "), count: 1_048_576)
        #expect(throws: IconError.unrecognised(declaredType: nil)) { try rasterizer.render(exactly) }
    }

    /// Decoding 30,000 x 30,000 RGBA would need 3.6 GB; the header alone must be enough to refuse it.
    @Test func pngHeaderOverThePixelLimitIsRefusedBeforeDecoding() throws {
        let limits = rasterizer.limits
        #expect(throws: IconError.sourceTooLarge(limits)) {
            try rasterizer.render(TestImages.pngClaiming(width: 30_000, height: 30_000))
        }
        #expect(throws: IconError.sourceTooLarge(limits)) {
            try rasterizer.render(TestImages.pngClaiming(width: 10_001, height: 1))
        }
        #expect(throws: IconError.sourceTooLarge(limits)) {
            try rasterizer.render(TestImages.pngClaiming(width: 6_000, height: 5_000))
        }
        // Within the limits, the same short file is merely broken (its rows stay blank, never heap garbage).
        let small = TestImages.pngClaiming(width: 3, height: 2)
        if let icons = try? rasterizer.render(small, sizes: [4]) {
            #expect(try DecodedPNG(icons[0].png).rgba.allSatisfy { $0 == 0 })
        }
    }

    @Test func jpegHeaderOverThePixelLimitIsRefusedBeforeDecoding() {
        let jpeg = TestImages.solid(width: 16, height: 16, rgba: 0x8080_80FF, format: "jpeg")
        #expect(throws: IconError.sourceTooLarge(rasterizer.limits)) {
            try rasterizer.render(TestImages.jpeg(jpeg, claiming: 30_000, 30_000))
        }
    }

    @Test func limitsAreConfigurable() {
        let strict = IconRasterizer(limits: IconLimits(maxInputBytes: 100, maxSourcePixels: 100, maxSourceSide: 20))
        let png = TestImages.solid(width: 11, height: 10, rgba: 0xFFFF_FFFF, format: "png")
        #expect(throws: IconError.sourceTooLarge(strict.limits)) { try strict.render(png) }
        let padded = png + [UInt8](repeating: 0, count: 100)
        #expect(throws: IconError.tooManyBytes(limit: 100)) { try strict.render(padded) }
        #expect(IconLimits(timeBudget: .zero).problem != nil)
        #expect(IconLimits(maxConcurrentRenders: 0).problem != nil)
        #expect(IconLimits().problem == nil)
    }

    /// While every slot is taken, a render waits out its time budget and answers 503. The budget is long enough
    /// that the renders around it finish in it on a busy machine (the whole suite runs at once).
    @Test func busySlotsAnswerUnavailable() throws {
        let limited = IconRasterizer(limits: IconLimits(timeBudget: .seconds(3), maxConcurrentRenders: 1))
        let svg = SVGIconTests.svg(#"width="1" height="1""#)
        #expect(try limited.render(svg).count == 3)
        limited.slots.permits.wait()
        #expect(throws: IconError.unavailable) { try limited.render(svg) }
        #expect(IconError.unavailable.heraldError.status == 503 && IconError.unavailable.heraldError.retryAfter == 1)
        limited.slots.permits.signal()
        #expect(try limited.render(svg).count == 3)
    }

    @Test func cancelledDecodeStops() {
        let cancellation = Cancellation()
        cancellation.cancel()
        let png = TestImages.solid(width: 4, height: 4, rgba: 0xFFFF_FFFF, format: "png")
        #expect(throws: IconError.tooSlow) {
            try RasterRenderer.render(png, as: .png, sizes: [8], limits: IconLimits(), cancellation: cancellation)
        }
    }

    @Test func errorsMapToTheAPI() {
        let error = IconError.undecodable(.svg).heraldError
        #expect(error.status == 422 && error.code == "invalid_icon" && error.retryAfter == nil)
        #expect(IconError.tooManyBytes(limit: 9).heraldError.code == "icon_too_large")
    }
}
