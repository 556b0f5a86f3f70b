import ArgumentParser
import Foundation
import MatchHostAdmin
import MatchHostCore
import MatchHostServer
import NIOCore
import NIOHTTP1
import NIOPosix

/// Where the running server's admin endpoints are, and the key their actions need: what
/// `ban` and `unban` share.
struct AdminActionOptions: ParsableArguments {
    @Option(help: "The server's data directory: its admin.key authorizes the action, its database names the player.")
    var data = "data"

    @Option(name: .customLong("admin-host"), help: "The address of the running server's admin endpoints.")
    var adminHost = "127.0.0.1"

    @Option(name: .customLong("admin-port"), help: "The port of the running server's admin endpoints.")
    var adminPort = 7356

    func validate() throws {
        guard (1...65535).contains(self.adminPort) else { throw ValidationError("--admin-port must be 1-65535") }
    }

    /// Finds the player `given` names in the database (as `matchhost player` does), then sends
    /// `method` to its ban endpoint with the admin key, and returns what the server answered.
    /// - Throws: `ExitCode(1)` (after one line on standard error) for a player not found or an
    ///   action the server refused, `ExitCode(2)` for a key or server that cannot be reached.
    func act(_ method: HTTPMethod, on given: String, body: PlayerBanEndpoints.BanRequest?) async throws -> PlayerBanEndpoints.BanState {
        let key: String
        do {
            key = hexEncoded(try SecretKeyFile.admin(directory: self.data).read())
        } catch {
            FileHandle.standardError.write(Data("matchhost: \(error) (a server started with this --data and its admin endpoints makes it)\n".utf8))
            throw ExitCode(2)
        }
        var playerID = given
        var refusal: String?
        try await withStoredData(self.data) { store in
            let (id, tutorialID) = try await StoredPlayerLookup.find(given, in: store)
            playerID = id
            if tutorialID != nil {
                refusal = "\(given) is a Cat Race tutorial playerId: that port has no authentication, so a ban cannot keep its client out"
            } else if try await store.player(id: id) == nil {
                refusal = "\(id) has no account (a Cat Race port player): there is nothing to ban"
            }
        }
        if let refusal {
            FileHandle.standardError.write(Data("matchhost: \(refusal)\n".utf8))
            throw ExitCode(1)
        }
        let answer: AdminHTTPAnswer
        do {
            answer = try await AdminHTTPAnswer.fetch(
                method, path: "/api/players/\(playerID)/ban", host: self.adminHost, port: self.adminPort, bearer: key,
                body: try body.map { try JSONEncoder().encode($0) })
        } catch is AdminHTTPAnswer.TimedOut {
            FileHandle.standardError.write(
                Data(
                    "matchhost: the server took the request but did not answer within \(AdminHTTPAnswer.timeoutSeconds) s (a slow database?); it may still be applied: see `matchhost player \(playerID)`\n"
                        .utf8))
            throw ExitCode(2)
        } catch {
            FileHandle.standardError.write(
                Data(
                    "matchhost: no answer from the admin endpoints at \(self.adminHost):\(self.adminPort) (\(error)); is `matchhost serve --data \(self.data)` running with them?\n"
                        .utf8))
            throw ExitCode(2)
        }
        guard answer.status == 200, let state = try? JSONDecoder().decode(PlayerBanEndpoints.BanState.self, from: answer.body) else {
            let message = (try? JSONDecoder().decode(PlayerBanEndpoints.Failure.self, from: answer.body))?.error ?? "HTTP \(answer.status)"
            FileHandle.standardError.write(Data("matchhost: the server refused: \(message)\n".utf8))
            throw ExitCode(1)
        }
        return state
    }
}

/// `matchhost ban PLAYER`: the running server bans a player.
struct BanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ban",
        abstract: "Ban a player from the running server: its session ends, and it can no longer sign in.",
        discussion: """
            Asks the server running on --data, through its admin endpoints, authorized by the \
            admin.key in --data. The ban is stored before the command returns and lasts across \
            restarts, for --for (from now, on the server's clock) or until `matchhost unban`. \
            Banning a banned player replaces its ban. The player's connection gets ERROR \
            PLAYER_BANNED with the reason (and the ban's end), its matches see it leave, and its \
            device and token sign-ins are refused with the same error. A Cat Race port client \
            cannot be banned: that port has no authentication. `matchhost bans` lists the bans.
            """)

    @Argument(help: "The player id, or its first characters (at least 4).")
    var player: String

    @Option(help: "Why, in at most 200 bytes: the player is told it.")
    var reason = ""

    @Option(
        name: .customLong("for"),
        help: ArgumentHelp("How long the ban lasts: a number and a unit, s, m, h, d or w (90m, 7d); at most ten years. Without it: until unbanned.", valueName: "duration"))
    var duration: BanDuration?

    @OptionGroup var admin: AdminActionOptions

    func validate() throws {
        guard self.reason.utf8.count <= PlayerBanEndpoints.maximumReasonBytes else {
            throw ValidationError("--reason must be at most \(PlayerBanEndpoints.maximumReasonBytes) bytes")
        }
    }

    func run() async throws {
        let state = try await self.admin.act(
            .POST, on: self.player, body: PlayerBanEndpoints.BanRequest(reason: self.reason, seconds: self.duration?.seconds))
        let until = state.until.map { " until \(formatted(UnixMillis(milliseconds: $0)))" } ?? ""
        print("banned \(state.player)\(until)" + (state.reason.map { $0.isEmpty ? "" : ": \($0)" } ?? ""))
    }
}

/// A ban's length as `--for` takes it: a whole number and one unit (`90m`, `12h`, `7d`).
struct BanDuration: ExpressibleByArgument, Hashable {
    /// The length in seconds: 1 to ``PlayerBanEndpoints/maximumBanSeconds``.
    var seconds: Int64

    private static let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400]

    init?(argument: String) {
        guard let unit = argument.last, let scale = Self.units[unit], let count = Int64(argument.dropLast()), count > 0 else { return nil }
        let (seconds, overflowed) = count.multipliedReportingOverflow(by: scale)
        guard !overflowed, seconds <= PlayerBanEndpoints.maximumBanSeconds else { return nil }
        self.seconds = seconds
    }
}

/// `matchhost bans`: the banned players, from the server's database.
struct BansCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bans",
        abstract: "List the banned players from the server's database.",
        discussion: """
            Reads the database in --data (the server may be running): one line per ban in force, \
            newest first, with the player's id and alias, when it was banned, until when, and why. \
            With --all, bans that have ended too (they stay in each player's record).
            """)

    @Flag(help: "Also list the timed bans that have ended.")
    var all = false

    @Option(help: "The server's data directory.")
    var data = "data"

    func run() async throws {
        try await withStoredData(self.data) { store in
            let now = UnixMillis.now()
            let bans = try await store.bannedPlayers()
                .filter { self.all || $0.value.isInForce(at: now) }
                .sorted { ($0.value.since, $0.key) > ($1.value.since, $1.key) }
            guard !bans.isEmpty else {
                print(self.all ? "no player has been banned" : "no player is banned")
                return
            }
            for (playerID, ban) in bans {
                let alias = try await store.player(id: playerID)?.alias ?? ""
                let end: String
                if let until = ban.until {
                    end = (ban.isInForce(at: now) ? "until " : "ended ") + formatted(until)
                } else {
                    end = "until lifted"
                }
                print("\(playerID)  \(alias)  since \(formatted(ban.since)), \(end)" + (ban.reason.isEmpty ? "" : ": \(ban.reason)"))
            }
        }
    }
}

/// `matchhost unban PLAYER`: the running server lifts a player's ban.
struct UnbanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unban",
        abstract: "Lift a player's ban on the running server: it can sign in again.",
        discussion: "Asks the server running on --data, as `matchhost ban` does.")

    @Argument(help: "The player id, or its first characters (at least 4).")
    var player: String

    @OptionGroup var admin: AdminActionOptions

    func run() async throws {
        let state = try await self.admin.act(.DELETE, on: self.player, body: nil)
        print("lifted the ban of \(state.player)")
    }
}

/// One HTTP/1.1 exchange with the admin endpoints (NIOHTTP1's client codec), answered whole.
struct AdminHTTPAnswer {
    var status: Int
    var body: Data

    /// How long ``fetch(_:path:host:port:bearer:body:)`` waits for the whole answer.
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

    /// Sends `method` `path` with the bearer token and a JSON body, and waits (at most
    /// ``timeoutSeconds``) for the whole answer.
    static func fetch(_ method: HTTPMethod, path: String, host: String, port: Int, bearer: String, body: Data?) async throws -> AdminHTTPAnswer {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let done = loop.makePromise(of: AdminHTTPAnswer.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(.seconds(10))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
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
