import MatchHostWire
import NIOCore
import NIOSSL

/// One TCP connection of a ``ClientSession``: its channel, its framing and its timers.
///
/// A session opens one after another (the first, then one per reconnect); only the newest
/// counts, and callbacks from an older one are ignored. Confined to the session's event loop.
final class ClientConnection {
    /// Where the connection is in its handshake.
    enum Phase: Equatable {
        /// TCP connect in progress.
        case connecting
        /// `HELLO` sent.
        case awaitingWelcome
        /// `AUTHENTICATE` sent.
        case awaitingAuthenticated
        /// `RESUME` sent.
        case awaitingResumed
        /// The session flows over this connection.
        case active
        /// Given up on: closing or closed.
        case finished
    }

    /// The connection's number within its session, for logs.
    let number: Int
    var phase: Phase = .connecting
    var channel: (any Channel)?
    var accumulator: FrameAccumulator
    /// When bytes last arrived.
    var lastReadAt = NIODeadline.now()
    /// The server's idle timeout (from `WELCOME`).
    var idleTimeout: TimeAmount?
    var handshakeTimer: Scheduled<Void>?
    var heartbeatTimer: Scheduled<Void>?
    var idleTimer: Scheduled<Void>?

    init(number: Int, maximumFrameBytes: Int) {
        self.number = number
        self.accumulator = FrameAccumulator(maximumBodySize: maximumFrameBytes)
    }

    /// Whether the connection has bytes for the session (handshake done or under way).
    var isOpen: Bool { self.phase != .connecting && self.phase != .finished }

    /// Stops every timer of this connection.
    func cancelTimers() {
        self.handshakeTimer?.cancel()
        self.heartbeatTimer?.cancel()
        self.idleTimer?.cancel()
        self.handshakeTimer = nil
        self.heartbeatTimer = nil
        self.idleTimer = nil
    }

    /// Writes a whole frame (not flushed).
    func write(_ frame: NativeFrame) {
        guard let channel = self.channel else { return }
        channel.write(frame.encodedFrame(allocator: channel.allocator), promise: nil)
    }

    /// Flushes what was written.
    func flush() {
        self.channel?.flush()
    }
}

/// The channel handler of a client connection: passes bytes and channel events to the session.
final class ClientConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let session: ClientSession
    private let connection: ClientConnection

    init(session: ClientSession, connection: ClientConnection) {
        self.session = session
        self.connection = connection
    }

    func channelActive(context: ChannelHandlerContext) {
        self.session.connectionDidBecomeActive(self.connection)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.session.connection(self.connection, didRead: self.unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.session.connectionDidFinishReadBatch(self.connection)
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        self.session.connectionWritabilityDidChange(self.connection)
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.session.connection(self.connection, didCloseWith: MatchHostClientError.connectionFailed("connection closed"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let failure =
            if Self.isTLSFailure(error) {
                MatchHostClientError.tlsFailed(Self.tlsFailureDetail(error))
            } else {
                MatchHostClientError.connectionFailed("\(error)")
            }
        self.session.connection(self.connection, didCloseWith: failure)
        context.close(promise: nil)
    }

    /// What a TLS failure says to whoever runs the client: for a certificate it does not trust
    /// (a self-signed one, most often), how to trust it; otherwise BoringSSL's error without
    /// the source file it came from (a path on the machine that built the client).
    static func tlsFailureDetail(_ error: any Error) -> String {
        let detail = "\(error)".replacing(/\s+at \/[^\]\s]*:[0-9]+/, with: "")
        guard detail.contains("CERTIFICATE_VERIFY_FAILED") else { return detail }
        return """
            the server's certificate was not accepted (CERTIFICATE_VERIFY_FAILED): no authority this client trusts signed \
            it, or it has expired or is not valid yet. Trust that certificate, or the authority that signed it \
            (Configuration.tls = .init(trust: .pemFile(path)); matchhost's commands: --tls-ca FILE); or renew it
            """
    }

    /// Whether TLS itself failed (the handshake, the certificate), as opposed to a connection
    /// that dropped without TLS's goodbye, which is a dropped connection like any other.
    static func isTLSFailure(_ error: any Error) -> Bool {
        switch error {
        case NIOSSLError.uncleanShutdown: false
        // The server closed before the handshake ended (a refusal past its lingering ones):
        // a dropped connection, not a certificate problem.
        case NIOSSLError.handshakeFailed(.sslError(let stack)) where stack == [.eofDuringHandshake]: false
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError: true
        default: false
        }
    }
}
