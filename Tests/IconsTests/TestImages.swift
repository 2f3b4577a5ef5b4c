import CGdkPixbuf

/// Images made for the tests with gdk-pixbuf itself, and hand-crafted headers.
enum TestImages {
    /// A width x height image of one colour (0xRRGGBBAA), encoded as "png" or "jpeg".
    static func solid(width: Int, height: Int, rgba: UInt32, format: String) -> [UInt8] {
        let hasAlpha: gboolean = format == "png" ? 1 : 0
        let pixbuf = gdk_pixbuf_new(GDK_COLORSPACE_RGB, hasAlpha, 8, Int32(width), Int32(height))!
        defer { g_object_unref(UnsafeMutableRawPointer(pixbuf)) }
        gdk_pixbuf_fill(pixbuf, rgba)
        var buffer: UnsafeMutablePointer<gchar>?
        var length: gsize = 0
        let saved = gdk_pixbuf_save_to_bufferv(pixbuf, &buffer, &length, format, nil, nil, nil)
        precondition(saved != 0, "gdk-pixbuf could not encode \(format)")
        defer { g_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
    }

    /// A PNG whose IHDR declares width x height (RGBA, 8 bits) followed by a few bytes of image data and IEND:
    /// structurally complete, far too short for its size.
    static func pngClaiming(width: UInt32, height: UInt32) -> [UInt8] {
        var ihdr = bigEndian(width) + bigEndian(height)
        ihdr += [8, 6, 0, 0, 0]  // bit depth, colour type RGBA, compression, filter, interlace
        let idat: [UInt8] = [0x78, 0x9C, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]  // zlib of one zero byte
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", ihdr) + chunk("IDAT", idat) + chunk("IEND", [])
    }

    /// `jpeg` with the size in its start-of-frame header replaced.
    static func jpeg(_ jpeg: [UInt8], claiming width: UInt16, _ height: UInt16) -> [UInt8] {
        var bytes = jpeg
        // SOFn markers: FFC0-FFC3, FFC5-FFC7, FFC9-FFCB, FFCD-FFCF; then length(2), precision(1), height(2), width(2).
        let frames: Set<UInt8> = [0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF]
        let start = bytes.indices.dropLast(9).first { bytes[$0] == 0xFF && frames.contains(bytes[$0 + 1]) }
        guard let marker = start else {
            preconditionFailure("no start-of-frame marker")
        }
        bytes[marker + 5] = UInt8(height >> 8)
        bytes[marker + 6] = UInt8(height & 0xFF)
        bytes[marker + 7] = UInt8(width >> 8)
        bytes[marker + 8] = UInt8(width & 0xFF)
        return bytes
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    /// CRC-32 as PNG chunks use it (ISO 3309, reflected, polynomial 0xEDB88320).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
        }
        return ~crc
    }
}
