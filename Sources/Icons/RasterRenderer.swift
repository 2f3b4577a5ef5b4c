import CGdkPixbuf

/// A PNG or JPEG to square PNGs: decoded once, then scaled for each size.
enum RasterRenderer {
    static func render(
        _ bytes: [UInt8], as format: IconFormat, sizes: [Int], limits: IconLimits,
        cancellation: Cancellation
    ) throws(IconError) -> [(Int, [UInt8])] {
        let source = try RasterDecoder.decode(bytes, as: format, limits: limits, cancellation: cancellation)
        defer { g_object_unref(UnsafeMutableRawPointer(source)) }
        var icons: [(Int, [UInt8])] = []
        for size in sizes {
            if cancellation.isCancelled {
                throw .tooSlow
            }
            icons.append((size, try PixbufCanvas.squarePNG(of: source, side: size)))
        }
        return icons
    }
}
