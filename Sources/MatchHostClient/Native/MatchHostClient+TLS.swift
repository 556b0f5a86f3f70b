import NIOCore
import NIOSSL

extension MatchHostClient {
    /// How the client speaks TLS to a server that serves it (`matchhost serve
    /// --tls-certificate … --tls-key …`): which certificates it trusts, and the name the
    /// server's certificate must carry.
    ///
    /// ```swift
    /// configuration.tls = .init()                                    // a public CA's certificate
    /// configuration.tls = .init(trust: .pemFile("/path/to/ca.pem"))  // your own CA, or a self-signed one
    /// ```
    public struct TLS: Sendable, Hashable {
        /// The certificates a server's certificate must chain up to.
        public enum Trust: Sendable, Hashable {
            /// The system's trusted certificate authorities (Let's Encrypt, or any public CA).
            case system
            /// The PEM certificates in a file, and only those: a private certificate authority,
            /// or the server's self-signed certificate itself.
            case pemFile(String)
            /// The same, as PEM text (bundled with an app, say).
            case pem(String)
        }

        /// Which certificates are trusted (default: the system's).
        public var trust: Trust
        /// The name the server's certificate must carry, also sent as the TLS server name
        /// (SNI). Nil (the default): ``Configuration/host``; an IP address there sends no
        /// server name. A certificate that names the IP address connected to passes too.
        public var serverName: String?

        /// Trusts `trust` and checks the certificate against `serverName` (default: the host).
        public init(trust: Trust = .system, serverName: String? = nil) {
            self.trust = trust
            self.serverName = serverName
        }

        /// The TLS context these settings make, as every connection of one client shares it
        /// (for a tool that opens connections of its own). Building it reads the trusted
        /// certificates (blocking disk I/O): build it once, off the event loop.
        /// - Throws: ``MatchHostClientError/tlsFailed(_:)`` when they cannot be read.
        public func makeContext() throws -> NIOSSLContext {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.minimumTLSVersion = .tlsv12
            switch self.trust {
            case .system:
                configuration.trustRoots = .default
            case .pemFile(let path):
                do {
                    configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
                } catch {
                    throw MatchHostClientError.tlsFailed("cannot read the trusted certificates in \(path) (\(error))")
                }
            case .pem(let text):
                do {
                    configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(text.utf8)))
                } catch {
                    throw MatchHostClientError.tlsFailed("cannot read the trusted PEM certificates (\(error))")
                }
            }
            do {
                return try NIOSSLContext(configuration: configuration)
            } catch {
                throw MatchHostClientError.tlsFailed("cannot set up TLS (\(error))")
            }
        }

        /// The server name to send and check: none for an IP address (SNI takes host names
        /// only; the certificate is then checked against the address connected to). For a tool
        /// that opens connections of its own to `host`, with ``makeContext()``.
        public func serverHostname(host: String) -> String? {
            let name = self.serverName ?? host
            let isAddress = (try? SocketAddress(ipAddress: name, port: 0)) != nil
            return isAddress ? nil : name
        }
    }
}
