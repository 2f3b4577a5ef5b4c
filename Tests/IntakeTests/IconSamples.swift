import Foundation
import HeraldCrypto

/// Small images for the icon tests, and a reader of a PNG's header.
enum IconSamples {
    /// A 200 x 100 logo: the square icons get transparent bands above and below it.
    static let wideSVG = Array(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100">\
        <rect width="200" height="100" rx="12" fill="#e33"/><text x="100" y="62" font-size="40" \
        text-anchor="middle" fill="#fff">Pull</text></svg>
        """.utf8)

    /// A 40 x 20 opaque red PNG (RGBA), written by hand with zlib.
    static let png40x20 = [UInt8](
        Data(
            base64Encoded: """
                iVBORw0KGgoAAAANSUhEUgAAACgAAAAUCAYAAAD/Rn+7AAAAM0lEQVR4nO3OMREAAAjEMJS8fym4AhVcGTpkT3UynxUdMGiQDhg0SAcMGqQD\
                Bg3SAYPXFtGaSbtfwmrAAAAAAElFTkSuQmCC
                """)!)

    /// A 32 x 32 baseline JPEG (a white disc on blue).
    static let jpeg32x32 = [UInt8](
        Data(
            base64Encoded: """
                /9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAYEBQYFBAYGBQYHBwYIChAKCgkJChQODwwQFxQYGBcUFhYaHSUfGhsjHBYWICwgIyYn\
                KSopGR8tMC0oMCUoKSj/2wBDAQcHBwoIChMKChMoGhYaKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgo\
                KCgoKCgoKCj/wAARCAAgACADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUF\
                BAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVW\
                V1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi\
                4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAEC\
                AxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVm\
                Z2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq\
                8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDhq2/DnhTXPEe86Lp01yiZ3ScJGCMZXexC7vmBxnOOaPBOh/8ACR+KtO0ov5aXEn7xs4IR\
                QWfBwfm2qccYzjNfW2l6faaVp8Fjp0CW9pAu2ONOgH9STySeSSSa+0zPM/qdoQV5P7rHgYTCe3vKTskfKHiDwT4i8P2oudW0uaG3\
                PWVWWRF5A+YoSFySAM4z2rna+2J4YriCSGeNJYZFKPG6hlZSMEEHqCO1fK/xV8Mw+FfF0tnZcWU8a3MCFyxRWJBUkjsytjrxjJJz\
                UZZmrxcnTqK0vLYrF4P2K5ovQo/DzWofD/jTS9Suxm3ikKyHJ+VXUoW4BJwGzgDnGK+toJoriCOaCRJYZFDpIjBlZSMggjqCO9fE\
                9dh4P+Imv+FbX7JYyw3FkNxW3uULohJBJUghh0PGcck4yc0ZrlksW1Upv3lp8gweLVG8ZbH1ZXy78Z9ftPEHjWSTT3SW2tIVtVmR\
                tyykFmLDjpliOMg7cg4NHif4peI/EGnvYyyW1nbSKUmW0jKmVTjgliSBxjAIyCQciuFqMryuWGk6tV69EVjMYqy5IbH/2Q==
                """)!)

    /// Width, height and colour type from a PNG's IHDR; nil when `bytes` does not start as a PNG does.
    static func pngHeader(_ bytes: [UInt8]) -> (width: Int, height: Int, colorType: UInt8)? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count >= 26, Array(bytes[0..<8]) == signature, Array(bytes[12..<16]) == Array("IHDR".utf8)
        else { return nil }
        func uint32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (uint32(16), uint32(20), bytes[25])
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String { Digest.hex(Digest.sha256(bytes)) }
}
