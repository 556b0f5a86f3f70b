import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the server's certificate and key (``ServerTLS/reload()``) on every SIGHUP, the
/// signal a certificate renewal hook sends (`certbot renew --deploy-hook "pkill -HUP -x
/// matchhost"`), so that a renewed certificate is served without a restart.
///
/// Each reload is logged with the certificate it now serves; one that fails is logged as an
/// error and the certificate served so far stays.
public struct TLSReloadOnHangup: Service {
    private let tls: ServerTLS
    private let logger: Logger

    /// Reloads `tls` on SIGHUP until graceful shutdown.
    public init(tls: ServerTLS, logger: Logger) {
        self.tls = tls
        self.logger = logger
    }

    /// Waits for SIGHUPs until graceful shutdown.
    public func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        for await _ in hangups.cancelOnGracefulShutdown() {
            do {
                try self.tls.reload().logServed("TLS certificate reloaded", to: self.logger)
            } catch {
                self.logger.error(
                    "TLS certificate not reloaded; the one loaded before is still served",
                    metadata: ["error": "\(error)"])
            }
        }
    }
}
