import NIOCore
import NIOSSL

/// The first handler of a port that speaks TLS: it reads the connection's first byte and
/// either puts a TLS server handler in its own place, or, for a client that speaks plaintext
/// to it, answers in plaintext what the port expects and closes.
///
/// A TLS connection begins with a handshake record (byte 0x16); a native frame begins with
/// its length (0x00 for any frame under 16 MiB) and an HTTP request with a letter. So the
/// first byte tells them apart, and a client that forgot TLS learns why it is refused (ERROR
/// `TLS_REQUIRED`, an HTTP 400) rather than seeing a handshake fail on bytes it never meant.
///
/// Until the first byte has decided, nothing the handlers behind write may pass (a handshake
/// deadline's ERROR would go out in plaintext on a port that promises TLS): the gate drops it.
/// Once plaintext has decided, it drops everything but its own answer, which it writes from
/// its own context.
final class TLSPortGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The first byte of every TLS record that opens a handshake.
    static let handshakeRecord: UInt8 = 0x16

    private let tls: ServerTLS
    private let plaintextAnswer: ByteBuffer
    private let linger: TimeAmount?
    private let afterHandshake: (any ChannelHandler)?
    private let deadline: TimeAmount?
    private var decided = false

    /// - Parameters:
    ///   - plaintextAnswer: what a plaintext client reads before the close.
    ///   - linger: for a client that speaks first (HTTP): how long the connection is kept
    ///     half-closed for it to read the answer (see ``RefusedConnectionHandler``).
    ///   - afterHandshake: a handler to add behind the TLS handler (a refused connection's
    ///     farewell, which must go out encrypted); the handlers already behind the gate are
    ///     kept either way.
    ///   - deadline: how long the connection may stay open at all, handshake included (a
    ///     refused one); nil leaves that to the handlers behind (each has its own deadline).
    init(
        tls: ServerTLS, plaintextAnswer: ByteBuffer, linger: TimeAmount?, afterHandshake: (any ChannelHandler)? = nil,
        deadline: TimeAmount? = nil
    ) {
        self.tls = tls
        self.plaintextAnswer = plaintextAnswer
        self.linger = linger
        self.afterHandshake = afterHandshake
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard let deadline = self.deadline else { return }
        let channel = context.channel
        // The channel's, not the gate's: it outlives the gate, which leaves at the handshake.
        let timer = context.eventLoop.scheduleTask(in: deadline) { channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in timer.cancel() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.decided else { return }
        let bytes = Self.unwrapInboundIn(data)
        guard let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else { return }
        self.decided = true
        guard first == Self.handshakeRecord else {
            RefusedConnectionHandler.sayFarewell(self.plaintextAnswer, linger: self.linger, context: context)
            return
        }
        do {
            let pipeline = context.pipeline.syncOperations
            let handler = NIOSSLServerHandler(context: self.tls.context)
            try pipeline.addHandler(handler, position: .after(self))
            if let next = self.afterHandshake {
                try pipeline.addHandler(next, position: .after(handler))
            }
        } catch {
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(self, promise: nil)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        promise?.fail(TLSPortGateDroppedWrite())
    }
}

/// A write dropped by ``TLSPortGate``: the connection had not begun TLS.
struct TLSPortGateDroppedWrite: Error, CustomStringConvertible {
    var description: String { "written before the connection began TLS: not sent" }
}
