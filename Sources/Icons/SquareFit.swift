/// Where a width x height image goes on a square canvas: scaled until it touches two opposite edges, its aspect
/// ratio kept, centred; the rest of the canvas stays transparent.
struct SquareFit: Equatable {
    let side: Int
    let x: Double
    let y: Double
    let width: Double
    let height: Double

    init(width: Double, height: Double, side: Int) {
        let scale = Double(side) / max(width, height)
        self.side = side
        self.width = width * scale
        self.height = height * scale
        x = (Double(side) - self.width) / 2
        y = (Double(side) - self.height) / 2
    }

    /// The same box in whole pixels, for scalers that take integer rectangles: at least one pixel each way,
    /// centred (an odd margin puts the extra pixel after the image).
    var pixels: (x: Int, y: Int, width: Int, height: Int) {
        let wide = max(1, min(side, Int(width.rounded())))
        let high = max(1, min(side, Int(height.rounded())))
        return ((side - wide) / 2, (side - high) / 2, wide, high)
    }
}
