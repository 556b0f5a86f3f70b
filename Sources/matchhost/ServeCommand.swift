import ArgumentParser
import Foundation
import Logging
import MatchHostAdmin
import MatchHostCore
import MatchHostSQLite
import MatchHostServer
import MatchHostWire
import Metrics
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `matchhost serve`: run the server with its embedded defaults.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the MatchHost server.")

    @Option(help: "Address to listen on.")
    var host = "0.0.0.0"

    @Option(name: .customLong("catrace-port"), help: "Port of the Cat Race (tutorial) protocol; 0 picks a free port.")
    var catRacePort = 1955

    @Option(help: "Seconds (0-86400) a disconnected racer keeps its seat; a reserved seat waits as long. A racer away that long ends the race.")
    var grace: Double = 30

    @Option(name: .customLong("max-frame"), help: "Largest frame body accepted, in bytes (1 to 16 MiB).")
    var maxFrame = 64 * 1024

    @Option(name: .customLong("max-tap-rate"), help: "Cat Race steps per second refilled into each racer's bucket of 5 steps; faster moves are refused.")
    var maxTapRate: Double = 20

    @Option(name: .customLong("max-message-rate"), help: "Frames per second one connection may send (burst: one second's worth); over it the native port reads it more slowly, the Cat Race port closes it.")
    var maxMessageRate: Double = 100

    @Option(
        name: .customLong("max-inbound-rate"),
        help: "Bytes per second one connection may send (burst: one second's worth, or one --max-frame frame if more); over it the native port reads it more slowly, the Cat Race port closes it.")
    var maxInboundRate = 64 * 1024

    @Option(
        name: .customLong("max-outbound"),
        help: "Bytes (at least 1024) that may wait to be sent to one connection; past them it has --slow-consumer-grace to catch up.")
    var maxOutbound = 256 * 1024

    @Option(
        name: .customLong("slow-consumer-grace"),
        help: "Seconds (0-3600) a connection may stay over --max-outbound before it is closed as too slow; 0 closes it at once.")
    var slowConsumerGrace: Double = 10

    @Option(name: .customLong("max-racers"), help: "Most racers in one Cat Race match (2-16).")
    var maxRacers = 16

    @Option(help: "Listen backlog (capped by the kernel's net.core.somaxconn).")
    var backlog = 4096

    @Option(
        name: .customLong("max-connections"),
        help: "Most connections open at once on each port; one more is closed as it arrives (native: ERROR SERVER_FULL). Default: 20000, or what the open-file limit holds on both ports.")
    var maxConnections: Int?

    /// `--max-connections` when it is not given: 20,000, or fewer if the open-file limit (once
    /// raised) cannot hold that many on both ports, so that connections past it are refused
    /// (SERVER_FULL) rather than left waiting for a descriptor.
    static func defaultMaxConnections(openFileLimit: UInt64) -> Int {
        // 0: the limit could not be read; assume it holds the usual number.
        guard openFileLimit > 0 else { return 20_000 }
        return Int(max(1, min(20_000, connectionDescriptors(underOpenFileLimit: openFileLimit) / 2)))
    }

    @Option(
        name: .customLong("max-sessions"),
        help: "Most native sessions live at once, connected or waiting --session-grace for a resume; one more login gets ERROR SERVER_FULL. Default: twice --max-connections.")
    var maxSessions: Int?

    @Option(
        name: .customLong("max-connections-per-address"),
        help: "Most connections open at once on each port from one network (an IPv4 address, an IPv6 /64); one more is closed as it arrives (native: ERROR SERVER_FULL).")
    var maxConnectionsPerAddress = 1_000

    @Option(help: "Port of the native protocol; 0 picks a free port.")
    var port = 7355

    @Option(name: .customLong("game-id"), help: "A game id native clients may name in HELLO (repeat for several).")
    var gameIDs: [String] = ["matchhost"]

    @Option(name: .customLong("session-grace"), help: "Seconds (0-86400) a native session outlives its connection, waiting for a resume.")
    var sessionGrace: Double = 30

    @Option(help: "Seconds (0.05-3600, at most --idle-timeout) between the server's pings to native clients.")
    var heartbeat: Double = 5

    @Option(name: .customLong("idle-timeout"), help: "Seconds (0.1-86400) of silence after which a native connection is dropped.")
    var idleTimeout: Double = 15

    @Option(name: .customLong("max-backlog"), help: "Unacknowledged bytes (at least 1024) a native session may hold for its player; past it the session ends.")
    var maxBacklog = 1024 * 1024

    @Option(name: .customLong("max-players"), help: "Most players in one native match (2-16).")
    var maxPlayers = 16

    @Option(name: .customLong("max-matches-per-player"), help: "Most native matches one player may be in at once.")
    var maxMatchesPerPlayer = 8

    @Option(
        name: .customLong("max-pending-requests"),
        help: "Most stored-data requests one native player may have waiting for the database.")
    var maxPendingRequests = 16

    @Option(
        name: .customLong("max-new-players-per-minute"),
        help: "New players one network (IPv4 address, IPv6 /64) may register a minute, both ports together: unknown devices, and Cat Race playerIds not stored yet.")
    var maxNewPlayersPerMinute = 120

    @Option(
        name: .customLong("max-new-matches-per-minute"),
        help: "Matches one network (IPv4 address, IPv6 /64) may create a minute, both ports together: native CREATE_MATCH and MATCHMAKE (a ticket each), Cat Race START_MATCH.")
    var maxNewMatchesPerMinute = 600

    @Option(
        name: .customLong("max-failed-joins-per-minute"),
        help: "JOIN_BY_CODE and JOIN_PARTY naming no match or party that one network may send a minute; past them it gets RATE_LIMITED for both until it refills.")
    var maxFailedJoinsPerMinute = 60

    // Retired: device identities now live in the database, not in memory. Still accepted so
    // that scripts written for earlier versions start; a warning says it does nothing.
    @Option(name: .customLong("max-devices"), help: .hidden)
    var maxDevices: Int?

    @Option(name: .customLong("lobby-interval"), help: "Least seconds (0.001-10) between two lobby updates to subscribers; a change after a quiet spell goes out at once, faster ones are coalesced.")
    var lobbyInterval = 0.05

    @Option(name: .customLong("matchmaker-interval"), help: "Seconds (0.01-60) between the matchmaker's passes.")
    var matchmakerInterval = 1.0

    @Option(
        name: .customLong("matchmaker-relax-after"),
        help: "Seconds (0-3600) a ticket waits for its largest group before taking its smallest.")
    var matchmakerRelaxAfter = 10.0

    @Option(
        name: .customLong("matchmaker-slice"),
        help: "Milliseconds (0-1000) the matchmaker may hold the event loop at once; a longer pass goes on after the loop has served its sockets and matches.")
    var matchmakerSlice = 2.0

    @Option(name: .customLong("max-tickets-per-player"), help: "Most matchmaking tickets one player may have queued.")
    var maxTicketsPerPlayer = 3

    @Option(name: .customLong("max-tickets"), help: "Most matchmaking tickets queued in all; past it MATCHMAKE is refused.")
    var maxTickets = 100_000

    @Option(
        name: .customLong("max-unstored-results"),
        help: "Most match results the database failed to store (a full disk) that wait to be written again once it can; past it the oldest is given up.")
    var maxUnstoredResults = 10_000

    @Option(
        name: .customLong("max-store-backlog"),
        help: "Most database calls waiting at once on each port; one more fails at once as a database failure would (a stalled disk then costs bounded memory).")
    var maxStoreBacklog = 50_000

    @Option(
        name: .customLong("max-key-bytes"),
        help: "Longest key of the per-player key-value store, in UTF-8 bytes (1-255: the wire carries no longer).")
    var maxKeyBytes = StorageLimits().maximumKeyBytes

    @Option(
        name: .customLong("max-value-bytes"),
        help: "Largest value of the per-player key-value store, in bytes (default 16384); a WRITE_VALUE carrying it must fit in --max-frame.")
    var maxValueBytes: Int?

    @Option(name: .customLong("max-keys-per-player"), help: "Most keys one player may hold in the key-value store (1-1000000).")
    var maxKeysPerPlayer = StorageLimits().maximumKeysPerPlayer

    @Option(
        name: .customLong("max-value-bytes-per-minute"),
        help: "Bytes of player values and aliases (each WRITE_VALUE's key and value, each SET_ALIAS's alias) one network may write a minute; at least one largest key and value.")
    var maxValueBytesPerMinute = 4 * 1024 * 1024

    @OptionGroup(title: "Game rules")
    var gameRules: ServeGameRules

    @Option(name: .customLong("token-ttl"), help: "Seconds a session token stays valid.")
    var tokenTTL: Double = 7 * 24 * 3600

    @Option(
        name: .customLong("max-devices-per-player"),
        help: "Most devices one native player may have (1-255); a link that would add one more is refused.")
    var maxDevicesPerPlayer = 10

    @Option(
        name: .customLong("max-alias-length"),
        help: "Longest alias a native player may set (SET_ALIAS), in Unicode scalars (1-63).")
    var maxAliasLength = 32

    @Option(name: .customLong("link-code-lifetime"), help: "Seconds a link code links a new device to its player (10-86400).")
    var linkCodeLifetime: Double = 600

    @Option(help: "Directory for the server's data (created if missing; one server at a time, held by matchhost.lock): the token signing key and the database (matchhost.sqlite).")
    var data = "data"

    @Option(
        help: "Where the server stores players, matches and moves: sqlite (the database in --data) or memory (for benchmarks and tests: nothing survives a restart).")
    var store = ServeStoreKind.sqlite

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(
        name: .customLong("admin-host"),
        help: "Address of the admin HTTP endpoints (/health, /metrics); the default keeps them to this machine.")
    var adminHost = "127.0.0.1"

    @Option(name: .customLong("admin-port"), help: "Port of the admin HTTP endpoints; 0 picks a free port.")
    var adminPort = 7356

    @Flag(name: .customLong("no-admin"), help: "Serve no admin HTTP endpoints (and export no metrics).")
    var noAdmin = false

    @Option(
        name: .customLong("admin-idle-timeout"),
        help: "Seconds (0.1-3600) an admin connection may send nothing, in the middle of a request too, before it is closed.")
    var adminIdleTimeout: Double = 30

    @Option(
        name: .customLong("web-port"),
        help: "Port of the browser clients (/) and of the native protocol over a WebSocket (/native); 0 picks a free port. Its connections count with --port's against --max-connections.")
    var webPort = 7357

    @Flag(name: .customLong("no-web"), help: "Serve no browser clients and no WebSocket.")
    var noWeb = false

    @Option(
        name: .customLong("tls-certificate"),
        help: "PEM certificate chain, the server's certificate first (Let's Encrypt's fullchain.pem): the native and web ports then speak TLS only (the Cat Race port stays plaintext). Needs --tls-key; SIGHUP reloads both.")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "The certificate's private key, PEM, unencrypted (Let's Encrypt's privkey.pem).")
    var tlsKey: String?

    @Flag(
        name: .customLong("admin-tls"),
        help: "The admin endpoints speak HTTPS only, with --tls-certificate's certificate (SIGHUP reloads it for them too); the admin commands then need --admin-tls or --admin-tls-ca.")
    var adminTLS = false

    func validate() throws {
        guard (self.tlsCertificate == nil) == (self.tlsKey == nil) else {
            throw ValidationError("--tls-certificate and --tls-key go together: give both, or neither for plaintext")
        }
        guard !self.adminTLS || self.tlsCertificate != nil else {
            throw ValidationError("--admin-tls serves --tls-certificate's certificate: give --tls-certificate and --tls-key too")
        }
        guard !self.adminTLS || !self.noAdmin else { throw ValidationError("--admin-tls and --no-admin contradict each other") }
        guard Logger.Level(rawValue: self.logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        guard (0...65535).contains(self.catRacePort) else { throw ValidationError("--catrace-port must be 0-65535") }
        guard (0...65535).contains(self.adminPort) else { throw ValidationError("--admin-port must be 0-65535") }
        guard (0...65535).contains(self.webPort) else { throw ValidationError("--web-port must be 0-65535") }
        guard !self.adminHost.isEmpty else { throw ValidationError("--admin-host must name an address") }
        guard self.grace.isFinite, (0...86_400).contains(self.grace) else {
            throw ValidationError("--grace must be 0 to 86400 seconds")
        }
        // A connection may hold one whole frame while it arrives: the bound is memory per connection.
        guard (1...16 * 1024 * 1024).contains(self.maxFrame) else {
            throw ValidationError("--max-frame must be 1 to 16777216 bytes (16 MiB)")
        }
        guard self.maxTapRate.isFinite, self.maxTapRate > 0 else { throw ValidationError("--max-tap-rate must be a positive number") }
        guard self.maxMessageRate.isFinite, self.maxMessageRate > 0 else {
            throw ValidationError("--max-message-rate must be a positive number")
        }
        guard self.maxInboundRate >= 1 else { throw ValidationError("--max-inbound-rate must be at least 1") }
        guard self.maxOutbound >= 1024 else { throw ValidationError("--max-outbound must be at least 1024") }
        guard (2...16).contains(self.maxRacers) else { throw ValidationError("--max-racers must be 2-16") }
        guard self.backlog >= 1 else { throw ValidationError("--backlog must be at least 1") }
        guard (1...1_000_000).contains(self.maxConnections ?? 1) else { throw ValidationError("--max-connections must be 1-1000000") }
        guard self.maxConnectionsPerAddress >= 1 else { throw ValidationError("--max-connections-per-address must be at least 1") }
        guard (1...2_000_000).contains(self.maxSessions ?? 1) else { throw ValidationError("--max-sessions must be 1-2000000") }
        guard (0...65535).contains(self.port) else { throw ValidationError("--port must be 0-65535") }
        guard !self.gameIDs.isEmpty, self.gameIDs.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 255 }) else {
            throw ValidationError("--game-id must be 1 to 255 bytes")
        }
        try Self.check(self.sessionGrace, "--session-grace", 0...86_400)
        try Self.check(self.slowConsumerGrace, "--slow-consumer-grace", 0...3600)
        try Self.check(self.heartbeat, "--heartbeat", 0.05...3600)
        try Self.check(self.idleTimeout, "--idle-timeout", 0.1...86_400)
        try Self.check(self.adminIdleTimeout, "--admin-idle-timeout", 0.1...3600)
        // Silence is checked at each heartbeat: a longer one would stretch the idle and
        // handshake timeouts to itself.
        guard self.heartbeat <= self.idleTimeout else {
            throw ValidationError("--heartbeat must not be longer than --idle-timeout")
        }
        guard self.maxBacklog >= 1024 else { throw ValidationError("--max-backlog must be at least 1024") }
        guard (2...16).contains(self.maxPlayers) else { throw ValidationError("--max-players must be 2-16") }
        guard self.maxMatchesPerPlayer >= 1 else { throw ValidationError("--max-matches-per-player must be at least 1") }
        guard self.maxPendingRequests >= 1 else { throw ValidationError("--max-pending-requests must be at least 1") }
        guard self.maxNewPlayersPerMinute >= 1 else { throw ValidationError("--max-new-players-per-minute must be at least 1") }
        guard self.maxNewMatchesPerMinute >= 1 else { throw ValidationError("--max-new-matches-per-minute must be at least 1") }
        guard self.maxFailedJoinsPerMinute >= 1 else { throw ValidationError("--max-failed-joins-per-minute must be at least 1") }
        try Self.check(self.tokenTTL, "--token-ttl", 1...(10 * 365 * 86_400))
        guard (1...255).contains(self.maxDevicesPerPlayer) else { throw ValidationError("--max-devices-per-player must be 1-255") }
        guard (1...AliasRules.largestMaximumLength).contains(self.maxAliasLength) else {
            throw ValidationError("--max-alias-length must be 1-\(AliasRules.largestMaximumLength): that many characters of 4 bytes fill SET_ALIAS's 255-byte field")
        }
        try Self.check(self.linkCodeLifetime, "--link-code-lifetime", 10...86_400)
        try Self.check(self.lobbyInterval, "--lobby-interval", 0.001...10)
        try Self.check(self.matchmakerInterval, "--matchmaker-interval", 0.01...60)
        try Self.check(self.matchmakerRelaxAfter, "--matchmaker-relax-after", 0...3600)
        try Self.check(self.matchmakerSlice, "--matchmaker-slice", 0...1000, unit: "milliseconds")
        guard self.maxTicketsPerPlayer >= 1 else { throw ValidationError("--max-tickets-per-player must be at least 1") }
        guard self.maxTickets >= 1 else { throw ValidationError("--max-tickets must be at least 1") }
        guard self.maxUnstoredResults >= 1 else { throw ValidationError("--max-unstored-results must be at least 1") }
        guard self.maxStoreBacklog >= 1 else { throw ValidationError("--max-store-backlog must be at least 1") }
        guard !self.data.isEmpty else { throw ValidationError("--data must name a directory") }
        guard (1...255).contains(self.maxKeyBytes) else { throw ValidationError("--max-key-bytes must be 1-255") }
        guard (1...1_000_000).contains(self.maxKeysPerPlayer) else {
            throw ValidationError("--max-keys-per-player must be 1-1000000")
        }
        if let maxValueBytes = self.maxValueBytes {
            // A limit no client could reach would promise what the frame limit takes back.
            let largestValue = self.largestWritableValue
            guard maxValueBytes >= 0, maxValueBytes <= largestValue else {
                throw ValidationError(
                    "--max-value-bytes must be 0 to \(max(0, largestValue)): a WRITE_VALUE frame carries \(NativeRequest.writeValueFrameOverhead) bytes besides its key (up to --max-key-bytes \(self.maxKeyBytes)) and value, and must fit in --max-frame \(self.maxFrame); raise --max-frame for larger values"
                )
            }
        }
        // A value no network could ever afford would be refused for good.
        let largestWrite = self.maxKeyBytes + self.storageLimits.maximumValueBytes
        guard self.maxValueBytesPerMinute >= largestWrite else {
            throw ValidationError("--max-value-bytes-per-minute must be at least \(largestWrite): one write of the longest key and the largest value")
        }
    }

    /// Whether `host` keeps a listener to this machine: `localhost`, or an IPv4 or IPv6 loopback
    /// address.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        guard let address = try? SocketAddress(ipAddress: host, port: 0) else { return false }
        // Written back in its canonical form: "::1" however the flag spelled it.
        guard let canonical = address.ipAddress else { return false }
        return canonical.hasPrefix("127.") || canonical == "::1"
    }

    /// The refusal of a data directory whose database is gone but whose token key is there.
    static func missingDatabase(_ databasePath: String, keyPath: String) -> String {
        """
        matchhost: \(databasePath) is missing, but \(keyPath) shows that a server stored its data here: \
        started on a new empty database, it would forget every player, and each returning device would quietly \
        become a new player. Put the database back (or matchhost restore a backup), check --data \
        (\(FileManager.default.currentDirectoryPath) is the working directory), or, to start over with no players, \
        delete the key too (every session token then ends)

        """
    }

    /// The largest value a WRITE_VALUE under the longest key carries in `--max-frame`.
    private var largestWritableValue: Int {
        max(0, self.maxFrame - NativeRequest.writeValueFrameOverhead - self.maxKeyBytes)
    }

    /// The key-value store's limits the flags set: without `--max-value-bytes`, 16 KiB or what
    /// a frame carries if less.
    private var storageLimits: StorageLimits {
        StorageLimits(
            maximumKeyBytes: self.maxKeyBytes,
            maximumValueBytes: self.maxValueBytes ?? min(StorageLimits().maximumValueBytes, self.largestWritableValue),
            maximumKeysPerPlayer: self.maxKeysPerPlayer)
    }

    private static func check(_ value: Double, _ flag: String, _ range: ClosedRange<Double>, unit: String = "seconds") throws {
        guard value.isFinite, range.contains(value) else {
            throw ValidationError("\(flag) must be \(range.lowerBound) to \(range.upperBound) \(unit)")
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: self.logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "matchhost")
        // Thousands of players need thousands of descriptors.
        let openFiles = raiseOpenFileLimit()
        logger.debug("open file limit", metadata: ["limit": "\(openFiles)"])
        let maxConnections = self.maxConnections ?? Self.defaultMaxConnections(openFileLimit: openFiles)
        let wantedFiles = UInt64(2 * maxConnections + serverOwnFileDescriptors)
        if openFiles > 0, openFiles < wantedFiles {
            // Out of descriptors, the server cannot even refuse: new connections wait unanswered.
            logger.warning(
                "the open-file limit is below what --max-connections allows on both ports: past about \(connectionDescriptors(underOpenFileLimit: openFiles)) connections in all, new ones wait unanswered in the listen queue; raise the limit (ulimit -n, LimitNOFILE in a systemd unit) or lower --max-connections",
                metadata: ["limit": "\(openFiles)", "wanted": "\(wantedFiles)"])
        }

        var configuration = ServerConfiguration()
        configuration.host = self.host
        configuration.catRacePort = self.catRacePort
        configuration.gracePeriod = .nanoseconds(Int64(self.grace * 1e9))
        configuration.maxFrameBytes = self.maxFrame
        configuration.maxTapRate = self.maxTapRate
        configuration.maxMessageRate = self.maxMessageRate
        configuration.maxInboundBytesPerSecond = self.maxInboundRate
        configuration.maxConnections = maxConnections
        configuration.maxConnectionsPerAddress = self.maxConnectionsPerAddress
        configuration.maxSessions = self.maxSessions ?? 2 * maxConnections
        configuration.maxOutboundBytes = self.maxOutbound
        configuration.slowConsumerGrace = .nanoseconds(Int64(self.slowConsumerGrace * 1e9))
        configuration.maxRacers = self.maxRacers
        configuration.backlog = self.backlog
        configuration.port = self.port
        configuration.webPort = self.noWeb ? nil : self.webPort
        configuration.gameIDs = self.gameIDs
        configuration.sessionGrace = .nanoseconds(Int64(self.sessionGrace * 1e9))
        configuration.heartbeatInterval = .nanoseconds(Int64(self.heartbeat * 1e9))
        configuration.idleTimeout = .nanoseconds(Int64(self.idleTimeout * 1e9))
        configuration.maxBacklogBytes = self.maxBacklog
        configuration.maxPlayersPerMatch = self.maxPlayers
        configuration.maxMatchesPerPlayer = self.maxMatchesPerPlayer
        configuration.maxPendingRequests = self.maxPendingRequests
        configuration.maxNewPlayersPerMinute = self.maxNewPlayersPerMinute
        configuration.maxNewMatchesPerMinute = self.maxNewMatchesPerMinute
        configuration.maxFailedJoinsPerMinute = self.maxFailedJoinsPerMinute
        configuration.maxValueBytesPerMinute = self.maxValueBytesPerMinute
        if self.maxDevices != nil {
            logger.warning("--max-devices has no effect any more: device identities are kept in the database (--data)")
        }
        configuration.tokenLifetime = .nanoseconds(Int64(self.tokenTTL * 1e9))
        configuration.maxDevicesPerPlayer = self.maxDevicesPerPlayer
        configuration.maxAliasLength = self.maxAliasLength
        configuration.linkCodeLifetime = .milliseconds(Int64(self.linkCodeLifetime * 1000))
        configuration.lobbyInterval = .nanoseconds(Int64(self.lobbyInterval * 1e9))
        configuration.matchmakerInterval = .nanoseconds(Int64(self.matchmakerInterval * 1e9))
        configuration.matchmakerRelaxAfter = .nanoseconds(Int64(self.matchmakerRelaxAfter * 1e9))
        configuration.matchmakerSlice = .nanoseconds(Int64(self.matchmakerSlice * 1e6))
        configuration.maxTicketsPerPlayer = self.maxTicketsPerPlayer
        configuration.maxTickets = self.maxTickets
        configuration.maxUnstoredResults = self.maxUnstoredResults
        configuration.maxStoreBacklog = self.maxStoreBacklog
        self.gameRules.apply(to: &configuration)
        if let certificate = self.tlsCertificate, let key = self.tlsKey {
            do {
                configuration.tls = try ServerTLS(files: TLSFiles(certificateChain: certificate, privateKey: key))
            } catch {
                FileHandle.standardError.write(Data("matchhost: \(error)\n".utf8))
                throw ExitCode(2)
            }
        }
        if let tls = configuration.tls {
            // SIGHUP reloads the certificate; one that came before the reloading service runs
            // must not stop the server (its default action).
            signal(SIGHUP, SIG_IGN)
            let ports = (self.noWeb ? ["native"] : ["native", "web"]) + (self.adminTLS ? ["admin"] : [])
            let named =
                ports.count == 1 ? "the native port speaks" : "the \(ports.dropLast().joined(separator: ", ")) and \(ports[ports.count - 1]) ports speak"
            tls.certificate.logServed("\(named) TLS", to: logger)
        }
        if !self.noAdmin, !self.adminTLS, !Self.isLoopback(self.adminHost) {
            // The admin key authorizes bans and renames: in plaintext, anyone on the path reads it.
            logger.warning(
                "the admin endpoints on \(self.adminHost) speak plain HTTP: their key crosses the network readable; serve them with --admin-tls, or keep them on 127.0.0.1 behind your own tunnel")
        }
        // What the server creates in --data (the database holds hashed device secrets) is its
        // user's alone.
        umask(0o077)
        failWritesPastFileSizeLimit()
        // First of all: a second server on the same data would take this one's games for its own.
        let lock: DataDirectoryLock
        do {
            lock = try DataDirectoryLock.acquire(directory: self.data)
        } catch {
            FileHandle.standardError.write(Data("matchhost: cannot use the data directory \(self.data): \(error)\n".utf8))
            throw ExitCode(2)
        }
        defer { lock.release() }
        // The admin key only with the admin endpoints, whose actions it authorizes.
        let adminKey: String?
        let tokenKeyFile = SecretKeyFile.tokenSigning(directory: self.data)
        // A server on this directory before made its key with its database: a key without the
        // database means the database was moved or deleted, and a new empty one would quietly
        // make every returning device a new player. (A memory store keeps no key: its tokens
        // name players that end with it.)
        let databasePath = (self.data as NSString).appendingPathComponent(SQLiteGameStore.fileName)
        var tokenKey: [UInt8]?
        do {
            if self.store == .sqlite, FileManager.default.fileExists(atPath: tokenKeyFile.path) {
                tokenKey = try tokenKeyFile.loadOrCreate()  // a damaged key says so first
                if !FileManager.default.fileExists(atPath: databasePath) {
                    FileHandle.standardError.write(Data(Self.missingDatabase(databasePath, keyPath: tokenKeyFile.path).utf8))
                    throw ExitCode(2)
                }
            }
            adminKey = self.noAdmin ? nil : hexEncoded(try SecretKeyFile.admin(directory: self.data).loadOrCreate())
        } catch let exit as ExitCode {
            throw exit
        } catch {
            FileHandle.standardError.write(Data("matchhost: cannot use the data directory \(self.data): \(error)\n".utf8))
            throw ExitCode(2)
        }

        // Opened (created, migrated) before anything is bound: a server that cannot store
        // what it acknowledges must not accept players.
        let store: SQLiteGameStore?
        switch self.store {
        case .sqlite:
            do {
                store = try await SQLiteGameStore.open(directory: self.data, limits: self.storageLimits, logger: logger)
            } catch {
                FileHandle.standardError.write(Data("matchhost: \(error)\n".utf8))
                throw ExitCode(2)
            }
            configuration.store = store
            // The key only once the database exists: a first start that fails before (a full
            // disk) leaves no key behind for the next start to take for a lost database.
            do {
                configuration.tokenSigningKey = try tokenKey ?? tokenKeyFile.loadOrCreate()
            } catch {
                FileHandle.standardError.write(Data("matchhost: cannot use the data directory \(self.data): \(error)\n".utf8))
                throw ExitCode(2)
            }
        case .memory:
            store = nil
            configuration.tokenSigningKey = (0..<32).map { _ in UInt8.random(in: 0...255) }
            configuration.store = InMemoryGameStore(limits: self.storageLimits, outlivesServer: false)
            logger.warning("--store memory: players, matches and moves are kept in memory only and are lost when the server stops")
        }

        @Sendable func announce(_ name: String, _ address: SocketAddress) {
            print("\(name) listening on \(address.ipAddress ?? "?"):\(address.port ?? 0)")
            fflush(nil)  // stdout may be a pipe: the bound address must not wait in a buffer
        }
        let status = ServerStatus()
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        // The game ports wait for the admin endpoints to be bound: a taken admin port stops
        // the server before it takes a player.
        let adminBound = AsyncStream<Void>.makeStream()
        if let adminKey {
            // Before any metric is made: each is created in the registry the endpoint reads.
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            services.append(
                .init(
                    service: AdminEndpoints.application(
                        host: self.adminHost, port: self.adminPort, status: status, registry: registry, adminKey: adminKey, logger: logger,
                        idleTimeout: .nanoseconds(Int64(self.adminIdleTimeout * 1e9)), tls: self.adminTLS ? configuration.tls : nil
                    ) { address in
                        announce("admin", address)
                        adminBound.continuation.finish()
                    }))
        } else {
            adminBound.continuation.finish()
        }
        if let tls = configuration.tls {
            services.append(.init(service: TLSReloadOnHangup(tls: tls, logger: logger)))
        }
        // A game port that cannot be bound shuts the admin endpoints down gracefully: cancelled,
        // Hummingbird logs its cancellation as errors around the one line that says why.
        services.append(
            .init(
                service: MatchHostService(
                    configuration: configuration, logger: logger, status: status,
                    beforeBinding: {
                        for await _ in adminBound.stream {}
                        // Cancelled: the admin endpoints failed, and the group is stopping.
                        try Task.checkCancellation()
                    },
                    onListening: announce),
                failureTerminationBehavior: .gracefullyShutdownGroup))
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as PortBindError {
            try? await store?.close()
            FileHandle.standardError.write(Data("matchhost: \(error)\n".utf8))
            throw ExitCode(2)
        } catch {
            try? await store?.close()
            throw error
        }
        try? await store?.close()
        logger.info("stopped")
    }
}

/// What `matchhost serve --store` accepts.
enum ServeStoreKind: String, ExpressibleByArgument, CaseIterable {
    /// ``SQLiteGameStore`` in `--data`: the default, and the only one that survives a restart.
    case sqlite
    /// ``InMemoryGameStore``: for benchmarks and tests.
    case memory
}
