import Logging
import Metrics
import NIOCore

/// The open connections of one port, from the moment each is admitted until it closes
/// (closed by shutdown), bounded by `--max-connections`. When the port is full it says so once
/// in the log (not once per refused connection: a flood would drown it) and counts every
/// refusal in `matchhost_connections_refused_total`. Loop-confined (the world's loop, where
/// every connection of the port is set up).
final class ConnectionRegistry {
    let maximum: Int
    private var channels: [ObjectIdentifier: any Channel] = [:]
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

    var count: Int { self.channels.count }
    var all: [any Channel] { Array(self.channels.values) }

    /// Admits `channel` as it is set up, if the port has room: it counts from then until it
    /// closes. Counted here, not at channelActive: connections accepted in one burst are all
    /// set up before any becomes active, and each must see the others.
    func admit(_ channel: any Channel) -> Bool {
        guard self.channels.count >= self.maximum else {
            if self.isRefusing {
                self.isRefusing = false
                self.logger.notice("accepting connections again", metadata: ["port": "\(self.port)", "open": "\(self.channels.count)"])
            }
            self.channels[ObjectIdentifier(channel)] = channel
            let registry = NIOLoopBound(self, eventLoop: channel.eventLoop)
            channel.closeFuture.whenComplete { _ in registry.value.channels[ObjectIdentifier(channel)] = nil }
            return true
        }
        self.refused.increment()
        if !self.isRefusing {
            self.isRefusing = true
            self.logger.warning(
                "connection limit reached: new connections are refused until some close (--max-connections)",
                metadata: ["port": "\(self.port)", "open": "\(self.channels.count)", "maximum": "\(self.maximum)"])
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
