import NIOCore
import NIOHTTP1

/// The web port's HTTP side, before a connection becomes a WebSocket: `GET` of a path of the
/// ``WebSite`` is that file (the browser clients), `GET /native` with a WebSocket upgrade is
/// the native protocol (the upgrader takes those before they reach this handler), anything
/// else a short error.
///
/// One request per connection (every answer says `Connection: close`), and the request must
/// come within `deadline` of connecting, or the connection is closed: a socket that says
/// nothing holds a place of `--max-connections` for no longer than a silent native one.
final class WebPortHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The path of the native protocol's WebSocket.
    static let nativePath = "/native"

    /// A request target's path: its query string is ignored.
    static func path(of uri: String) -> Substring {
        uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    private let site: WebSite
    private let deadline: TimeAmount
    private var timeout: Scheduled<Void>?
    private var request: HTTPRequestHead?
    private var answered = false

    /// - Parameters:
    ///   - site: the files served, encoded once for every connection.
    ///   - deadline: how long a connection may take to send its request.
    init(site: WebSite, deadline: TimeAmount) {
        self.site = site
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        self.timeout = context.eventLoop.scheduleTask(in: self.deadline) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.timeout?.cancel()
        self.timeout = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch Self.unwrapInboundIn(data) {
        case .head(let head):
            self.request = head
        case .body:
            break  // no request here has a body worth reading; it is dropped as it comes
        case .end:
            guard let head = self.request, !self.answered else { return }
            self.answered = true
            self.answer(head, context: context)
        }
    }

    private func answer(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = Self.path(of: head.uri)
        guard head.method == .GET || head.method == .HEAD else {
            return self.respondText(.methodNotAllowed, "only GET is served here\n", head: head, context: context, extraHeaders: [("Allow", "GET, HEAD")])
        }
        if let resource = self.site.resource(at: path) {
            return self.respond(
                .ok, contentType: resource.contentType, body: resource.body, includeBody: head.method == .GET,
                extraHeaders: [
                    ("Content-Security-Policy", WebSite.contentSecurityPolicy),
                    // A new server may serve a new client: the browser asks each time (a 304 is not worth its code here).
                    ("Cache-Control", "no-cache"),
                ], context: context)
        }
        switch path {
        case Self.nativePath:
            self.respondText(
                .upgradeRequired, "\(Self.nativePath) is the native protocol over a WebSocket: connect with a WebSocket client\n", head: head,
                context: context, extraHeaders: [("Upgrade", "websocket")])
        default:
            self.respondText(
                .notFound, "not found: the browser clients are at /, the native protocol's WebSocket at \(Self.nativePath)\n", head: head,
                context: context)
        }
    }

    private func respondText(
        _ status: HTTPResponseStatus, _ text: String, head: HTTPRequestHead, context: ChannelHandlerContext, extraHeaders: [(String, String)] = []
    ) {
        self.respond(
            status, contentType: "text/plain; charset=utf-8", body: context.channel.allocator.buffer(string: text),
            includeBody: head.method != .HEAD, extraHeaders: extraHeaders, context: context)
    }

    private func respond(
        _ status: HTTPResponseStatus, contentType: String, body: ByteBuffer, includeBody: Bool, extraHeaders: [(String, String)],
        context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders([
            ("Content-Type", contentType), ("Content-Length", "\(body.readableBytes)"), ("Connection", "close"),
            ("X-Content-Type-Options", "nosniff"),
        ])
        headers.add(contentsOf: extraHeaders)
        context.write(Self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if includeBody {
            context.write(Self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(Self.wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
