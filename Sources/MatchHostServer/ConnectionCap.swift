import Logging
import Metrics
import NIOCore

/// `--max-connections` on one port: whether one more connection may open, and, when the port is
/// full, saying so once in the log (not once per refused connection: a flood would drown it)
/// and counting every refusal in `matchhost_connections_refused_total`. Loop-confined (the
/// world's loop, where the port's connections are counted).
final class ConnectionCap {
    let maximum: Int
    private let port: String
    private let logger: Logger
    private let refused: Counter
    private var isRefusing = false

    /// - Parameter port: the port's name in the log and the metric (`catrace`, `native`).
    init(maximum: Int, port: String, logger: Logger) {
        self.maximum = maximum
        self.port = port
        self.logger = logger
        self.refused = Counter(label: "matchhost_connections_refused_total", dimensions: [("port", port)])
    }

    /// Whether a new connection may open while `open` are.
    func admits(open: Int) -> Bool {
        guard open >= self.maximum else {
            if self.isRefusing {
                self.isRefusing = false
                self.logger.notice("accepting connections again", metadata: ["port": "\(self.port)", "open": "\(open)"])
            }
            return true
        }
        self.refused.increment()
        if !self.isRefusing {
            self.isRefusing = true
            self.logger.warning(
                "connection limit reached: new connections are refused until some close (--max-connections)",
                metadata: ["port": "\(self.port)", "open": "\(open)", "maximum": "\(self.maximum)"])
        }
        return false
    }
}

/// A connection over `--max-connections`: it is told why, if its protocol can say it
/// (`farewell`, one whole frame), and closed, reading nothing it sent.
final class RefusedConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let farewell: ByteBuffer?

    init(farewell: ByteBuffer?) {
        self.farewell = farewell
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        guard let farewell = self.farewell else {
            channel.close(promise: nil)
            return
        }
        channel.writeAndFlush(farewell).whenComplete { _ in channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
