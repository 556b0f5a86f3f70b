import ArgumentParser
import Foundation
import MatchHostAdmin
import MatchHostClient
import MatchHostCore
import MatchHostServer
import MatchHostSQLite
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Where the running server's admin endpoints are, and the key their actions need: what
/// `ban`, `unban`, `recover`, `link-code`, `unlink-device` and `rename` share.
struct AdminActionOptions: ParsableArguments {
    @Option(help: "The server's data directory: its admin.key authorizes the action, its database names the player.")
    var data = "data"

    @Option(name: .customLong("admin-host"), help: "The address of the running server's admin endpoints.")
    var adminHost = "127.0.0.1"

    @Option(name: .customLong("admin-port"), help: "The port of the running server's admin endpoints.")
    var adminPort = 7356

    @Flag(
        name: .customLong("admin-tls"),
        help: "Speak HTTPS to the admin endpoints (a server started with --admin-tls), trusting the system's certificate authorities.")
    var adminTLS = false

    @Option(
        name: .customLong("admin-tls-ca"),
        help: "Speak HTTPS to the admin endpoints, trusting only the PEM certificates in this file: your own certificate authority, or the server's self-signed certificate.")
    var adminTLSAuthority: String?

    @Option(
        name: .customLong("admin-tls-server-name"),
        help: "The name the server's certificate must carry, when --admin-host is not it (a certificate for games.example.com, reached on 127.0.0.1 from the server itself).")
    var adminTLSServerName: String?

    func validate() throws {
        guard (1...65535).contains(self.adminPort) else { throw ValidationError("--admin-port must be 1-65535") }
    }

    /// How the admin endpoints are spoken to: nil for plain HTTP.
    var tls: MatchHostClient.TLS? {
        var settings = ClientTLSOptions.settings(
            enabled: self.adminTLS || self.adminTLSServerName != nil, certificateAuthority: self.adminTLSAuthority)
        settings?.serverName = self.adminTLSServerName
        return settings
    }

    /// Finds the player `given` names in the database (as `matchhost player` does), then sends
    /// `method` to its endpoint `/api/players/<id>/<action>` with the admin key, and returns what
    /// the server answered. With no database in `--data` (a server on `--store memory`), `given`
    /// goes as it is, a whole player id, and the server looks for it in its own store.
    /// - Parameter tutorialRefusal: why the action cannot apply to a Cat Race port player, which
    ///   has no account.
    /// - Throws: `ExitCode(1)` (after one line on standard error) for a player not found or an
    ///   action the server refused, `ExitCode(2)` for a key or server that cannot be reached.
    func act<Answer: Decodable>(
        _ method: HTTPMethod, _ action: String, on given: String, body: (any Encodable)? = nil, tutorialRefusal: String
    ) async throws -> Answer {
        let key: String
        do {
            key = hexEncoded(try SecretKeyFile.admin(directory: self.data).read())
        } catch {
            FileHandle.standardError.write(Data("matchhost: \(error) (a server started with this --data and its admin endpoints makes it)\n".utf8))
            throw ExitCode(2)
        }
        var playerID = given
        var refusal: String?
        let databasePath = URL(fileURLWithPath: self.data).appendingPathComponent(SQLiteGameStore.fileName).path
        if !FileManager.default.fileExists(atPath: databasePath) {
            // Nothing to look the player up in: only a whole id can name it.
            guard given.utf8.count == 32, given.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
                FileHandle.standardError.write(
                    Data(
                        "matchhost: no database in \(self.data) to find \(given) in (a server on --store memory?): name the player by its whole id, 32 hex digits\n"
                            .utf8))
                throw ExitCode(1)
            }
        } else {
            try await withStoredData(self.data) { store in
                let (id, tutorialID) = try await StoredPlayerLookup.find(given, in: store)
                playerID = id
                if tutorialID != nil {
                    refusal = "\(given) is a Cat Race tutorial playerId: that port has no authentication, so \(tutorialRefusal)"
                } else if try await store.player(id: id) == nil {
                    refusal = "\(id) has no account (a Cat Race port player), so \(tutorialRefusal)"
                }
            }
        }
        if let refusal {
            FileHandle.standardError.write(Data("matchhost: \(refusal)\n".utf8))
            throw ExitCode(1)
        }
        let answer: AdminHTTPAnswer
        do {
            answer = try await AdminHTTPAnswer.fetch(
                method, path: "/api/players/\(playerID)/\(action)", host: self.adminHost, port: self.adminPort, tls: try self.tls?.makeContext(),
                serverHostname: self.tls?.serverHostname(host: self.adminHost), bearer: key, body: try body.map { try JSONEncoder().encode($0) })
        } catch is AdminHTTPAnswer.TimedOut {
            FileHandle.standardError.write(
                Data(
                    "matchhost: the server took the request but did not answer within \(AdminHTTPAnswer.timeoutSeconds) s (a slow database?); it may still be applied: see `matchhost player \(playerID)`\n"
                        .utf8))
            throw ExitCode(2)
        } catch let error as MatchHostClientError {
            // The trusted certificates could not be read: nothing was sent.
            FileHandle.standardError.write(Data("matchhost: \(error)\n".utf8))
            throw ExitCode(2)
        } catch where error is NIOSSLError || error is NIOSSLExtraError {
            // The port answered: the handshake failed, or the certificate was not trusted.
            FileHandle.standardError.write(
                Data(
                    "matchhost: TLS with the admin endpoints at \(self.adminHost):\(self.adminPort) failed (\(error)); is the server started with --admin-tls, and is its certificate trusted (--admin-tls-ca) and named for --admin-host (or --admin-tls-server-name)?\n"
                        .utf8))
            throw ExitCode(2)
        } catch {
            // No connection, or no answer: TLS's failures are above.
            FileHandle.standardError.write(
                Data(
                    "matchhost: no answer from the admin endpoints at \(self.adminHost):\(self.adminPort) (\(error)); is `matchhost serve --data \(self.data)` running with them?\n"
                        .utf8))
            throw ExitCode(2)
        }
        guard answer.status == 200, let state = try? JSONDecoder().decode(Answer.self, from: answer.body) else {
            // A JSON failure from the endpoints, or a plain-text one from the port (HTTPS only).
            let text = String(decoding: answer.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let message =
                (try? JSONDecoder().decode(AdminAction.Failure.self, from: answer.body))?.error
                ?? (text.isEmpty || text.utf8.count > 300 ? "HTTP \(answer.status)" : "HTTP \(answer.status): \(text)")
            FileHandle.standardError.write(Data("matchhost: the server refused: \(message)\n".utf8))
            throw ExitCode(1)
        }
        return state
    }
}

/// One HTTP/1.1 exchange with the admin endpoints (NIOHTTP1's client codec), answered whole.
struct AdminHTTPAnswer {
    var status: Int
    var body: Data

    /// How long ``fetch(_:path:host:port:tls:serverHostname:bearer:body:)`` waits for the whole answer.
    static let timeoutSeconds: Int64 = 30

    /// The server did not answer within ``timeoutSeconds``.
    struct TimedOut: Error {}

    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        private var status = 0
        private var body = Data()
        private let done: EventLoopPromise<AdminHTTPAnswer>

        init(done: EventLoopPromise<AdminHTTPAnswer>) { self.done = done }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch Self.unwrapInboundIn(data) {
            case .head(let head): self.status = Int(head.status.code)
            case .body(let buffer): self.body.append(contentsOf: buffer.readableBytesView)
            case .end:
                self.done.succeed(AdminHTTPAnswer(status: self.status, body: self.body))
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.done.fail(ChannelError.eof)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            self.done.fail(error)
            context.close(promise: nil)
        }
    }

    /// Sends `method` `path` with the bearer token and a JSON body, over TLS with `tls` (checking
    /// the certificate against `serverHostname`, or the address for nil), and waits (at most
    /// ``timeoutSeconds``) for the whole answer.
    static func fetch(
        _ method: HTTPMethod, path: String, host: String, port: Int, tls: NIOSSLContext?, serverHostname: String?, bearer: String, body: Data?
    ) async throws -> AdminHTTPAnswer {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let done = loop.makePromise(of: AdminHTTPAnswer.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(.seconds(10))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverHostname))
                        }
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(Collector(done: done))
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            // No channel, so no collector will complete it.
            done.fail(error)
            throw error
        }
        let timeout = loop.scheduleTask(in: .seconds(Self.timeoutSeconds)) { done.fail(TimedOut()) }
        defer { timeout.cancel() }
        let hostField = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"  // an IPv6 address in brackets
        var headers = HTTPHeaders([("Host", hostField), ("Authorization", "Bearer \(bearer)"), ("Connection", "close")])
        let bytes = body ?? Data()
        headers.add(name: "Content-Length", value: "\(bytes.count)")
        if body != nil { headers.add(name: "Content-Type", value: "application/json") }
        channel.write(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers)), promise: nil)
        if !bytes.isEmpty { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: bytes))), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        defer { channel.close(promise: nil) }
        return try await done.futureResult.get()
    }
}
