import Testing

@testable import Icons

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct SVGIconTests {
    let rasterizer = IconRasterizer()

    static func svg(_ attributes: String, _ body: String = "") -> [UInt8] {
        Array(#"<svg xmlns="http://www.w3.org/2000/svg" \#(attributes)>\#(body)</svg>"#.utf8)
    }

    @Test func squareSVGBecomesThreePNGs() throws {
        let icons = try rasterizer.render(
            Self.svg(
                #"width="48" height="48""#,
                #"<circle cx="24" cy="24" r="24" fill="blue"/>"#))
        #expect(icons.map(\.size) == [64, 128, 256])
        for icon in icons {
            let png = try DecodedPNG(icon.png)
            #expect(png.width == icon.size && png.height == icon.size && png.bitDepth == 8 && png.colourType == 6)
            #expect(png.pixel(icon.size / 2, icon.size / 2) == (0, 0, 255, 255))
            #expect(png.alpha(0, 0) == 0, "outside the circle")
        }
    }

    @Test func wideSVGIsPaddedAboveAndBelow() throws {
        let icons = try rasterizer.render(
            Self.svg(
                #"width="200" height="100""#,
                #"<rect width="200" height="100" fill="red"/>"#))
        for icon in icons {
            let png = try DecodedPNG(icon.png)
            let quarter = icon.size / 4
            #expect(png.transparent(rows: 0..<quarter), "top padding")
            #expect(png.transparent(rows: (icon.size - quarter)..<icon.size), "bottom padding")
            #expect(png.pixel(icon.size / 2, icon.size / 2) == (255, 0, 0, 255))
            #expect(png.alpha(0, quarter) == 255 && png.alpha(icon.size - 1, icon.size - quarter - 1) == 255)
        }
    }

    /// cairo keeps colours premultiplied by alpha; the PNG must carry them straight.
    @Test func translucentColoursKeepTheirHue() throws {
        let icons = try rasterizer.render(
            Self.svg(
                #"width="4" height="4""#,
                #"<rect width="4" height="4" fill="red" fill-opacity="0.5"/>"#),
            sizes: [8])
        let pixel = try DecodedPNG(icons[0].png).pixel(4, 4)
        #expect(pixel.r == 255 && pixel.g == 0 && pixel.b == 0 && abs(Int(pixel.a) - 128) <= 1, "\(pixel)")
    }

    @Test func viewBoxAloneGivesTheShape() throws {
        let icons = try rasterizer.render(
            Self.svg(#"viewBox="0 0 10 30""#, #"<rect width="10" height="30"/>"#),
            sizes: [60])
        let png = try DecodedPNG(icons[0].png)
        #expect(png.alpha(30, 30) == 255)
        #expect(png.alpha(5, 30) == 0 && png.alpha(55, 30) == 0, "left and right padding")
    }

    @Test func physicalUnitsWork() throws {
        let icons = try rasterizer.render(
            Self.svg(
                #"width="10mm" height="5mm""#,
                #"<rect width="100%" height="100%"/>"#),
            sizes: [64])
        let png = try DecodedPNG(icons[0].png)
        #expect(png.transparent(rows: 0..<15) && png.alpha(32, 32) == 255)
    }

    @Test func noSizeAndNoViewBoxIsInvalid() {
        #expect(throws: IconError.noSize) { try rasterizer.render(Self.svg("", #"<rect width="10" height="10"/>"#)) }
        #expect(throws: IconError.noSize) { try rasterizer.render(Self.svg(#"width="100%" height="100%""#)) }
        #expect(throws: IconError.noSize) { try rasterizer.render(Self.svg(#"viewBox="0 0 0 10""#)) }
    }

    @Test func brokenSVGIsInvalid() {
        for text in [
            #"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect"#,
            #"<svg width="10" height="10"><g></svg>"#,
            "<svg width=\"10\" height=\"10\">\u{0}</svg>",
        ] {
            #expect(throws: IconError.undecodable(.svg), "\(text)") { try rasterizer.render(Array(text.utf8)) }
        }
    }

    /// 20,000 x 20,000 px is only an aspect ratio: drawn at 256 px it must not allocate its own size (1.6 GB).
    @Test func hugeIntrinsicSizeRendersAtTheOutputSize() throws {
        let before = Self.peakResidentBytes()
        let icons = try rasterizer.render(
            Self.svg(
                #"width="20000" height="20000""#,
                #"<rect width="20000" height="20000" fill="rgb(0,170,0)"/>"#))
        #expect(icons.count == 3)
        let png = try DecodedPNG(icons[2].png)
        #expect(png.pixel(128, 128) == (0, 0xAA, 0, 255) && png.alpha(0, 0) == 255)
        #expect(Self.peakResidentBytes() - before < 400 << 20)
    }

    @Test func sameInputSameBytes() throws {
        let source = Self.svg(#"width="30" height="20""#, #"<ellipse cx="15" cy="10" rx="15" ry="10" fill="teal"/>"#)
        let first = try rasterizer.render(source)
        #expect(try first == rasterizer.render(source))
        #expect(Set(first.map(\.sha256Hex)).count == 3)
    }

    @Test func cancelledParseStops() {
        let cancellation = Cancellation()
        cancellation.cancel()
        #expect(throws: IconError.tooSlow) {
            try SVGRenderer.render(Self.svg(#"width="10" height="10""#), sizes: [64], cancellation: cancellation)
        }
    }

    static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss * 1024
    }
}
