import CGdkPixbuf

#if canImport(Glibc)
    import Glibc
#endif

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

    /// `pixbuf` as a file of `type` (a gdk-pixbuf saver: `png`, `jpeg`), with a JPEG's `quality` (0-100). Only the
    /// options given are written: no text chunks, EXIF or ICC profile.
    static func encode(_ pixbuf: OpaquePointer, as type: String = "png", quality: Int? = nil) throws(IconError)
        -> [UInt8]
    {
        var buffer: UnsafeMutablePointer<gchar>?
        var length: gsize = 0
        var error: UnsafeMutablePointer<GError>?
        // NULL-terminated option lists, as gdk_pixbuf_save_to_bufferv takes them.
        var keys: [UnsafeMutablePointer<CChar>?] = quality == nil ? [nil] : [strdup("quality"), nil]
        var values: [UnsafeMutablePointer<CChar>?] = quality.map { [strdup(String($0)), nil] } ?? [nil]
        defer { (keys + values).forEach { free($0) } }
        let saved = gdk_pixbuf_save_to_bufferv(pixbuf, &buffer, &length, type, &keys, &values, &error) != 0
        let failed = GLibErrors.discard(&error)
        defer { g_free(buffer) }
        guard saved, !failed, let buffer else {
            throw .unavailable
        }
        return Array(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
    }
}
