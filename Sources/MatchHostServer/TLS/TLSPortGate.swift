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
/// its own context. Once TLS has decided, what the TLS handler writes passes: its reply to a
/// ClientHello that came whole in the first read is written while the gate hands that read
/// on, before the gate has left the pipeline.
final class TLSPortGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The first byte of every TLS record that opens a handshake.
    static let handshakeRecord: UInt8 = 0x16

    private let port: TLSPortSetup
    private let refusal: RefusedConnectionHandler?
    private var decided = false
    /// TLS decided: the writes are the TLS handler's records.
    private var passingTLS = false

    /// - Parameters:
    ///   - port: the port's TLS context and its plaintext answer.
    ///   - refusal: for a connection the port refuses: its farewell, added behind the TLS
    ///     handler so that it goes out encrypted, and the whole connection then lives at most
    ///     ``TLSPortSetup/refusalDeadline``. Nil for an admitted connection, whose handlers
    ///     behind the gate have their own deadlines.
    init(port: TLSPortSetup, refusal: RefusedConnectionHandler? = nil) {
        self.port = port
        self.refusal = refusal
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard self.refusal != nil else { return }
        let channel = context.channel
        // The channel's, not the gate's: it outlives the gate, which leaves at the handshake.
        let timer = context.eventLoop.scheduleTask(in: TLSPortSetup.refusalDeadline) { channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in timer.cancel() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.decided else { return }
        let bytes = Self.unwrapInboundIn(data)
        guard let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else { return }
        self.decided = true
        guard first == Self.handshakeRecord else {
            RefusedConnectionHandler.sayFarewell(self.port.plaintextAnswer, linger: TLSPortSetup.plaintextLinger, context: context)
            return
        }
        do {
            let pipeline = context.pipeline.syncOperations
            let handler = NIOSSLServerHandler(context: self.port.tls.context)
            try pipeline.addHandler(handler, position: .after(self))
            if let next = self.refusal {
                try pipeline.addHandler(next, position: .after(handler))
            }
        } catch {
            context.close(promise: nil)
            return
        }
        self.passingTLS = true
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(self, promise: nil)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard self.passingTLS else {
            promise?.fail(TLSPortGateDroppedWrite())
            return
        }
        context.write(data, promise: promise)
    }
}

/// A write dropped by ``TLSPortGate``: the connection had not begun TLS.
struct TLSPortGateDroppedWrite: Error, CustomStringConvertible {
    var description: String { "written before the connection began TLS: not sent" }
}

extension ServerTLS {
    /// The first handler of a connection accepted on a port of another server (the admin
    /// endpoints') that speaks TLS only, with the certificate served at the moment the client
    /// begins TLS, so a reload applies to the next connection. A client that speaks plaintext
    /// is sent `plaintextAnswer` (one whole response in the port's plaintext protocol, which
    /// says why) and closed; until the first byte decides, nothing written behind it goes out.
    /// Make one for each connection, on its event loop.
    public func makePortGate(plaintextAnswer: ByteBuffer) -> any RemovableChannelHandler {
        TLSPortGate(port: TLSPortSetup(tls: self, plaintextAnswer: plaintextAnswer))
    }
}
