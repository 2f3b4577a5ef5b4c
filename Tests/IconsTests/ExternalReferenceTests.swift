import Foundation
import Icons
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// An SVG may point at files and URLs; none may be read or fetched. Each reference below would paint the whole
/// canvas red if it were followed, so a fully transparent result proves it was not.
@Suite struct ExternalReferenceTests {
    let rasterizer = IconRasterizer()

    /// A folder holding what the references point at: a red PNG, an SVG fragment, a style sheet.
    static let folder: String = {
        let path = NSTemporaryDirectory() + "herald-icons-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let red = TestImages.solid(width: 10, height: 10, rgba: 0xFF00_00FF, format: "png")
        _ = FileManager.default.createFile(atPath: path + "/red.png", contents: Data(red))
        let rect = #"<rect xmlns="http://www.w3.org/2000/svg" id="r" width="100" height="100" fill="red"/>"#
        _ = FileManager.default.createFile(atPath: path + "/rect.xml", contents: Data(rect.utf8))
        _ = FileManager.default.createFile(atPath: path + "/style.css", contents: Data("rect { fill: red; }".utf8))
        return path
    }()

    static func document(_ body: String, prolog: String = "") -> [UInt8] {
        Array(
            """
            \(prolog)<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
                 xmlns:xi="http://www.w3.org/2001/XInclude" width="100" height="100">\(body)</svg>
            """.utf8)
    }

    /// A rect a followed style sheet would paint red.
    static let blankRect = #"<rect width="100" height="100" fill="none"/>"#

    static var references: [(String, String)] {
        [
            ("image file URL", #"<image href="file://\#(folder)/red.png" width="100" height="100"/>"#),
            ("image xlink file URL", #"<image xlink:href="file://\#(folder)/red.png" width="100" height="100"/>"#),
            ("image absolute path", #"<image href="\#(folder)/red.png" width="100" height="100"/>"#),
            ("image relative path", #"<image href="red.png" width="100" height="100"/>"#),
            ("image /etc/passwd", #"<image href="file:///etc/passwd" width="100" height="100"/>"#),
            ("XInclude", #"<xi:include href="file://\#(folder)/rect.xml"/>"#),
            ("use of an external element", #"<use href="file://\#(folder)/rect.xml#r"/>"#),
            ("CSS import", #"<style>@import url("file://\#(folder)/style.css");</style>"# + blankRect),
            (
                "filter image",
                #"<filter id="f"><feImage href="file://\#(folder)/red.png"/></filter>"#
                    + #"<rect width="100" height="100" fill="none" filter="url(#f)"/>"#
            ),
        ]
    }

    @Test func localFilesAreNeverRead() throws {
        for (name, body) in Self.references {
            try expectNothingLoaded(Self.document(body), name)
        }
    }

    @Test func externalEntitiesAreNeverRead() throws {
        let prolog = #"<!DOCTYPE svg [ <!ENTITY e SYSTEM "file://\#(Self.folder)/rect.xml"> ]>"#
        // librsvg 2.54 refuses the document (an undefined entity to it); a later one might render it blank.
        try expectNothingLoaded(Self.document("&e;", prolog: prolog), "external entity", refusalAllowed: true)
    }

    @Test func urlsAreNeverFetched() throws {
        let listener = try LoopbackListener()
        defer { listener.close() }
        let base = "http://127.0.0.1:\(listener.port)"
        for body in [
            #"<image href="\#(base)/red.png" width="100" height="100"/>"#,
            #"<image href="https://127.0.0.1:\#(listener.port)/red.png" width="100" height="100"/>"#,
            #"<xi:include href="\#(base)/rect.xml"/>"#,
            #"<style>@import url("\#(base)/style.css");</style>"# + Self.blankRect,
        ] {
            try expectNothingLoaded(Self.document(body), body)
        }
        #expect(!listener.hasPendingConnection(), "something connected to the listener")
    }

    /// An embedded `data:` image is part of the document and is drawn.
    @Test func dataURLsAreDrawn() throws {
        let red = TestImages.solid(width: 10, height: 10, rgba: 0xFF00_00FF, format: "png")
        let url = "data:image/png;base64," + Data(red).base64EncodedString()
        let body = #"<image href="\#(url)" width="100" height="100"/>"#
        let png = try DecodedPNG(try rasterizer.render(Self.document(body), sizes: [32])[0].png)
        #expect(png.pixel(16, 16) == (255, 0, 0, 255))
    }

    /// The document renders with nothing from outside (never red); with `refusalAllowed` it may be refused instead.
    func expectNothingLoaded(_ svg: [UInt8], _ name: String, refusalAllowed: Bool = false) throws {
        let icons: [RenderedIcon]
        do {
            icons = try rasterizer.render(svg, sizes: [32])
        } catch {
            #expect(refusalAllowed && error.code == .invalidIcon, "\(name): \(error)")
            return
        }
        let png = try DecodedPNG(icons[0].png)
        #expect(png.rgba.allSatisfy { $0 == 0 }, "\(name): something was drawn")
    }
}

struct ListenerFailure: Error {}

/// A TCP listener on 127.0.0.1 that never accepts: a connection attempt would wait in its backlog.
struct LoopbackListener {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else {
            throw ListenerFailure()
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && listen(descriptor, 16) == 0
                    && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(descriptor)
            throw ListenerFailure()
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    func hasPendingConnection() -> Bool {
        let accepted = accept(descriptor, nil, nil)
        if accepted >= 0 {
            Glibc.close(accepted)
            return true
        }
        return false
    }

    func close() {
        Glibc.close(descriptor)
    }
}
