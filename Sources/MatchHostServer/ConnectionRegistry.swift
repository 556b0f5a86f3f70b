import Logging
import Metrics
import NIOCore

/// Why a connection was refused before it was admitted.
enum ConnectionRefusal: Equatable {
    /// The port holds `--max-connections`.
    case portFull
    /// The connection's network holds `--max-connections-per-address` on this port.
    case addressFull(source: String, maximum: Int)
}

/// The open connections of one port, from the moment each is admitted until it closes
/// (closed by shutdown), bounded by `--max-connections`, and per source network (an IPv4
/// address, an IPv6 /64: ``NetworkBudget/source(of:)``) by
/// `--max-connections-per-address`, so that one machine cannot take every place. When the port
/// or a network is full it says so once in the log (not once per refused connection: a flood
/// would drown it) and counts every refusal in `matchhost_connections_refused_total` (by
/// `reason`: `port_full`, `address_full`). Loop-confined (the world's loop, where every
/// connection of the port is set up).
final class ConnectionRegistry {
    let maximum: Int
    let maximumPerAddress: Int
    private var channels: [ObjectIdentifier: any Channel] = [:]
    /// Open connections per source network; a network with none has no entry.
    private var perSource: [String: Int] = [:]
    /// Networks refused since they last had room: each is logged once while it stays full
    /// (until half its connections have closed). At most `maximum / (maximumPerAddress / 2 + 1)`.
    private var fullSources: Set<String> = []
    private let port: String
    private let logger: Logger
    private let refusedPortFull: Counter
    private let refusedAddressFull: Counter
    private var isRefusing = false

    /// - Parameter port: the port's name in the log and the metric (`catrace`, `native`).
    init(maximum: Int, maximumPerAddress: Int, port: String, logger: Logger) {
        self.maximum = maximum
        self.maximumPerAddress = maximumPerAddress
        self.port = port
        self.logger = logger
        self.refusedPortFull = Counter(label: "matchhost_connections_refused_total", dimensions: [("port", port), ("reason", "port_full")])
        self.refusedAddressFull = Counter(
            label: "matchhost_connections_refused_total", dimensions: [("port", port), ("reason", "address_full")])
    }

    /// Refused connections held half-open at most at once (``RefusedConnectionHandler``'s
    /// `linger`): each holds a file descriptor a moment longer, so a flood of them must not
    /// take the descriptors the open connections need. Past it a refusal closes at once.
    static let maximumLingeringRefusals = 32
    private var lingeringRefusals = 0

    /// Whether a refused `channel` may linger (and counts it until it closes if so).
    func mayLinger(_ channel: any Channel) -> Bool {
        guard self.lingeringRefusals < Self.maximumLingeringRefusals else { return false }
        self.lingeringRefusals += 1
        let registry = NIOLoopBound(self, eventLoop: channel.eventLoop)
        channel.closeFuture.whenComplete { _ in registry.value.lingeringRefusals -= 1 }
        return true
    }

    var count: Int { self.channels.count }
    var all: [any Channel] { Array(self.channels.values) }

    /// Admits `channel` as it is set up, if the port and its network have room: it counts from
    /// then until it closes; returns nil then, and why not otherwise. Counted here, not at
    /// channelActive: connections accepted in one burst are all set up before any becomes
    /// active, and each must see the others.
    func admit(_ channel: any Channel) -> ConnectionRefusal? {
        guard self.channels.count < self.maximum else {
            self.refusedPortFull.increment()
            if !self.isRefusing {
                self.isRefusing = true
                self.logger.warning(
                    "connection limit reached: new connections are refused until some close (--max-connections)",
                    metadata: ["port": "\(self.port)", "open": "\(self.channels.count)", "maximum": "\(self.maximum)"])
            }
            return .portFull
        }
        let source = NetworkBudget.source(of: channel.remoteAddress)
        let fromSource = self.perSource[source] ?? 0
        guard fromSource < self.maximumPerAddress else {
            self.refusedAddressFull.increment()
            if self.fullSources.insert(source).inserted {
                self.logger.warning(
                    "connection limit of a network reached: its new connections are refused until some close (--max-connections-per-address; behind a proxy every client has its address: raise it)",
                    metadata: ["port": "\(self.port)", "source": "\(source)", "maximum": "\(self.maximumPerAddress)"])
            }
            return .addressFull(source: source, maximum: self.maximumPerAddress)
        }
        if self.isRefusing {
            self.isRefusing = false
            self.logger.notice("accepting connections again", metadata: ["port": "\(self.port)", "open": "\(self.channels.count)"])
        }
        self.channels[ObjectIdentifier(channel)] = channel
        self.perSource[source] = fromSource + 1
        let registry = NIOLoopBound(self, eventLoop: channel.eventLoop)
        channel.closeFuture.whenComplete { _ in registry.value.closed(channel, from: source) }
        return nil
    }

    private func closed(_ channel: any Channel, from source: String) {
        self.channels[ObjectIdentifier(channel)] = nil
        let left = (self.perSource[source] ?? 1) - 1
        self.perSource[source] = left > 0 ? left : nil
        // Logged again only once it has emptied by half: a network at its limit that closes
        // and opens over and over gets no line each time.
        if left <= self.maximumPerAddress / 2 { self.fullSources.remove(source) }
    }
}

/// A connection refused (``ConnectionRefusal``): it is told why, if its protocol can say it
/// (`farewell`, one whole frame), and closed, reading nothing it sent.
final class RefusedConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let farewell: ByteBuffer?
    private let linger: TimeAmount?

    /// - Parameter linger: for a client that speaks first (an HTTP request is on its way as
    ///   the farewell goes out): only the sending side is closed after the farewell, and the
    ///   rest when the client closes or after this long. Closing a socket with the request
    ///   unread would reset it, and the reset can destroy the farewell before it is read.
    init(farewell: ByteBuffer?, linger: TimeAmount? = nil) {
        self.farewell = farewell
        self.linger = linger
    }

    private var said = false

    func handlerAdded(context: ChannelHandlerContext) {
        // Added behind a TLS handler when a client begins TLS (``TLSPortGate``): channelActive
        // has passed, and the farewell waits in the TLS handler until the handshake ends.
        if context.channel.isActive { self.begin(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.begin(context: context)
    }

    private func begin(context: ChannelHandlerContext) {
        guard !self.said else { return }
        self.said = true
        Self.sayFarewell(self.farewell, linger: self.linger, context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    /// Writes `farewell` from `context` toward the socket (past no handler behind it) and
    /// closes: at once once written, or, with `linger`, the sending side only, and the rest
    /// when the client closes or `linger` runs out.
    static func sayFarewell(_ farewell: ByteBuffer?, linger: TimeAmount?, context: ChannelHandlerContext) {
        let channel = context.channel
        guard let farewell else {
            channel.close(promise: nil)
            return
        }
        guard let linger else {
            context.writeAndFlush(NIOAny(farewell)).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        context.writeAndFlush(NIOAny(farewell)).whenComplete { _ in
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
        }
        let deadline = channel.eventLoop.scheduleTask(in: linger) { channel.close(promise: nil) }
        // A client that closes first takes its timer with it: a flood of refused connections
        // holds no more timers than lingering connections.
        channel.closeFuture.whenComplete { _ in deadline.cancel() }
    }
}
