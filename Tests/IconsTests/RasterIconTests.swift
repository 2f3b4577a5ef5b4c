import Testing

@testable import Icons

@Suite struct RasterIconTests {
    let rasterizer = IconRasterizer()

    @Test func pngBecomesThreeSquareRGBAPNGs() throws {
        let source = TestImages.solid(width: 300, height: 150, rgba: 0xFF00_00FF, format: "png")
        let icons = try rasterizer.render(source)
        #expect(icons.map(\.size) == [64, 128, 256])
        for icon in icons {
            let png = try DecodedPNG(icon.png)
            #expect(png.width == icon.size && png.height == icon.size)
            #expect(png.bitDepth == 8 && png.colourType == 6, "8-bit RGBA")
            // 2:1 source: a quarter of the height transparent above and below, opaque red in the middle.
            #expect(png.transparent(rows: 0..<(icon.size / 4 - 1)))
            #expect(png.transparent(rows: (icon.size * 3 / 4 + 1)..<icon.size))
            let centre = png.pixel(icon.size / 2, icon.size / 2)
            #expect(centre.r == 255 && centre.g == 0 && centre.b == 0 && centre.a == 255)
            #expect(icon.sha256Hex.count == 64)
        }
    }

    @Test func jpegFillsTheSquareOpaque() throws {
        let source = TestImages.solid(width: 120, height: 120, rgba: 0x20C0_40FF, format: "jpeg")
        let icons = try rasterizer.render(source, sizes: [64, 256])
        #expect(icons.map(\.size) == [64, 256])
        for icon in icons {
            let png = try DecodedPNG(icon.png)
            #expect(png.width == icon.size && png.colourType == 6)
            for (x, y) in [(0, 0), (icon.size - 1, icon.size - 1), (icon.size / 2, icon.size / 2)] {
                let pixel = png.pixel(x, y)
                #expect(pixel.a == 255)
                #expect(abs(Int(pixel.g) - 0xC0) < 12 && abs(Int(pixel.r) - 0x20) < 12, "\(pixel)")
            }
        }
    }

    @Test func smallSourcesAreScaledUp() throws {
        let icons = try rasterizer.render(TestImages.solid(width: 8, height: 8, rgba: 0x0000_FFFF, format: "png"))
        let png = try DecodedPNG(icons[2].png)
        #expect(png.width == 256 && png.pixel(0, 0) == (0, 0, 255, 255))
    }

    @Test func sameInputSameBytes() throws {
        let source = TestImages.solid(width: 40, height: 30, rgba: 0x1234_56FF, format: "png")
        #expect(try rasterizer.render(source) == rasterizer.render(source))
    }

    @Test func truncatedPNGIsInvalid() {
        let source = TestImages.solid(width: 200, height: 200, rgba: 0x00FF_0080, format: "png")
        for cut in [source.count / 2, source.count - 1, 40, 9] {
            #expect(throws: IconError.undecodable(.png)) { try rasterizer.render(Array(source.prefix(cut))) }
        }
    }

    @Test func truncatedJPEGIsInvalid() {
        let source = TestImages.solid(width: 200, height: 200, rgba: 0x00FF_00FF, format: "jpeg")
        for cut in [source.count / 2, 200, 4] {
            #expect(throws: IconError.undecodable(.jpeg)) { try rasterizer.render(Array(source.prefix(cut))) }
        }
    }

    @Test func pngWithAFlippedBitIsInvalid() {
        var source = TestImages.solid(width: 50, height: 50, rgba: 0x00FF_00FF, format: "png")
        source[20] ^= 0x01  // inside IHDR: its CRC no longer matches
        #expect(throws: IconError.self) { try rasterizer.render(source) }
    }
}
