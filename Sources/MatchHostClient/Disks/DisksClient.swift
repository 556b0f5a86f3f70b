import MatchHostWire
import NIOCore

/// One player's seat in a `disks` match of the native protocol, over a connected
/// ``MatchHostClient``.
///
/// ```swift
/// let client = MatchHostClient(configuration: .init(host: "127.0.0.1", credentials: .device(id: id, secret: secret)))
/// try await client.connect()
/// let disks = try await DisksClient.createMatch(on: client, players: 2)   // or joinMatch(id, on: client)
/// print("others join match \(disks.matchID)")
/// var view = DisksView(myPlayerID: disks.playerID)
/// while let event = try await disks.nextEvent(timeout: nil) {
///     view.apply(event)
///     if let disk = view.liveDisks.first { try await disks.tap(x: disk.disk.x, y: disk.disk.y) }
/// }
/// await disks.close()
/// ```
///
/// A tap goes out as MATCH_INPUT whose bytes are a Disks TAP. Each MATCH_EVENT of the match is
/// decoded as a ``DisksServerMessage``; PRESENCE and MATCH_ENDED of the match arrive as the
/// other ``DisksEvent`` cases; events of other matches are dropped.
///
/// The adapter reads ``MatchHostClient/events`` (which has one consumer) from one task for the
/// client's life and owns the client: ``close()`` closes it. Dropped connections are the
/// client's business: it reconnects and resumes on its own.
public final class DisksClient: Sendable {
    /// The native game mode of Disks matches.
    public static let mode = "disks"

    /// The native client carrying the match.
    public let client: MatchHostClient
    /// The match as it was when this player joined it (MATCH_JOINED).
    public let match: NativeMatchInfo
    /// This player's id on the server; STATE and GAME_OVER list seats by it.
    public let playerID: String

    private let feed: MatchEventFeed<DisksEvent>

    /// The match's id, for other players to join.
    public var matchID: MatchIdentifier { self.match.matchID }
    /// The most players the match holds.
    public var capacity: Int { Int(self.match.capacity) }

    private init(client: MatchHostClient, match: NativeMatchInfo, playerID: String) {
        self.client = client
        self.match = match
        self.playerID = playerID
        self.feed = MatchEventFeed(client: client, matchID: match.matchID, timeoutError: DisksClientError.timedOut) { event, matchID in
            try Self.convert(event, matchID: matchID)
        }
    }

    /// Creates a `disks` match for up to `players` players and seats this player in it (seat 0).
    /// - Parameters:
    ///   - client: a connected client (``MatchHostClient/connect()`` done) whose
    ///     ``MatchHostClient/events`` nothing else reads.
    ///   - players: the match's capacity, 2 to the server's `--max-players`. Play starts as soon
    ///     as two players are connected; later players join the game under way.
    ///   - label: free text shown to players.
    /// - Throws: ``NativeError`` (`BAD_ARGUMENT` for a capacity the server does not allow,
    ///   `TOO_MANY_MATCHES`), ``MatchHostClientError``.
    public static func createMatch(on client: MatchHostClient, players: Int, label: String = "") async throws -> DisksClient {
        guard (2...Int(UInt8.max)).contains(players) else {
            throw MatchHostClientError.invalidArgument("a disks match needs 2 or more players, not \(players)")
        }
        let playerID = try await client.authenticatedPlayerID()
        let match = try await client.createMatch(mode: Self.mode, maxPlayers: UInt8(players), label: label)
        return DisksClient(client: client, match: match, playerID: playerID)
    }

    /// Seats this player in an existing `disks` match.
    /// - Throws: ``NativeError`` (`NO_SUCH_MATCH`, `MATCH_FULL`, ...);
    ///   ``MatchHostClientError/invalidArgument(_:)`` when the match plays another game (the
    ///   player leaves it again); the client's errors.
    public static func joinMatch(_ matchID: MatchIdentifier, on client: MatchHostClient) async throws -> DisksClient {
        let playerID = try await client.authenticatedPlayerID()
        let match = try await client.requireMode(Self.mode, of: client.joinMatch(matchID))
        return DisksClient(client: client, match: match, playerID: playerID)
    }


    /// The Disks event for a client event; `nil` for an event of another match, or one Disks
    /// does not use.
    /// - Throws: ``DisksClientError/badMessage(_:)`` for a MATCH_EVENT that is not a Disks
    ///   server message.
    static func convert(_ event: MatchHostClient.Event, matchID: MatchIdentifier) throws -> DisksEvent? {
        switch event {
        case .matchEvent(let id, let body, _) where id == matchID:
            do {
                return .message(try DisksServerMessage(body: body))
            } catch {
                throw DisksClientError.badMessage("\(error)")
            }
        case .presence(let id, let playerID, let change, let reason) where id == matchID:
            return .presence(playerID: playerID, change: change, reason: reason)
        case .matchEnded(let id, let reason) where id == matchID:
            return .matchEnded(reason: reason)
        default:
            return nil
        }
    }

    /// Taps the board at (`x`, `y`), in board units (``DisksBoard``): a MATCH_INPUT carrying TAP.
    ///
    /// The server judges the tap when it arrives: a hit shows in the next TICK, a miss comes
    /// back as TAP_MISSED. Taps past the server's rate (20 a second) are ignored.
    /// - Parameter reliable: sent in a RELIABLE frame (the default: resent after a reconnect)
    ///   or an UNRELIABLE one (dropped while the connection is down).
    /// - Throws: the client's errors (``MatchHostClientError/closed(_:)``, ...).
    public func tap(x: UInt16, y: UInt16, reliable: Bool = true) async throws {
        let input = DisksClientMessage.tap(DisksTap(x: x, y: y)).encoded()
        try await self.client.sendInput(input, in: self.matchID, reliable: reliable)
    }

    /// The next event of the match.
    ///
    /// - Parameter timeout: how long to wait; `nil` waits until something arrives or the
    ///   client closes.
    /// - Returns: the event, or `nil` once the client has been closed with ``close()`` and
    ///   every event before has been read.
    /// - Throws: ``DisksClientError/timedOut`` when nothing came in time (the adapter stays
    ///   usable); ``DisksClientError/badMessage(_:)`` after an undecodable MATCH_EVENT (the
    ///   client is then closed); ``MatchHostClientError/closed(_:)`` when the session ended
    ///   otherwise; `CancellationError`.
    public func nextEvent(timeout: Duration?) async throws -> DisksEvent? {
        try await self.feed.next(timeout: timeout)
    }

    /// Leaves the match (LEAVE_MATCH); returns once the server has taken this player out.
    /// During play the others see it leave, and the last one left wins. The session stays open.
    public func leave() async throws {
        try await self.client.leaveMatch(self.matchID)
    }

    /// Closes the client: GOODBYE, so the match sees this player leave. Events received
    /// before can still be read, then ``nextEvent(timeout:)`` returns `nil`.
    public func close() async {
        await self.client.close()
    }
}

/// What a ``DisksClient`` receives.
public enum DisksEvent: Sendable, Hashable {
    /// A Disks server message (the body of a MATCH_EVENT): STATE, TICK, GAME_OVER, TAP_MISSED.
    case message(DisksServerMessage)
    /// PRESENCE: a player of the match joined, lost its connection, came back or left.
    case presence(playerID: String, change: NativePresenceChange, reason: NativeLeaveReason)
    /// MATCH_ENDED: the match is over, for this reason; nothing more comes for it.
    case matchEnded(reason: String)
}

/// What ``DisksClient`` throws besides the client's and the server's errors.
public enum DisksClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing arrived within the timeout given to ``DisksClient/nextEvent(timeout:)``.
    case timedOut
    /// The server sent a MATCH_EVENT that is not a Disks server message (the decoding error);
    /// the client was closed.
    case badMessage(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .timedOut: return "timed out waiting for the server"
        case .badMessage(let error): return "bad Disks message from the server: \(error)"
        }
    }
}
