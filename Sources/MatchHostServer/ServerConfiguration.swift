import MatchHostGames
import MatchHostCore
import NIOCore

/// Everything `matchhost serve` can be told. Every limit on what a client may do is here,
/// explicit, with its documented default.
public struct ServerConfiguration: Sendable, Hashable {
    /// The address to listen on (`--host`, default `0.0.0.0`: every interface, like the tutorial).
    public var host: String = "0.0.0.0"
    /// The Cat Race port (`--catrace-port`, default 1955; 0 picks a free port).
    public var catRacePort: Int = 1955
    /// How long an absent racer keeps its seat (`--grace`, default 30 s).
    public var gracePeriod: TimeAmount = .seconds(30)
    /// The largest frame body accepted, in bytes (`--max-frame`, default 64 KiB).
    public var maxFrameBytes: Int = 64 * 1024
    /// Steps per second a racer's bucket refills (`--max-tap-rate`, default 20).
    public var maxTapRate: Double = 20
    /// Messages per second one connection may send, averaged over a one-second burst
    /// allowance (`--max-message-rate`, default 100); above it the connection is closed.
    public var maxMessageRate: Double = 100
    /// Bytes per second one connection may send, length prefixes included, averaged over a
    /// burst allowance of one second or one largest frame, whichever is more
    /// (`--max-inbound-rate`, default 64 KiB); above it the connection is closed. In a relayed
    /// match what a player sends goes to every other player: this keeps one sender from
    /// filling their `--max-backlog` faster than they acknowledge.
    public var maxInboundBytesPerSecond: Int = 64 * 1024
    /// Bytes that may wait to be sent to one connection (`--max-outbound`, default 256 KiB):
    /// past them unreliable data is not sent to it, and it has ``slowConsumerGrace`` to drain
    /// to half of them before it is disconnected (a Cat Race connection at once past twice them).
    public var maxOutboundBytes: Int = 256 * 1024
    /// How long a connection's outbound bytes may stay over ``maxOutboundBytes``
    /// (`--slow-consumer-grace`, default 10 s; zero closes it as they pass).
    public var slowConsumerGrace: TimeAmount = .seconds(10)
    /// The most racers in one race (`--max-racers`, 2 to 16, default 16).
    public var maxRacers: Int = 16
    /// The listen backlog (`--backlog`, default 4096; the kernel caps it at `net.core.somaxconn`).
    public var backlog: Int = 4096
    /// The most connections open at once on each port (`--max-connections`, default 20,000);
    /// one more is closed as it arrives (on the native port after ERROR `SERVER_FULL`).
    public var maxConnections: Int = 20_000
    /// The most connections open at once on each port from one network: an IPv4 address, or
    /// an IPv6 /64 (`--max-connections-per-address`, default 1,000); one more is refused as
    /// over ``maxConnections`` is. Many players behind one NAT share an address, hence a
    /// generous default: the limit is there so that one machine cannot take every place.
    public var maxConnectionsPerAddress: Int = 1_000
    /// The most native sessions live at once, connected or waiting for a resume
    /// (`--max-sessions`; `serve`'s default is twice its `--max-connections`): a session
    /// outlives its connection for ``sessionGrace``, so connections alone do not bound them.
    /// An AUTHENTICATE that would start one more is answered ERROR `SERVER_FULL`; a player's
    /// new login that replaces its own session, and a RESUME, still succeed.
    public var maxSessions: Int = 40_000

    /// The native protocol's port (`--port`, default 7355; 0 picks a free port).
    public var port: Int = 7355
    /// The web port: the native protocol over a WebSocket at `/native`, and the browser clients
    /// at `/` (`--web-port`; `matchhost serve` binds 7357 unless `--no-web`). Nil (the default
    /// here) binds none; 0 picks a free port. Its connections count with the native port's
    /// against ``maxConnections`` and ``maxConnectionsPerAddress``.
    public var webPort: Int?
    /// The certificate and key the native and web ports speak TLS with (`--tls-certificate`,
    /// `--tls-key`); nil (the default) speaks plaintext. With them, both ports take TLS only
    /// (a plaintext client is told so and closed); the Cat Race port stays plaintext, as the
    /// tutorial's client speaks. ``ServerTLS/reload()`` serves renewed files to new connections.
    /// Two configurations are equal only if they name the same object.
    public var tls: ServerTLS?
    /// The game ids a native client may name in HELLO (`--game-id`, repeatable; default `matchhost`).
    public var gameIDs: [String] = ["matchhost"]
    /// How long a native session outlives its connection (`--session-grace`, default 30 s).
    public var sessionGrace: TimeAmount = .seconds(30)
    /// How often the server pings native clients (`--heartbeat`, default 5 s).
    public var heartbeatInterval: TimeAmount = .seconds(5)
    /// Silence after which a native connection is dropped (`--idle-timeout`, default 15 s).
    public var idleTimeout: TimeAmount = .seconds(15)
    /// Unacknowledged bytes a native session may hold for its player (`--max-backlog`, default 1 MiB).
    public var maxBacklogBytes: Int = 1024 * 1024
    /// The most players in one native match (`--max-players`, 2 to 16, default 16).
    public var maxPlayersPerMatch: Int = 16
    /// The most matches one native player may be in at once (`--max-matches-per-player`, default 8).
    public var maxMatchesPerPlayer: Int = 8
    /// The most stored-data requests (profile, history, leaderboard, values) one native player
    /// may have waiting for the database (`--max-pending-requests`, default 16); one more gets
    /// `TOO_MANY_REQUESTS`. Bounds what a slow disk lets pile up.
    public var maxPendingRequests: Int = 16
    /// New players one network (an IPv4 address, an IPv6 /64) may register a minute, and at
    /// once, both ports together (`--max-new-players-per-minute`, default 120): first contacts
    /// of unknown devices, and Cat Race playerIds not stored yet. One more is refused
    /// (`RATE_LIMITED` on the native port, the close on the Cat Race port). Keeps a client
    /// inventing ids from filling the database.
    public var maxNewPlayersPerMinute: Int = 120
    /// `--max-new-matches-per-minute`: matches one network may create a minute, both ports
    /// together (native CREATE_MATCH and MATCHMAKE, a ticket each; Cat Race START_MATCH), so that creating and leaving
    /// matches cannot fill the database.
    public var maxNewMatchesPerMinute: Int = 600
    /// JOIN_BY_CODE and JOIN_PARTY that name no match or party which one network may send a
    /// minute, and at once (`--max-failed-joins-per-minute`, default 60); past them every
    /// JOIN_BY_CODE and JOIN_PARTY from it gets `RATE_LIMITED` until it refills. Invite codes
    /// and party ids are the only secrets of private matches and parties: guessing them
    /// costs a minute per 60 tries.
    public var maxFailedJoinsPerMinute: Int = 60
    /// Bytes of player values and aliases (key and value of each WRITE_VALUE, each SET_ALIAS's
    /// alias) one network may write a minute, and at once (`--max-value-bytes-per-minute`,
    /// default 4 MiB); one more WRITE_VALUE or SET_ALIAS gets `RATE_LIMITED`. A new player may store 64 values of 16 KiB by default, and a
    /// network may make 120 new players a minute: without this, about 120 MiB a minute of disk.
    public var maxValueBytesPerMinute: Int = 4 * 1024 * 1024
    /// How often lobby changes are published to subscribers (`--lobby-interval`, default 50 ms).
    public var lobbyInterval: TimeAmount = .milliseconds(50)
    /// How long one pass of a world's event loop may spend flushing the connections written to
    /// (both ports', when they share the loop) before the rest waits for the loop to read its
    /// sockets and run its timers (default
    /// 4 ms, no flag: a scheduling budget, not a limit on clients). A fan-out to thousands of
    /// connections (a lobby publication) then goes out over several passes instead of holding
    /// every match on the loop for its whole length.
    public var flushBudget: TimeAmount = .milliseconds(4)
    /// How often the matchmaker forms groups (`--matchmaker-interval`, default 1 s).
    public var matchmakerInterval: TimeAmount = .seconds(1)
    /// How long a ticket waits for a full group before it takes its minimum
    /// (`--matchmaker-relax-after`, default 10 s).
    public var matchmakerRelaxAfter: TimeAmount = .seconds(10)
    /// The longest the matchmaker holds the world's event loop at once; a longer pass goes on
    /// at the loop's next turn (`--matchmaker-slice`, default 2 ms).
    public var matchmakerSlice: TimeAmount = .milliseconds(2)
    /// The most tickets one player may have queued (`--max-tickets-per-player`, default 3).
    public var maxTicketsPerPlayer: Int = 3
    /// The most tickets the matchmaker holds (`--max-tickets`, default 100,000).
    public var maxTickets: Int = 100_000
    /// The most match results (or abandonments) the database failed to store that wait, per
    /// listener, to be written again once it takes writes (`--max-unstored-results`, default
    /// 10,000); past it the oldest is given up.
    public var maxUnstoredResults: Int = 10_000
    /// The most store calls (a login, a move, a result, a value read) waiting for the database
    /// at once, per listener (`--max-store-backlog`, default 50,000). One more fails at once
    /// as a failure of the database would (ERROR `STORAGE_FAILED`, MOVE_REFUSED reason 7, a
    /// result kept to be written again): a database that falls behind then costs bounded memory.
    public var maxStoreBacklog: Int = 50_000
    /// How long a session token stays valid (`--token-ttl`, default 7 days).
    public var tokenLifetime: TimeAmount = .hours(24 * 7)
    /// How long a stop waits for the native matches' results being written before it tells
    /// their players anyway (default 2 s): a database that does not answer must not hold the
    /// stop, and one that answers in time lets every result be told once it is committed.
    public var resultWaitAtShutdown: TimeAmount = .seconds(2)
    /// The most devices one player may have (`--max-devices-per-player`, default 10, at most
    /// 255): a link that would add one more is refused.
    public var maxDevicesPerPlayer: Int = 10
    /// The longest alias a native player may set (SET_ALIAS), in Unicode scalars
    /// (`--max-alias-length`, default 32, 1 to 63, ``AliasRules/largestMaximumLength``).
    public var maxAliasLength: Int = 32
    /// How long a link code (CREATE_LINK_CODE) links a new device (`--link-code-lifetime`,
    /// default 10 minutes).
    public var linkCodeLifetime: Duration = .seconds(600)
    /// The key session tokens are signed with. `matchhost serve` keeps it in the data directory;
    /// the default is random per process (tokens then die with the process).
    public var tokenSigningKey: [UInt8] {
        get { self.signingKey.bytes }
        set { self.signingKey = SecretBytes(newValue) }
    }
    /// Stored so that a configuration printed whole (the service lifecycle logs its services
    /// at debug) shows no key: anyone who read it could sign tokens.
    private var signingKey = SecretBytes((0..<32).map { _ in UInt8.random(in: 0...255) })
    /// What every new native `disks` match is created with (default: the seed game's rules).
    /// Each match still gets a random ``DisksGame/Options/seed``; tests shorten the game here.
    public var disksOptions = DisksGame.Options()
    /// How long a Four in a Row player has for a move (`--turn-time`, default 30 s).
    public var turnTimeLimit: TimeAmount = .seconds(30)
    /// Where players, devices, matches, stats, turn-based games and player values are kept.
    /// `matchhost serve` opens an SQLite file in `--data`; nil (the default) gives each native
    /// listener a fresh ``InMemoryGameStore``, which forgets everything when it closes, and
    /// keeps the Cat Race port's players and races in memory only.
    /// Two configurations are equal only if they name the same store object.
    public var store: (any GameStore)? {
        get { self.storeReference?.store }
        set { self.storeReference = newValue.map(StoreReference.init) }
    }
    private var storeReference: StoreReference?
    /// The native port's time of day (token expiry, bans' ends, stored times): the system's,
    /// which tests replace with one they move forward.
    public var wallClock: WallClock = .system

    /// The documented defaults.
    public init() {}
}

/// A store compared by identity, so that a configuration holding one stays `Hashable`.
private struct StoreReference: Hashable, Sendable {
    let store: any GameStore
    private let identity: ObjectIdentifier

    init(_ store: any GameStore) {
        self.store = store
        self.identity = ObjectIdentifier(store as AnyObject)
    }

    static func == (lhs: StoreReference, rhs: StoreReference) -> Bool { lhs.identity == rhs.identity }
    func hash(into hasher: inout Hasher) { hasher.combine(self.identity) }
}
