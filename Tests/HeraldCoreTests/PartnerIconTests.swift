import HeraldCore
import Testing

@Suite("Partner icon paths and the public URL")
struct PartnerIconTests {
    @Test("the served path of each size, and the file names that name a size")
    func paths() {
        #expect(PartnerIcon.path(miniAppID: "fun.pull.gacha", size: 256) == "/icons/fun.pull.gacha/256.png")
        for size in PartnerIcon.sizes {
            #expect(PartnerIcon.size(fileName: "\(size).png") == size)
        }
        for name in [
            "100.png", "256", "256.PNG", "0256.png", "+256.png", "256.png.png", ".png", "", "256.jpg", "-64.png",
        ] {
            #expect(PartnerIcon.size(fileName: name) == nil, "\(name)")
        }
    }

    @Test(
        "HERALD_PUBLIC_URL: absolute http(s), no query or fragment; one trailing slash dropped",
        arguments: [
            ("https://herald.example.com", "https://herald.example.com"),
            ("https://herald.example.com/", "https://herald.example.com"),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("https://cdn.example.com/herald", "https://cdn.example.com/herald"),
        ])
    func publicURL(_ text: String, _ expected: String) {
        #expect(PartnerIcon.publicBaseURL(text) == expected)
    }

    @Test(
        "HERALD_PUBLIC_URL refusals",
        arguments: [
            "", "herald.example.com", "ftp://x", "https://", "https:///path", "https://a b", "https://x/?q=1",
            "https://x/#f", "https://x/\\", "javascript:alert(1)", "https://x/\u{7f}",
        ])
    func publicURLRefused(_ text: String) {
        #expect(PartnerIcon.publicBaseURL(text) == nil, "\(text)")
    }

    @Test("payloads carry the public URL + the icon's path, nothing without either")
    func contentImageURL() throws {
        let request = try Fixtures.request()
        let withIcon = Fixtures.partner(iconPath: "/icons/fun.pull.gacha/256.png")
        #expect(
            PushContent(request: request, partner: withIcon, publicURL: "https://h.example").imageURL
                == "https://h.example/icons/fun.pull.gacha/256.png")
        #expect(PushContent(request: request, partner: withIcon, publicURL: nil).imageURL == nil)
        #expect(
            PushContent(request: request, partner: Fixtures.partner(iconPath: nil), publicURL: "https://h.example")
                .imageURL == nil)
    }
}
