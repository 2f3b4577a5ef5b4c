import Testing

@testable import Icons

@Suite struct IconFormatTests {
    static let svgs: [String] = [
        #"<svg xmlns="http://www.w3.org/2000/svg"/>"#,
        "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg width=\"1\" height=\"1\"></svg>",
        """
        <?xml version="1.0" standalone="no"?>
        <!-- Generator: Adobe Illustrator 27.0.0, SVG Export Plug-In -->
        <!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd" [
            <!ENTITY ns_extend "http://ns.adobe.com/Extensibility/1.0/">
            <!ENTITY ns_ai "http://ns.adobe.com/AdobeIllustrator/10.0/">
        ]>
        <svg version="1.1" xmlns="http://www.w3.org/2000/svg">
        """,
        "  \r\n\t<svg\n viewBox=\"0 0 1 1\">",
        #"<?xml-stylesheet href="x.css"?><svg:svg xmlns:svg="http://www.w3.org/2000/svg"/>"#,
    ]

    @Test(arguments: svgs)
    func recognisesSVGDocuments(_ text: String) {
        #expect(IconFormat.detect(Array(text.utf8)) == .svg)
    }

    static let notImages: [String] = [
        "",
        "svg",
        "<html><svg/></html>",
        "<svgfoo/>",
        "<!-- <svg> -->",
        "<!-- unterminated <svg/>",
        "<?xml version=\"1.0\"?><!DOCTYPE svg [ <!ENTITY a \">\"> <svg/>",
        "<?xml version=\"1.0\"?><root><svg/></root>",
        "{\"svg\": true}",
        "GIF89a\u{1}\u{0}\u{1}\u{0}",
        "RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ",
    ]

    @Test(arguments: notImages)
    func refusesEverythingElse(_ text: String) {
        #expect(IconFormat.detect(Array(text.utf8)) == nil)
    }

    @Test func recognisesRasterSignatures() {
        #expect(IconFormat.detect(TestImages.solid(width: 2, height: 2, rgba: 0xFF00_00FF, format: "png")) == .png)
        #expect(IconFormat.detect(TestImages.solid(width: 2, height: 2, rgba: 0xFF00_00FF, format: "jpeg")) == .jpeg)
        #expect(IconFormat.detect([0x1F, 0x8B, 0x08, 0x00]) == nil, "gzip (an .svgz) is not accepted")
        #expect(IconFormat.detect([0x89, 0x50, 0x4E, 0x47]) == nil, "a cut PNG signature")
    }

    @Test func fitsCentredInTheSquare() {
        let wide = SquareFit(width: 200, height: 100, side: 256)
        #expect(wide == SquareFit(width: 400, height: 200, side: 256))
        #expect((wide.x, wide.y, wide.width, wide.height) == (0, 64, 256, 128))
        #expect(wide.pixels == (0, 64, 256, 128))
        let tall = SquareFit(width: 1, height: 3, side: 64).pixels
        #expect(tall == (21, 0, 21, 64), "the odd pixel of margin goes after the image")
        let sliver = SquareFit(width: 10_000, height: 1, side: 64).pixels
        #expect(sliver == (0, 31, 64, 1))
    }
}
