import CGdkPixbuf
import HeraldCore
import HeraldTestSupport
import Testing

@testable import Icons

/// A push's media re-encoded: the pixels kept, every metadata chunk and segment gone, GIF as the PNG of its first
/// frame, and files cut short, of another kind or over the limits refused before anything is decoded.
@Suite struct MediaTranscoderTests {
    let transcoder = MediaTranscoder(
        limits: IconLimits(
            maxInputBytes: PushMedia.maxSourceBytes, maxSourcePixels: PushMedia.maxSourcePixels,
            maxSourceSide: PushMedia.maxSourceSide))

    /// The chunk types of a PNG, in order.
    static func chunkTypes(_ png: [UInt8]) -> [String] {
        var types: [String] = []
        var index = 8
        while index + 12 <= png.count {
            let length = png[index..<(index + 4)].reduce(0) { $0 << 8 | Int($1) }
            types.append(String(decoding: png[(index + 4)..<(index + 8)], as: UTF8.self))
            index += 12 + length
        }
        return types
    }

    /// The red, green and blue of the pixel at x, y of an image gdk-pixbuf decodes (`loader`: png, jpeg).
    static func rgb(_ bytes: [UInt8], loader type: String, _ x: Int, _ y: Int) throws -> [UInt8] {
        let loader = try #require(gdk_pixbuf_loader_new_with_type(type, nil))
        defer { g_object_unref(loader) }
        let written = bytes.withUnsafeBufferPointer {
            gdk_pixbuf_loader_write(loader, $0.baseAddress, gsize($0.count), nil) != 0
        }
        try #require(written && gdk_pixbuf_loader_close(loader, nil) != 0)
        let pixbuf = try #require(gdk_pixbuf_loader_get_pixbuf(loader))
        let at = y * Int(gdk_pixbuf_get_rowstride(pixbuf)) + x * Int(gdk_pixbuf_get_n_channels(pixbuf))
        let pixels = try #require(gdk_pixbuf_read_pixels(pixbuf))
        return (0..<3).map { pixels[at + $0] }
    }

    /// The markers of a JPEG's segments before its scan (APP1 is 0xE1, COM 0xFE).
    static func segmentMarkers(_ jpeg: [UInt8]) -> [UInt8] {
        var markers: [UInt8] = []
        var index = 2
        while index + 4 <= jpeg.count, jpeg[index] == 0xFF, jpeg[index + 1] != 0xDA {
            markers.append(jpeg[index + 1])
            index += 2 + (Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3]))
        }
        return markers
    }

    @Test func pngTextAndEXIFChunksAreDropped() throws {
        #expect(Self.chunkTypes(MediaSamples.pngWithText).contains("tEXt"))
        let media = try transcoder.transcode(MediaSamples.pngWithText)
        #expect(media.contentType == "image/png")
        #expect(media.width == 40 && media.height == 20)
        #expect(!MediaSamples.contains(media.bytes, MediaSamples.marker))
        let types = Self.chunkTypes(media.bytes)
        #expect(types.first == "IHDR" && types.last == "IEND")
        // sBIT (the significant bits of each channel) describes the pixels, nothing else.
        #expect(Set(types).isSubset(of: ["IHDR", "sBIT", "IDAT", "IEND"]), "\(types)")
        #expect(try Self.rgb(media.bytes, loader: "png", 20, 10) == [0xE0, 0x30, 0x30])
        #expect(media.sha256Hex.count == 64)
    }

    @Test func jpegEXIFWithGPSAndCommentAreDropped() throws {
        #expect(Self.segmentMarkers(MediaSamples.jpegWithGPS).contains(0xE1))
        let media = try transcoder.transcode(MediaSamples.jpegWithGPS)
        #expect(media.contentType == "image/jpeg")
        #expect(media.width == 32 && media.height == 32)
        #expect(media.bytes.starts(with: [0xFF, 0xD8, 0xFF]))
        #expect(!MediaSamples.contains(media.bytes, MediaSamples.marker))
        #expect(!MediaSamples.contains(media.bytes, Array("Exif".utf8)))
        let markers = Self.segmentMarkers(media.bytes)
        #expect(!markers.contains(0xE1) && !markers.contains(0xFE), "\(markers)")
        // The re-encoded file decodes as a JPEG again.
        #expect(try transcoder.transcode(media.bytes).width == 32)
    }

    @Test func gifBecomesThePNGOfItsFirstFrame() throws {
        let media = try transcoder.transcode(MediaSamples.animatedGIF)
        #expect(media.contentType == "image/png")
        #expect(media.width == 16 && media.height == 12)
        #expect(!MediaSamples.contains(media.bytes, MediaSamples.marker))
        #expect(try Self.rgb(media.bytes, loader: "png", 8, 6) == [255, 0, 0], "the first frame is red")
        let layout = try #require(GIFStructure.layout(MediaSamples.animatedGIF))
        #expect(layout.screen == (16, 12) && layout.firstImage == (16, 12))
        #expect(layout.firstImageEnd < MediaSamples.animatedGIF.count - 100, "the second frame is not decoded")
    }

    @Test(
        "a file cut short, of another kind or empty is invalid",
        arguments: [
            ("png cut", Array(MediaSamples.pngWithText.dropLast(20))),
            ("jpeg cut", Array(MediaSamples.jpegWithGPS.prefix(600))),
            ("gif cut", Array(MediaSamples.animatedGIF.dropLast(1))),
            ("gif without image", Array(MediaSamples.animatedGIF.prefix(13)) + [0x3B]),
            ("text", Array("<html>not an image</html>".utf8)),
            ("svg", Array(#"<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>"#.utf8)),
        ] as [(String, [UInt8])])
    func invalid(_ name: String, _ bytes: [UInt8]) {
        do {
            _ = try transcoder.transcode(bytes)
            Issue.record("\(name) was accepted")
        } catch {
            #expect(error.code == .invalidIcon, "\(name): \(error)")
        }
    }

    @Test func sizesOverTheLimitsAreRefusedBeforeDecoding() {
        var huge = MediaSamples.animatedGIF
        // The logical screen: 10000 x 10000, over 4096 x 4096 pixels in all.
        huge[6] = 0x10
        huge[7] = 0x27
        huge[8] = 0x10
        huge[9] = 0x27
        #expect(throws: IconError.sourceTooLarge(transcoder.limits)) { try transcoder.transcode(huge) }
        let png = TestImages.pngClaiming(width: 5_000, height: 5_000)
        #expect(throws: IconError.sourceTooLarge(transcoder.limits)) { try transcoder.transcode(png) }
        let small = MediaTranscoder(limits: IconLimits(maxInputBytes: 100))
        #expect(throws: IconError.tooManyBytes(limit: 100)) { try small.transcode(MediaSamples.pngWithText) }
    }
}
