import CGdkPixbuf
import CRsvg

/// Renders an SVG with librsvg directly at each output size: the document's own width and height only give the
/// aspect ratio, so a 20,000 x 20,000 px SVG never costs more than the output canvas.
///
/// External resources are never loaded: the handle has no base file, and without one librsvg refuses every
/// reference that is not a `data:` URL (files, http, XInclude, CSS `@import`). Its built-in limits stay on
/// (no `RSVG_HANDLE_FLAG_UNLIMITED`).
enum SVGRenderer {
    /// CSS pixels per inch, for documents sized in physical units (mm, pt, in).
    static let dpi = 96.0

    static func render(
        _ bytes: [UInt8], sizes: [Int],
        cancellation: Cancellation
    ) throws(IconError) -> [(Int, [UInt8])] {
        let handle = try load(bytes, cancellation: cancellation)
        defer { g_object_unref(handle) }
        let (width, height) = try aspect(of: handle)
        var icons: [(Int, [UInt8])] = []
        for size in sizes {
            if cancellation.isCancelled {
                throw .tooSlow
            }
            icons.append((size, try draw(handle, fit: SquareFit(width: width, height: height, side: size))))
        }
        return icons
    }

    /// Parses the document, reading it through `cancellation` so the time budget can stop the parse.
    static func load(
        _ bytes: [UInt8],
        cancellation: Cancellation
    ) throws(IconError) -> UnsafeMutablePointer<RsvgHandle> {
        // g_bytes_new copies, so the stream owns its data whatever the handle keeps.
        let data = bytes.withUnsafeBufferPointer { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(data) }
        let stream = g_memory_input_stream_new_from_bytes(data)
        defer { g_object_unref(stream) }

        var error: UnsafeMutablePointer<GError>?
        let handle = rsvg_handle_new_from_stream_sync(stream, nil, RSVG_HANDLE_FLAGS_NONE, cancellation.handle, &error)
        let failed = GLibErrors.discard(&error)
        guard let handle, !failed, !cancellation.isCancelled else {
            if let handle {
                g_object_unref(handle)
            }
            throw cancellation.isCancelled ? .tooSlow : .undecodable(.svg)
        }
        rsvg_handle_set_dpi(handle, dpi)
        return handle
    }

    /// The document's width and height in pixels when it gives them in absolute units, else its viewBox's.
    static func aspect(of handle: UnsafeMutablePointer<RsvgHandle>) throws(IconError) -> (Double, Double) {
        func usable(_ width: Double, _ height: Double) -> Bool {
            width.isFinite && height.isFinite && width > 0 && height > 0
        }
        var width = 0.0
        var height = 0.0
        if rsvg_handle_get_intrinsic_size_in_pixels(handle, &width, &height) != 0, usable(width, height) {
            return (width, height)
        }
        var hasWidth: gboolean = 0
        var hasHeight: gboolean = 0
        var hasViewBox: gboolean = 0
        var lengthWidth = RsvgLength()
        var lengthHeight = RsvgLength()
        var viewBox = RsvgRectangle()
        rsvg_handle_get_intrinsic_dimensions(
            handle, &hasWidth, &lengthWidth, &hasHeight, &lengthHeight,
            &hasViewBox, &viewBox)
        if hasViewBox != 0, usable(viewBox.width, viewBox.height) {
            return (viewBox.width, viewBox.height)
        }
        throw .noSize
    }

    /// One output size: a transparent ARGB32 canvas with the whole document fitted into `fit`.
    static func draw(_ handle: UnsafeMutablePointer<RsvgHandle>, fit: SquareFit) throws(IconError) -> [UInt8] {
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(fit.side), Int32(fit.side)) else {
            throw .unavailable
        }
        defer { cairo_surface_destroy(surface) }
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, let context = cairo_create(surface) else {
            throw .unavailable
        }
        // cairo_create never returns NULL: out of memory, it returns a context in an error state.
        guard cairo_status(context) == CAIRO_STATUS_SUCCESS else {
            cairo_destroy(context)
            throw .unavailable
        }
        var viewport = RsvgRectangle(x: fit.x, y: fit.y, width: fit.width, height: fit.height)
        var error: UnsafeMutablePointer<GError>?
        let rendered = rsvg_handle_render_document(handle, context, &viewport, &error) != 0
        let failed = GLibErrors.discard(&error)
        cairo_destroy(context)
        guard rendered, !failed else {
            throw .undecodable(.svg)
        }
        let pixbuf = try SurfacePixbuf.copy(surface)
        defer { g_object_unref(UnsafeMutableRawPointer(pixbuf)) }
        return try PixbufCanvas.encode(pixbuf)
    }
}
