import MatchHostWire
import NIOCore
import NIOHTTP1
import NIOWebSocket

/// The web port (`--web-port`, default 7357 in `matchhost serve`): the native protocol over a
/// WebSocket at `/native`, and the browser clients (``WebSite``) at `/`.
///
/// Its connections are native connections like the TCP port's: the same world and event
/// loop, the same handler behind a ``NativeWebSocketBridge``, and the same registry, so
/// `--max-connections` and `--max-connections-per-address` count both ports together.
enum WebPort {
    /// How an admitted connection is set up: HTTP first; an upgrade at ``WebPortHTTPHandler/nativePath``
    /// swaps it for the WebSocket codec, the bridge and the native handler.
    static func pipeline(configuration: ServerConfiguration) -> GameListener<NativeWorld>.PipelineSetup {
        let framePayload = configuration.maxFrameBytes + 4
        let site = WebSite(
            gameID: configuration.gameIDs.first ?? "matchhost", maxTapRate: configuration.maxTapRate,
            maxPlayers: configuration.maxPlayersPerMatch, maxRacers: configuration.maxRacers)
        let deadline = configuration.idleTimeout
        let bareFramesPerSecond = configuration.maxMessageRate
        return { channel, makeHandler in
            let http = WebPortHTTPHandler(site: site, deadline: deadline)
            let boundHTTP = NIOLoopBound(http, eventLoop: channel.eventLoop)
            let upgrader = NIOWebSocketServerUpgrader(
                maxFrameSize: framePayload, automaticErrorHandling: false,
                shouldUpgrade: { channel, head in
                    let upgrades = head.method == .GET && WebPortHTTPHandler.path(of: head.uri) == WebPortHTTPHandler.nativePath
                    return channel.eventLoop.makeSucceededFuture(upgrades ? HTTPHeaders() : nil)
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            NativeWebSocketBridge(maximumFramePayload: framePayload, bareFramesPerSecond: bareFramesPerSecond),
                            makeHandler(),
                        ])
                    }
                })
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withServerUpgrade: (
                    upgraders: [upgrader],
                    completionHandler: { context in
                        context.pipeline.syncOperations.removeHandler(boundHTTP.value, promise: nil)
                    }
                ))
            try channel.pipeline.syncOperations.addHandler(http)
        }
    }

    /// What a plaintext request to the port, when it speaks TLS, reads before the close.
    static let plaintextAnswer = ClosingHTTPAnswer.plainText(
        status: "400 Bad Request", reason: "this port speaks HTTPS only: open the page with https:// (and the WebSocket with wss://)\n")

    /// How long a refused connection is kept half-open for its client to read the 503 and close
    /// (``RefusedConnectionHandler``); at most ``ConnectionRegistry/maximumLingeringRefusals``
    /// at once, the rest are closed at once.
    static let refusalLinger = TimeAmount.seconds(2)

    /// What a refused connection reads before the close: an HTTP 503 (it has not sent its
    /// request yet; a browser shows the reason, a WebSocket client sees the upgrade fail).
    static func farewell(_ refusal: ConnectionRefusal, maxConnections: Int) -> ByteBuffer {
        let reason =
            switch refusal {
            case .portFull:
                "the server holds its most connections (\(maxConnections), --max-connections); try again later\n"
            case .addressFull(let source, let maximum):
                "\(source) has the most connections one network may open (\(maximum), --max-connections-per-address); close one or try again later\n"
            }
        return ClosingHTTPAnswer.plainText(status: "503 Service Unavailable", reason: reason)
    }
}
