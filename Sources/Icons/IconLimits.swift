import HeraldCore

/// What one icon may cost. Every argument of the initialiser has a default; `IconRasterizer` checks them once.
///
/// What the limits bound, and what they do not:
/// - **Bytes.** Over `maxInputBytes` is refused before anything looks at the content.
/// - **Pixels of a PNG or JPEG.** The decoder announces the size from the file's header; over `maxSourceSide` or
///   `maxSourcePixels` it stops there, before it allocates the pixel buffer (4 bytes a pixel: the defaults keep
///   one decode under 100 MB).
/// - **Pixels of an SVG.** None are allocated at the document's own size: each output size is drawn directly
///   on a canvas of that size. librsvg's own limits stay on (no `RSVG_HANDLE_FLAG_UNLIMITED`: caps on elements,
///   references, nesting and XML entity expansion). Not covered: raster images an SVG embeds as `data:` URLs,
///   which librsvg decodes with gdk-pixbuf at their own size; their compressed size is bounded by
///   `maxInputBytes` only.
/// - **Time.** `timeBudget` bounds how long `render` waits, at most twice: once for a render slot (then
///   `icon_unavailable`), once for the render itself (then `invalid_icon`, "took too long"). When it runs out the
///   render is cancelled: an SVG still being parsed stops (librsvg reads through a GCancellable), a PNG or JPEG
///   decode stops at its next 64 KiB chunk, and no further output size is started. What cannot be interrupted
///   runs on to its end on the render's own thread: drawing an SVG (librsvg 2.54, Debian 12's, has no
///   cancellation for rendering), decoding one chunk, scaling one size. That thread keeps its slot until it
///   ends, so however many uploads arrive, at most `maxConcurrentRenders` threads burn CPU at once; the callers
///   have already been answered.
public struct IconLimits: Sendable, Equatable {
    /// Largest accepted input (the API's 1 MiB).
    public var maxInputBytes: Int
    /// Most pixels (width x height) a PNG or JPEG may declare.
    public var maxSourcePixels: Int
    /// Most pixels a PNG or JPEG may declare on either side.
    public var maxSourceSide: Int
    /// How long `render` waits for a slot, and then for the render (see above).
    public var timeBudget: Duration
    /// Renders that may run at once in one `IconRasterizer`; more wait for a slot.
    public var maxConcurrentRenders: Int

    public init(
        maxInputBytes: Int = PartnerIcon.maxSourceBytes,
        maxSourcePixels: Int = 25_000_000,
        maxSourceSide: Int = 10_000,
        timeBudget: Duration = .seconds(5),
        maxConcurrentRenders: Int = 2
    ) {
        self.maxInputBytes = maxInputBytes
        self.maxSourcePixels = maxSourcePixels
        self.maxSourceSide = maxSourceSide
        self.timeBudget = timeBudget
        self.maxConcurrentRenders = maxConcurrentRenders
    }

    /// Why these limits cannot be used, or nil when they can.
    public var problem: String? {
        if maxInputBytes < 1 {
            return "maxInputBytes must be at least 1"
        }
        if maxSourcePixels < 1 || maxSourceSide < 1 || maxSourceSide > Int(Int32.max) {
            return "maxSourcePixels and maxSourceSide must be at least 1 (and the side fit in 32 bits)"
        }
        if timeBudget <= .zero {
            return "timeBudget must be positive"
        }
        if maxConcurrentRenders < 1 {
            return "maxConcurrentRenders must be at least 1"
        }
        return nil
    }
}
