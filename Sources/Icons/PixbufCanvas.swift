import CGdkPixbuf

/// Puts a decoded image on a transparent square and encodes it as PNG, with gdk-pixbuf.
enum PixbufCanvas {
    /// `source` scaled to fit a `side` x `side` RGBA canvas, centred, as a PNG file.
    static func squarePNG(of source: OpaquePointer, side: Int) throws(IconError) -> [UInt8] {
        guard let canvas = gdk_pixbuf_new(GDK_COLORSPACE_RGB, 1, 8, Int32(side), Int32(side)) else {
            throw .unavailable
        }
        defer { g_object_unref(UnsafeMutableRawPointer(canvas)) }
        gdk_pixbuf_fill(canvas, 0)

        let sourceWidth = Double(gdk_pixbuf_get_width(source))
        let sourceHeight = Double(gdk_pixbuf_get_height(source))
        let box = SquareFit(width: sourceWidth, height: sourceHeight, side: side).pixels
        // Scales straight into the box on the canvas (no intermediate image); bilinear averages every source
        // pixel when shrinking, and copes with a source with or without alpha.
        gdk_pixbuf_scale(
            source, canvas, Int32(box.x), Int32(box.y), Int32(box.width), Int32(box.height),
            Double(box.x), Double(box.y),
            Double(box.width) / sourceWidth, Double(box.height) / sourceHeight,
            GDK_INTERP_BILINEAR)
        return try encode(canvas)
    }

    static func encode(_ pixbuf: OpaquePointer) throws(IconError) -> [UInt8] {
        var buffer: UnsafeMutablePointer<gchar>?
        var length: gsize = 0
        var error: UnsafeMutablePointer<GError>?
        let saved = gdk_pixbuf_save_to_bufferv(pixbuf, &buffer, &length, "png", nil, nil, &error) != 0
        let failed = GLibErrors.discard(&error)
        defer { g_free(buffer) }
        guard saved, !failed, let buffer else {
            throw .unavailable
        }
        return Array(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
    }
}
