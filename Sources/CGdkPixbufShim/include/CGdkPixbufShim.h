#ifndef CGDKPIXBUFSHIM_H
#define CGDKPIXBUFSHIM_H

// Signal handlers for gdk-pixbuf loaders, connected from C because g_signal_connect is a macro Swift cannot call.

#include <stdint.h>
#include <gdk-pixbuf/gdk-pixbuf.h>

/// The limits a loader's source must fit, and what the loader announced. The caller owns it; it must stay valid
/// until the loader is finalised.
struct CGdkPixbufShim_size_guard {
    /// Most pixels (width x height) a source may have.
    int64_t max_pixels;
    /// Most pixels a source may have on either side.
    int32_t max_side;
    /// The size the loader announced, 0 until it has read the header.
    int32_t width;
    int32_t height;
    /// 1 when the announced size was over a limit and the loader was told to stop.
    int32_t refused;
};

/// Guards `loader`:
/// - "size-prepared" (the header has been read, nothing is allocated yet) records the size and, when it is over a
///   limit, asks for a 0 x 0 image, on which the PNG and JPEG loaders fail before allocating the pixel buffer
///   (gdk_pixbuf_get_file_info stops loaders the same way);
/// - "area-prepared" (the pixel buffer exists, nothing is decoded yet) clears the buffer: gdk-pixbuf does not, and
///   rows a damaged file never delivers would otherwise hold whatever the heap held before.
void CGdkPixbufShim_guard_loader(GdkPixbufLoader *loader, struct CGdkPixbufShim_size_guard *guard);

#endif
