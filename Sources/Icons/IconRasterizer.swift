import Dispatch
import HeraldCore

/// Turns a partner's icon (PNG, JPEG or SVG bytes) into square PNGs, in memory only: no network, no database,
/// no files but gdk-pixbuf's list of its loaders and their modules (read once per process) and, for SVG text,
/// fontconfig's fonts. iOS renders a communication notification's avatar only from PNG or JPEG, and mini-app
/// manifests often carry SVG logos, so Herald rasterises them itself.
///
/// The format comes from the bytes, never from a declared Content-Type. PNG and JPEG are decoded with gdk-pixbuf
/// and scaled; SVG is drawn by librsvg straight at each size. Every output is `size` x `size` RGBA with the image
/// centred and transparent padding. `IconLimits` says what a render may cost and what its time bound covers.
///
/// One rasterizer bounds how many renders run at once, so share one per process. `render` blocks its caller
/// (up to twice the time budget): call it from a thread that may block, not from Swift's cooperative pool.
public final class IconRasterizer: Sendable {
    /// Output sizes `render` accepts.
    public static let sizeRange = 1...2048

    public let limits: IconLimits
    let slots: RenderSlots

    /// - Precondition: `limits.problem == nil`.
    public init(limits: IconLimits = IconLimits()) {
        if let problem = limits.problem {
            preconditionFailure("IconLimits: \(problem)")
        }
        self.limits = limits
        slots = RenderSlots(count: limits.maxConcurrentRenders, budget: limits.timeBudget)
    }

    /// The icon as one PNG per size, in the order of `sizes`.
    ///
    /// - Parameters:
    ///   - bytes: the uploaded or fetched file.
    ///   - sizes: output sizes in pixels, each within `sizeRange` (a programming error otherwise).
    ///   - declaredType: the Content-Type the client sent, used only to word the error message.
    /// - Throws: `IconError`: `invalid_icon` (not PNG/JPEG/SVG, undecodable, over the pixel limits, too slow),
    ///   `icon_too_large` (over `maxInputBytes`), `icon_unavailable` (no render slot within the time budget).
    public func render(
        _ bytes: [UInt8], sizes: [Int] = PartnerIcon.sizes,
        declaredType: String? = nil
    ) throws(IconError) -> [RenderedIcon] {
        precondition(!sizes.isEmpty && sizes.allSatisfy(Self.sizeRange.contains), "sizes must be in \(Self.sizeRange)")
        if bytes.isEmpty {
            throw .empty
        }
        if bytes.count > limits.maxInputBytes {
            throw .tooManyBytes(limit: limits.maxInputBytes)
        }
        guard let format = IconFormat.detect(bytes) else {
            throw .unrecognised(declaredType: declaredType)
        }

        let limits = self.limits
        return try slots.run { cancellation throws(IconError) in
            let pngs =
                switch format {
                case .png, .jpeg:
                    try RasterRenderer.render(
                        bytes, as: format, sizes: sizes, limits: limits, cancellation: cancellation)
                case .svg:
                    try SVGRenderer.render(bytes, sizes: sizes, cancellation: cancellation)
                }
            return pngs.map { RenderedIcon(size: $0.0, png: $0.1) }
        }
    }
}

extension Duration {
    /// Whole nanoseconds, at least 0.
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : max(0, product &+ attoseconds / 1_000_000_000)
    }
}
