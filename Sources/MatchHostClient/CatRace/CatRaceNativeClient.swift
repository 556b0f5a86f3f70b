import MatchHostWire
import NIOCore

/// A Cat Race played in a `catrace` match of the native protocol: a ``CatRaceConnection``
/// over a connected ``MatchHostClient``.
///
/// ```swift
/// let client = MatchHostClient(configuration: .init(host: "127.0.0.1", credentials: .device(id: id, secret: secret)))
/// try await client.connect()
/// let race = try await CatRaceNativeClient.createMatch(on: client, racers: 2)   // or joinMatch(id, on: client)
/// print("others join match \(race.matchID)")
/// while let message = try await race.nextMessage() { ... try await race.send(.movedSelf(move)) ... }
/// await race.close()
/// ```
///
/// Sends go out as MATCH_INPUT carrying the Cat Race client message body (type byte first,
/// no length prefix), reliably; the server plays MOVED_SELF and RESTART_MATCH and ignores the
/// other Cat Race messages inside a match. Each MATCH_EVENT of the match is decoded as a Cat
/// Race server message; PRESENCE and MATCH_ENDED of the match arrive as the other
/// ``CatRaceConnectionEvent`` cases; events of other matches are dropped.
///
/// The race is on from the match's creation, and every join sends everyone MATCH_STARTED with
/// the line-up so far: wait for ``capacity`` racers before tapping.
///
/// The adapter reads ``MatchHostClient/events`` (which has one consumer) and owns the client:
/// ``close()`` closes it (GOODBYE, so the match sees this player leave and ends).
/// Dropped connections are the client's business: it reconnects and resumes on its own.
public final class CatRaceNativeClient: CatRaceConnection {
    /// The native game mode of Cat Race matches.
    public static let mode = "catrace"

    /// The native client carrying the race.
    public let client: MatchHostClient
    /// The match as it was when this player joined it (MATCH_JOINED).
    public let match: NativeMatchInfo
    /// This player's id on the server (server-issued; MATCH_STARTED shows its first 8
    /// characters as the alias).
    public let playerID: String

    private let feed: MatchEventFeed<CatRaceConnectionEvent>

    /// The match's id, for other players to join.
    public var matchID: MatchIdentifier { self.match.matchID }
    /// The most racers the match holds.
    public var capacity: Int { Int(self.match.capacity) }

    private init(client: MatchHostClient, match: NativeMatchInfo, playerID: String) {
        self.client = client
        self.match = match
        self.playerID = playerID
        self.feed = MatchEventFeed(client: client, matchID: match.matchID, timeoutError: CatRaceClientError.timedOut) { event, matchID in
            try Self.convert(event, matchID: matchID)
        }
    }

    /// Creates a `catrace` match for `racers` players and seats this player in it (seat 0).
    /// - Parameters:
    ///   - client: a connected client (``MatchHostClient/connect()`` done) whose ``MatchHostClient/events``
    ///     nothing else reads.
    ///   - racers: the match's capacity, 2 to the server's `--max-players`.
    ///   - label: free text shown to players.
    /// - Throws: ``NativeError`` (`BAD_ARGUMENT` for a capacity the server does not allow,
    ///   `TOO_MANY_MATCHES`), the client's errors.
    public static func createMatch(on client: MatchHostClient, racers: Int, label: String = "") async throws
        -> CatRaceNativeClient
    {
        guard (2...Int(UInt8.max)).contains(racers) else {
            throw MatchHostClientError.invalidArgument("a race needs 2 or more racers, not \(racers)")
        }
        let playerID = try await client.authenticatedPlayerID()
        let match = try await client.createMatch(mode: Self.mode, maxPlayers: UInt8(racers), label: label)
        return CatRaceNativeClient(client: client, match: match, playerID: playerID)
    }

    /// Seats this player in an existing `catrace` match.
    /// - Parameters:
    ///   - matchID: the match.
    ///   - client: a connected client whose ``MatchHostClient/events`` nothing else reads.
    /// - Throws: ``NativeError`` (`NO_SUCH_MATCH`, `MATCH_FULL`, ...);
    ///   ``MatchHostClientError/invalidArgument(_:)`` when the match is not a Cat Race (the
    ///   player leaves it again); the client's errors.
    public static func joinMatch(_ matchID: MatchIdentifier, on client: MatchHostClient) async throws -> CatRaceNativeClient {
        let playerID = try await client.authenticatedPlayerID()
        let match = try await client.requireMode(Self.mode, of: client.joinMatch(matchID))
        return CatRaceNativeClient(client: client, match: match, playerID: playerID)
    }


    /// The connection event for a client event, `nil` for an event of another match (or
    /// match data, which Cat Race does not use).
    /// - Throws: ``CatRaceClientError/badMessage(_:)`` for a MATCH_EVENT that is not a Cat
    ///   Race server message.
    static func convert(_ event: MatchHostClient.Event, matchID: MatchIdentifier) throws -> CatRaceConnectionEvent? {
        switch event {
        case .matchEvent(let id, let body, _) where id == matchID:
            do {
                return .message(try CatRaceServerMessage(frameBody: body))
            } catch let error as WireError {
                throw CatRaceClientError.badMessage(error)
            }
        case .presence(let id, let playerID, let change, let reason) where id == matchID:
            return .presence(playerID: playerID, change: change, reason: reason)
        case .matchEnded(let id, let reason) where id == matchID:
            return .matchEnded(reason: reason)
        default:
            return nil
        }
    }

    // MARK: CatRaceConnection

    /// Sends a Cat Race client message as a reliable MATCH_INPUT.
    /// - Throws: the client's errors (``MatchHostClientError/closed(_:)``,
    ///   ``MatchHostClientError/sendQueueFull(bytes:limit:)``, ...).
    public func send(_ message: CatRaceClientMessage) async throws {
        var frame = ByteBuffer()
        message.encodeFrame(into: &frame)
        frame.moveReaderIndex(forwardBy: 4)  // the body: the MATCH_INPUT's `bytes` count replaces the length
        try await self.client.sendInput(frame, in: self.matchID, reliable: true)
    }

    /// The next event of the match.
    ///
    /// Returns `nil` once the client has been closed with ``close()`` and every event before
    /// has been read; throws ``MatchHostClientError/closed(_:)`` when the session ended
    /// otherwise, ``CatRaceClientError/badMessage(_:)`` after an undecodable MATCH_EVENT (the
    /// client is then closed), ``CatRaceClientError/timedOut`` when nothing came in time.
    public func nextEvent(timeout: Duration?) async throws -> CatRaceConnectionEvent? {
        try await self.feed.next(timeout: timeout)
    }

    /// Leaves the match (LEAVE_MATCH): the server ends the race for everyone (NOT_IN_MATCH,
    /// then MATCH_ENDED). Returns once the server has done so. The session stays open.
    public func leave() async throws {
        try await self.client.leaveMatch(self.matchID)
    }

    /// Closes the client: GOODBYE, so the match sees this player leave (which ends the race).
    /// Events received before can still be read, then ``nextEvent(timeout:)`` returns `nil`.
    public func close() async {
        await self.client.close()
    }
}
