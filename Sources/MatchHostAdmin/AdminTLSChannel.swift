import HummingbirdCore
import Logging
import MatchHostServer
import NIOCore

/// The admin endpoints' HTTP channel behind TLS (`serve --admin-tls`), with the server's
/// reloadable certificate: unlike HummingbirdTLS's `TLSChannel`, whose context is fixed when
/// the server is built, each connection takes the certificate served when it begins TLS, so
/// the SIGHUP that renews the game ports' certificate renews this one too. A client that
/// speaks plain HTTP to it is answered a 400 that says to use https, as the web port does.
struct AdminTLSChannel<Base: HTTPChannelHandler>: HTTPChannelHandler {
    typealias Value = Base.Value

    /// The HTTP/1.1 channel the decrypted bytes go to.
    let base: Base
    /// The certificate and key, reloadable.
    let tls: ServerTLS

    var responder: HTTPChannelHandler.Responder { self.base.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(self.tls.makePortGate(plaintextAnswer: adminPlaintextAnswer))
        }.flatMap {
            self.base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await self.base.handle(value: value, logger: logger)
    }
}

/// What a plain HTTP client of the admin port is told before the close, when it speaks HTTPS
/// (made once: a generic type holds no static stored property).
private let adminPlaintextAnswer = ClosingHTTPAnswer.plainText(
    status: "400 Bad Request", reason: "the admin endpoints speak HTTPS only: use https:// (matchhost's admin commands: --admin-tls or --admin-tls-ca)\n")
