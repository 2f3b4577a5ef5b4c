import CGdkPixbuf
import Testing

/// A PNG as the tests inspect it: its IHDR fields straight from the bytes, and its pixels decoded by gdk-pixbuf.
struct DecodedPNG {
    let width: Int
    let height: Int
    let bitDepth: UInt8
    let colourType: UInt8
    /// RGBA, row by row, no padding.
    let rgba: [UInt8]

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    init(_ png: [UInt8]) throws {
        try #require(png.count > 33 && Array(png[0..<8]) == Self.signature, "not a PNG")
        try #require(Array(png[12..<16]) == Array("IHDR".utf8), "the first chunk is not IHDR")
        width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
        height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
        bitDepth = png[24]
        colourType = png[25]

        var error: UnsafeMutablePointer<GError>?
        let loader = gdk_pixbuf_loader_new_with_type("png", &error)!
        defer { g_object_unref(loader) }
        let written = png.withUnsafeBufferPointer {
            gdk_pixbuf_loader_write(loader, $0.baseAddress, gsize($0.count), &error) != 0
        }
        let closed = written && gdk_pixbuf_loader_close(loader, &error) != 0
        if error != nil { g_clear_error(&error) }
        try #require(closed, "gdk-pixbuf cannot decode the PNG")
        let pixbuf = try #require(gdk_pixbuf_loader_get_pixbuf(loader))
        try #require(gdk_pixbuf_get_n_channels(pixbuf) == 4 && gdk_pixbuf_get_bits_per_sample(pixbuf) == 8)
        let rowstride = Int(gdk_pixbuf_get_rowstride(pixbuf))
        let pixels = gdk_pixbuf_read_pixels(pixbuf)!
        var rgba = [UInt8]()
        rgba.reserveCapacity(width * height * 4)
        for row in 0..<height {
            rgba.append(contentsOf: UnsafeBufferPointer(start: pixels + row * rowstride, count: width * 4))
        }
        self.rgba = rgba
    }

    func pixel(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        let at = (y * width + x) * 4
        return (rgba[at], rgba[at + 1], rgba[at + 2], rgba[at + 3])
    }

    func alpha(_ x: Int, _ y: Int) -> UInt8 { pixel(x, y).a }

    /// Whether every pixel of rows `rows` is fully transparent.
    func transparent(rows: Range<Int>) -> Bool {
        rows.allSatisfy { y in (0..<width).allSatisfy { x in alpha(x, y) == 0 } }
    }
}
