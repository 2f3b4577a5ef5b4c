import CGdkPixbuf
import CGdkPixbufShim

/// Decodes a PNG, JPEG or GIF with gdk-pixbuf, refusing sources over the pixel limits before their pixels are
/// allocated (see `CGdkPixbufShim_guard_loader`).
enum RasterDecoder {
    /// Bytes handed to the loader at a time; cancellation is checked between them.
    static let chunkSize = 64 * 1024

    /// The decoded icon, turned upright if its metadata says so (EXIF orientation); the caller unrefs it.
    static func decode(
        _ bytes: [UInt8], as format: IconFormat, limits: IconLimits,
        cancellation: Cancellation
    ) throws(IconError) -> OpaquePointer {
        let complete = format == .png ? PNGStructure.isComplete(bytes) : JPEGStructure.isComplete(bytes)
        guard complete else {
            throw .undecodable(format)
        }
        return try decode(
            bytes, loader: format == .png ? "png" : "jpeg", name: format.name, limits: limits,
            cancellation: cancellation)
    }

    /// The decoded image (the first frame of an animation), turned upright if its metadata says so, from the
    /// gdk-pixbuf loader named `loader` only (gdk-pixbuf's guess could hand the bytes to any loader installed);
    /// the caller has checked the file runs whole, and unrefs the result. `name` words the error.
    static func decode(
        _ bytes: [UInt8], loader type: String, name: String, limits: IconLimits,
        cancellation: Cancellation
    ) throws(IconError) -> OpaquePointer {
        // Declared before the loader, so it is freed after it: the loader's handler writes into it until then.
        let sizeGuard = UnsafeMutablePointer<CGdkPixbufShim_size_guard>.allocate(capacity: 1)
        sizeGuard.initialize(
            to: CGdkPixbufShim_size_guard(
                max_pixels: Int64(limits.maxSourcePixels), max_side: Int32(limits.maxSourceSide),
                width: 0, height: 0, refused: 0))
        defer { sizeGuard.deallocate() }

        var error: UnsafeMutablePointer<GError>?
        guard let loader = gdk_pixbuf_loader_new_with_type(type, &error) else {
            GLibErrors.discard(&error)
            throw .unavailable
        }
        defer { g_object_unref(loader) }
        CGdkPixbufShim_guard_loader(loader, sizeGuard)

        // A failed write has already closed the loader; closing it again would be a GLib critical.
        var failed = false
        var offset = 0
        bytes.withUnsafeBufferPointer { buffer in
            while offset < buffer.count, !cancellation.isCancelled {
                let count = min(chunkSize, buffer.count - offset)
                guard gdk_pixbuf_loader_write(loader, buffer.baseAddress! + offset, gsize(count), &error) != 0 else {
                    failed = true
                    return
                }
                offset += count
            }
        }
        failed = GLibErrors.discard(&error) || failed
        if !failed {
            failed = gdk_pixbuf_loader_close(loader, &error) == 0
            failed = GLibErrors.discard(&error) || failed
        }

        if sizeGuard.pointee.refused != 0 {
            throw .sourceTooLarge(limits)
        }
        if cancellation.isCancelled {
            throw .tooSlow
        }
        guard !failed, let decoded = gdk_pixbuf_loader_get_pixbuf(loader) else {
            throw .undecodable(name)
        }
        // A new reference (possibly to the same pixbuf), so the result outlives the loader.
        guard let upright = gdk_pixbuf_apply_embedded_orientation(decoded) else {
            throw .unavailable
        }
        return upright
    }
}
