import NIOCore

/// Everything the web port serves over plain HTTP: the browser clients' pages, scripts and
/// style sheet, each encoded once when the server starts and shared by every connection.
struct WebSite: Sendable {
    /// One file of the site.
    struct Resource: Sendable {
        /// Its `Content-Type`.
        var contentType: String
        /// Its bytes.
        var body: ByteBuffer
    }

    /// What the pages may load and connect to: files and the WebSocket of this origin, nothing
    /// inline, nothing from elsewhere.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'"

    private let resources: [String: Resource]

    /// The site whose native client names `gameID` in its HELLO, whose Cat Race page spaces
    /// taps for `maxTapRate` (`--max-tap-rate`), and whose pages offer matches no larger than
    /// the server makes: `maxPlayers` (`--max-players`), a race also `maxRacers` (`--max-racers`).
    init(gameID: String, maxTapRate: Double, maxPlayers: Int = 16, maxRacers: Int = 16) {
        func resource(_ contentType: String, _ text: String) -> Resource {
            var body = ByteBufferAllocator().buffer(capacity: text.utf8.count)
            body.writeString(text)
            return Resource(contentType: contentType, body: body)
        }
        let html = "text/html; charset=utf-8"
        let javaScript = "text/javascript; charset=utf-8"
        let index = resource(html, WebPages.index)
        self.resources = [
            "/": index,
            "/index.html": index,
            "/matchhost.css": resource("text/css; charset=utf-8", WebPages.style),
            "/matchhost.js": resource(javaScript, WebClientScript.javaScript(gameID: gameID)),
            "/catrace": resource(html, WebCatRacePage.html(largest: min(maxPlayers, maxRacers))),
            "/catrace.js": resource(javaScript, WebCatRacePage.script(maxTapRate: maxTapRate)),
            "/disks": resource(html, WebDisksPage.html(largest: maxPlayers)),
            "/disks.js": resource(javaScript, WebDisksPage.script),
            "/fourinarow": resource(html, WebFourInARowPage.html),
            "/fourinarow.js": resource(javaScript, WebFourInARowPage.script),
        ]
    }

    /// The file at a request's path, if the site has one.
    func resource(at path: Substring) -> Resource? {
        self.resources[String(path)]
    }
}
