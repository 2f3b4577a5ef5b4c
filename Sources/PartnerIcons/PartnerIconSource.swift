import HTTPFetch
import HeraldCore
import Icons
import ServiceSupport
import Store

/// Where a partner's icon comes from: an uploaded image, or an https URL fetched through
/// HTTPFetch (its address policy and CAs); either way rasterised by Icons to `PartnerIcon.sizes`
/// before anything is written. The admin API and `heraldctl partners` share it.
public final class PartnerIconSource: Sendable {
    private let fetcher: HTTPFetcher
    /// One per process: it bounds how many images are decoded at once.
    private let rasterizer = IconRasterizer()

    /// How long a fetch may take in all, and how many redirects it follows (each hop's address is
    /// checked again; CDNs commonly redirect a logo's URL once or twice).
    static let fetchTimeout: Duration = .seconds(10)
    static let fetchRedirects = 3

    public init(fetcher: HTTPFetcher) {
        self.fetcher = fetcher
    }

    /// A source with its own fetcher, configured from HERALD_WEBHOOK_ALLOW_PRIVATE and HERALD_CA_FILE.
    public convenience init(environment: [String: String]) throws {
        self.init(
            fetcher: try HTTPFetcher(
                configuration: HTTPFetchConfiguration.from(EnvironmentReader(environment: environment))))
    }

    /// Stops the fetcher's thread.
    public func close() { fetcher.stop() }

    /// The images of an uploaded PNG, JPEG or SVG; 422 `invalid_icon` when it does not decode.
    /// `declaredType` (the upload's Content-Type) only words the error.
    public func fromUpload(_ bytes: [UInt8], declaredType: String? = nil) throws(HeraldError) -> [PartnerIconImage] {
        try rasterise(bytes, declaredType: declaredType, field: nil)
    }

    /// The images of the image at `url`: fetched (at most `PartnerIcon.maxSourceBytes`), then
    /// rasterised; 422 `icon_fetch_failed` when it cannot be fetched, `invalid_icon` when it does not decode.
    public func fromURL(_ url: String) throws(HeraldError) -> [PartnerIconImage] {
        let request = HTTPFetchRequest(
            method: .get, url: url, headers: [HTTPFetchHeader("Accept", "image/png, image/jpeg, image/svg+xml")],
            timeout: Self.fetchTimeout, maxResponseBytes: PartnerIcon.maxSourceBytes, oversize: .fail,
            followRedirects: Self.fetchRedirects)
        let response: HTTPFetchResponse
        do {
            response = try fetcher.fetch(request)
        } catch {
            throw HeraldError(
                status: 422, code: "icon_fetch_failed",
                message: "iconUrl could not be fetched (\(error.code.rawValue)).", field: "iconUrl")
        }
        guard response.status == 200 else {
            throw HeraldError(
                status: 422, code: "icon_fetch_failed",
                message: "iconUrl answered HTTP \(response.status), not 200.", field: "iconUrl")
        }
        return try rasterise(response.body, declaredType: response.header("content-type"), field: "iconUrl")
    }

    private func rasterise(_ bytes: [UInt8], declaredType: String?, field: String?) throws(HeraldError)
        -> [PartnerIconImage]
    {
        do {
            return try rasterizer.render(bytes, declaredType: declaredType).map { icon in
                PartnerIconImage(size: icon.size, png: icon.png, sha256: icon.sha256Hex)
            }
        } catch {
            let answer = error.heraldError
            throw HeraldError(
                status: answer.status, code: answer.code, message: answer.message, field: field,
                retryAfter: answer.retryAfter)
        }
    }
}
