import CGdkPixbuf
import CRsvg

/// Copies a cairo ARGB32 surface into a gdk-pixbuf RGBA image, so every icon goes through one PNG encoder
/// (`PixbufCanvas.encode`). cairo's own encoder is not used: it drops the alpha channel of an opaque image, and
/// Herald's icons are always RGBA.
enum SurfacePixbuf {
    /// The caller unrefs the result.
    static func copy(_ surface: OpaquePointer) throws(IconError) -> OpaquePointer {
        cairo_surface_flush(surface)
        let width = Int(cairo_image_surface_get_width(surface))
        let height = Int(cairo_image_surface_get_height(surface))
        let sourceStride = Int(cairo_image_surface_get_stride(surface))
        guard let source = cairo_image_surface_get_data(surface),
            let pixbuf = gdk_pixbuf_new(GDK_COLORSPACE_RGB, 1, 8, Int32(width), Int32(height))
        else {
            throw .unavailable
        }
        let target = gdk_pixbuf_get_pixels(pixbuf)!
        let targetStride = Int(gdk_pixbuf_get_rowstride(pixbuf))
        for row in 0..<height {
            let pixels = UnsafeRawPointer(source + row * sourceStride).assumingMemoryBound(to: UInt32.self)
            let out = target + row * targetStride
            for column in 0..<width {
                // A native-endian 0xAARRGGBB word, colours premultiplied by alpha.
                let word = pixels[column]
                let alpha = word >> 24
                let at = column * 4
                out[at] = unpremultiply(word >> 16, alpha)
                out[at + 1] = unpremultiply(word >> 8, alpha)
                out[at + 2] = unpremultiply(word, alpha)
                out[at + 3] = UInt8(alpha)
            }
        }
        return pixbuf
    }

    /// The low byte of `channel`, divided by `alpha` (rounded), as cairo's own PNG writer does it.
    private static func unpremultiply(_ channel: UInt32, _ alpha: UInt32) -> UInt8 {
        guard alpha > 0 else {
            return 0
        }
        return UInt8(min(255, ((channel & 0xFF) * 255 + alpha / 2) / alpha))
    }
}
