import Foundation

/// Small images for the media tests, each carrying metadata a re-encoding must drop: the text `marker` in a PNG's
/// tEXt, iTXt and eXIf chunks, in a JPEG's EXIF (with a GPS position: 48 deg 51' 29.59" N) and comment, and in a
/// GIF's comment. Written by hand, so no image tool is needed to make them.
public enum MediaSamples {
    /// What every sample hides in its metadata; no re-encoded file may contain it.
    public static let marker = Array("HERALD-SECRET-LOCATION".utf8)

    /// A 40 x 20 opaque red PNG (RGB) with tEXt, iTXt and eXIf chunks before its pixels.
    public static let pngWithText = decode(
        """
        iVBORw0KGgoAAAANSUhEUgAAACgAAAAUCAIAAABwJOjsAAAAHnRFWHRDb21tZW50AEhFUkFMRC1TRUNSRVQtTE9DQVRJT05t0qvN\
        AAAAHmlUWHRHUFMAAAAAAEhFUkFMRC1TRUNSRVQtTE9DQVRJT07hYI3kAAAAJGVYSWZNTQAqAAAACAAAAAAAAEhFUkFMRC1TRUNS\
        RVQtTE9DQVRJT07N40lOAAAAJElEQVR42mN4YGAwIIhh1OJRi0ctHrV41OJRi0ctHrV45FgMANSL6C5GQYRCAAAAAElFTkSuQmCC
        """)

    /// A 32 x 32 baseline JPEG with an EXIF segment (ImageDescription and a GPS IFD) and a comment segment.
    public static let jpegWithGPS = decode(
        """
        /9j/4AAQSkZJRgABAQAAAQABAAD/4QB8RXhpZgAASUkqAAgAAAACAA4BAgAXAAAAJgAAACWIBAABAAAAPgAAAAAAAABIRVJBTEQt\
        U0VDUkVULUxPQ0FUSU9OAAACAAEAAgACAAAATgAAAAIABQADAAAAXAAAAAAAAAAwAAAAAQAAADMAAAABAAAAjwsAAGQAAAD//gAY\
        SEVSQUxELVNFQ1JFVC1MT0NBVElPTv/bAEMABgQFBgUEBgYFBgcHBggKEAoKCQkKFA4PDBAXFBgYFxQWFhodJR8aGyMcFhYgLCAj\
        JicpKikZHy0wLSgwJSgpKP/bAEMBBwcHCggKEwoKEygaFhooKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgo\
        KCgoKCgoKCgoKP/AABEIACAAIAMBIgACEQEDEQH/xAAfAAABBQEBAQEBAQAAAAAAAAAAAQIDBAUGBwgJCgv/xAC1EAACAQMDAgQD\
        BQUEBAAAAX0BAgMABBEFEiExQQYTUWEHInEUMoGRoQgjQrHBFVLR8CQzYnKCCQoWFxgZGiUmJygpKjQ1Njc4OTpDREVGR0hJSlNU\
        VVZXWFlaY2RlZmdoaWpzdHV2d3h5eoOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna\
        4eLj5OXm5+jp6vHy8/T19vf4+fr/xAAfAQADAQEBAQEBAQEBAAAAAAAAAQIDBAUGBwgJCgv/xAC1EQACAQIEBAMEBwUEBAABAncA\
        AQIDEQQFITEGEkFRB2FxEyIygQgUQpGhscEJIzNS8BVictEKFiQ04SXxFxgZGiYnKCkqNTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNk\
        ZWZnaGlqc3R1dnd4eXqCg4SFhoeIiYqSk5SVlpeYmZqio6Slpqeoqaqys7S1tre4ubrCw8TFxsfIycrS09TV1tfY2dri4+Tl5ufo\
        6ery8/T19vf4+fr/2gAMAwEAAhEDEQA/AOGrb8OeFNc8R7zounTXKJndJwkYIxld7ELu+YHGc45o8E6H/wAJH4q07Si/lpcSfvGz\
        ghFBZ8HB+bapxxjOM19baXp9ppWnwWOnQJb2kC7Y406Af1JPJJ5JJJr7TM8z+p2hBXk/useBhMJ7e8pOyR8oeIPBPiLw/ai51bS5\
        obc9ZVZZEXkD5ihIXJIAzjPaudr7YnhiuIJIZ40lhkUo8bqGVlIwQQeoI7V8r/FXwzD4V8XS2dlxZTxrcwIXLFFYkFSSOzK2OvGM\
        knNRlmavFydOorS8tisXg/Yrmi9Cj8PNah8P+NNL1K7GbeKQrIcn5VdShbgEnAbOAOcYr62gmiuII5oJElhkUOkiMGVlIyCCOoI7\
        18T12Hg/4ia/4VtfsljLDcWQ3Fbe5QuiEkElSCGHQ8ZxyTjJzRmuWSxbVSm/eWnyDB4tUbxlsfVlfLvxn1+08QeNZJNPdJba0hW1\
        WZG3LKQWYsOOmWI4yDtyDg0eJ/il4j8Qae9jLJbWdtIpSZbSMqZVOOCWJIHGMAjIJByK4WoyvK5YaTq1Xr0RWMxirLkhsf/Z
        """)

    /// A 16 x 12 GIF animation of two frames (red, then blue) with a comment extension.
    public static let animatedGIF = decode(
        """
        R0lGODlhEAAMAIEAAP8AAAAA/wAAAP///yH+FkhFUkFMRC1TRUNSRVQtTE9DQVRJT04AIf8LTkVUU0NBUEUyLjADAQAAACH5BAAK\
        AAAALAAAAAAQAAwAAAJtBAgQIECAAAECBAgQIECAAAECBAgQIECAAAECBAgQIECAAAECBAgQIECAAAECBAgQIECAAAECBAgQIECA\
        AAECBAgQIECAAAECBAgQIECAAAECBAgQIECAAAECBAgQIECAAAECBAgQIECAAAECBQAh+QQACgAAACwAAAAAEAAMAAACbUyYMGHC\
        hAkTJkyYMGHChAkTJkyYMGHChAkTJkyYMGHChAkTJkyYMGHChAkTJkyYMGHChAkTJkyYMGHChAkTJkyYMGHChAkTJkyYMGHChAkT\
        JkyYMGHChAkTJkyYMGHChAkTJkyYMGHChAkTJgUAOw==
        """)

    /// Whether `bytes` contain `needle` anywhere.
    public static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= bytes.count else { return false }
        return (0...(bytes.count - needle.count)).contains { start in
            bytes[start..<(start + needle.count)].elementsEqual(needle)
        }
    }

    private static func decode(_ base64: String) -> [UInt8] {
        [UInt8](Data(base64Encoded: base64)!)
    }
}
