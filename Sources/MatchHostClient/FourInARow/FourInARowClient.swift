import MatchHostWire
import NIOCore

/// One player's Four in a Row game in a `fourinarow` match of the native protocol, over a
/// connected ``MatchHostClient``.
///
/// ```swift
/// let client = MatchHostClient(configuration: .init(host: "127.0.0.1", credentials: .device(id: id, secret: secret)))
/// try await client.connect()
/// let game = try await FourInARowClient.createMatch(on: client, isPrivate: true)
/// print("join with --code \(game.match.inviteCode)")          // or joinMatch(id, on:), joinMatch(code:on:)
/// var view = FourInARowView(myPlayerID: game.playerID)
/// while let event = try await game.nextEvent(timeout: nil) {
///     if case .message(let message) = event { view.apply(message, at: .now) }
///     if view.isMyTurn { try await game.move(column: 3) }
///     if view.isOver { break }
/// }
/// await game.close()
/// ```
///
/// A move goes out as a reliable MATCH_INPUT holding a MOVE; ``move(column:)`` numbers it
/// itself, from the STATE and MOVED messages read so far with ``nextEvent(timeout:)``, so a
/// move is always meant for the board the player has seen (and is refused as stale, not
/// played, if the board has moved on). Each MATCH_EVENT of the match is decoded as a
/// ``FourInARowServerMessage``; PRESENCE and MATCH_ENDED of the match arrive as the other
/// ``FourInARowEvent`` cases; events of other matches are dropped.
///
/// The adapter reads ``MatchHostClient/events`` (which has one consumer: one adapter per
/// client) and owns the client: ``close()`` closes it. A dropped connection is the client's
/// business: it reconnects and resumes its session on its own, the server resends what was
/// missed and then a fresh STATE. After a server restart the client starts a new session by
/// itself (``MatchHostClient/Configuration/reauthenticatesAfterSessionLoss``) and the server
/// sends STATE again; a move the server never acknowledged is not resent, so the board in that
/// STATE says whether it is still this player's turn.
public final class FourInARowClient: Sendable {
    /// The native game mode of Four in a Row matches.
    public static let mode = "fourinarow"

    /// The native client carrying the game.
    public let client: MatchHostClient
    /// The match as it was when this player joined it (MATCH_JOINED); its
    /// ``NativeMatchInfo/inviteCode`` is the code of a private match.
    public let match: NativeMatchInfo
    /// This player's id on the server (STATE lists it with its seat).
    public let playerID: String

    private let feed: MatchEventFeed<FourInARowEvent>
    /// The number the next MOVE carries; bound to the client's loop.
    private let moveNumber: NIOLoopBoundBox<UInt16>

    /// The match's id.
    public var matchID: MatchIdentifier { self.match.matchID }
    /// The code others join a private match with; nil for a public match.
    public var inviteCode: String? { self.match.inviteCode.isEmpty ? nil : self.match.inviteCode }

    private init(client: MatchHostClient, match: NativeMatchInfo, playerID: String) {
        self.client = client
        self.match = match
        self.playerID = playerID
        // The next move's number follows what the reader has seen, not what has arrived.
        let moveNumber = NIOLoopBoundBox.makeBoxSendingValue(UInt16(1), eventLoop: client.eventLoop)
        self.moveNumber = moveNumber
        self.feed = MatchEventFeed(
            client: client, matchID: match.matchID, timeoutError: FourInARowClientError.timedOut,
            onHandOut: { event in
                switch event {
                case .message(.state(let snapshot)):
                    moveNumber.value = snapshot.moveNumber
                case .message(.moved(let moved)) where moved.moveNumber >= moveNumber.value:
                    moveNumber.value = moved.moveNumber &+ 1
                default:
                    break
                }
            },
            convert: { event, matchID in try Self.convert(event, matchID: matchID) })
    }

    /// Creates a `fourinarow` match and seats this player in it (seat 0); play starts when a
    /// second player joins.
    /// - Parameters:
    ///   - client: a connected client (``MatchHostClient/connect()`` done) whose
    ///     ``MatchHostClient/events`` nothing else reads.
    ///   - isPrivate: left out of the lobby; others join with the invite code in
    ///     ``match``'s ``NativeMatchInfo/inviteCode`` (also ``inviteCode``).
    ///   - label: free text shown to players.
    /// - Throws: ``NativeError`` (`TOO_MANY_MATCHES`, ...), the client's errors.
    public static func createMatch(on client: MatchHostClient, isPrivate: Bool = false, label: String = "") async throws
        -> FourInARowClient
    {
        let playerID = try await client.authenticatedPlayerID()
        let match = try await client.createMatch(mode: Self.mode, maxPlayers: 2, label: label, isPrivate: isPrivate)
        return FourInARowClient(client: client, match: match, playerID: playerID)
    }

    /// Seats this player in an existing `fourinarow` match (play starts if it is the second seat).
    /// - Throws: ``NativeError`` (`NO_SUCH_MATCH`, `MATCH_FULL`, `JOIN_REFUSED`, ...);
    ///   ``MatchHostClientError/invalidArgument(_:)`` when the match is not Four in a Row (the
    ///   player leaves it again); the client's errors.
    public static func joinMatch(_ matchID: MatchIdentifier, on client: MatchHostClient) async throws -> FourInARowClient {
        let playerID = try await client.authenticatedPlayerID()
        return try await Self.checked(client.joinMatch(matchID), on: client, playerID: playerID)
    }

    /// Seats this player in the private (or public) `fourinarow` match with this invite code.
    /// - Throws: as ``joinMatch(_:on:)``; `NO_SUCH_MATCH` for an unknown code.
    public static func joinMatch(code: String, on client: MatchHostClient) async throws -> FourInARowClient {
        let playerID = try await client.authenticatedPlayerID()
        return try await Self.checked(client.joinMatch(code: code), on: client, playerID: playerID)
    }

    /// The `fourinarow` match the server seated this player in again as its session began
    /// (MATCH_RESUMED: a saved game, after a server restart), if there is one: `matchID`'s, or
    /// else the first. No JOIN_MATCH is sent (the server would refuse it: the seat is already
    /// this player's); the game's STATE comes next through ``nextEvent(timeout:)``.
    /// - Parameter client: as for ``createMatch(on:isPrivate:label:)``, connected just before.
    /// - Throws: the client's errors (this waits for one ``MatchHostClient/ping()``, after which
    ///   every MATCH_RESUMED of the session's start has arrived).
    public static func resumedMatch(_ matchID: MatchIdentifier? = nil, on client: MatchHostClient) async throws -> FourInARowClient? {
        let playerID = try await client.authenticatedPlayerID()
        _ = try await client.ping()
        let resumed = await client.resumedMatches.first { $0.mode == Self.mode && (matchID == nil || $0.matchID == matchID) }
        return resumed.map { FourInARowClient(client: client, match: $0, playerID: playerID) }
    }

    private static func checked(_ match: NativeMatchInfo, on client: MatchHostClient, playerID: String) async throws
        -> FourInARowClient
    {
        FourInARowClient(client: client, match: try await client.requireMode(Self.mode, of: match), playerID: playerID)
    }

    /// The event for a client event, `nil` for an event of another match or one Four in a
    /// Row does not use.
    /// - Throws: ``FourInARowClientError/badMessage(_:)`` for a MATCH_EVENT of the match that
    ///   does not decode.
    static func convert(_ event: MatchHostClient.Event, matchID: MatchIdentifier) throws -> FourInARowEvent? {
        switch event {
        case .matchEvent(let id, let body, _) where id == matchID:
            do {
                return .message(try FourInARowServerMessage(body: body))
            } catch {
                throw FourInARowClientError.badMessage("\(error)")
            }
        case .presence(let id, let playerID, let change, let reason) where id == matchID:
            return .presence(playerID: playerID, change: change, reason: reason)
        case .matchEnded(let id, let reason) where id == matchID:
            return .matchEnded(reason: reason)
        default:
            return nil
        }
    }

    /// The number the next ``move(column:)`` carries: the next move of the board as read
    /// through ``nextEvent(timeout:)``.
    public var nextMoveNumber: UInt16 {
        get async throws {
            let moveNumber = self.moveNumber
            return try await self.client.eventLoop.submit { moveNumber.value }.get()
        }
    }

    /// Drops a disc: sends MOVE with ``nextMoveNumber`` as a reliable MATCH_INPUT.
    ///
    /// The answer comes as events: MOVED to both players (the mover's acknowledgement), or
    /// MOVE_REFUSED to this player with the reason (not its turn, a full column, a stale number, ...).
    /// - Parameter column: 0 to 6 from the left. Other columns up to 255 are sent as they are
    ///   (the server refuses them, reason `columnOutOfRange`).
    /// - Returns: the move number sent, to match a MOVE_REFUSED to it.
    /// - Throws: ``MatchHostClientError/invalidArgument(_:)`` for a column outside 0-255; the
    ///   client's errors (``MatchHostClientError/closed(_:)``, ``MatchHostClientError/sendQueueFull(bytes:limit:)``, ...).
    @discardableResult
    public func move(column: Int) async throws -> UInt16 {
        guard let byte = UInt8(exactly: column) else {
            throw MatchHostClientError.invalidArgument("a column is 0 to 6, not \(column)")
        }
        let number = try await self.nextMoveNumber
        let body = FourInARowClientMessage.move(FourInARowMove(moveNumber: number, column: byte)).encoded()
        try await self.client.sendInput(body, in: self.matchID, reliable: true)
        return number
    }

    /// The next event of the match.
    ///
    /// - Parameter timeout: how long to wait; `nil` waits until something arrives or the
    ///   client ends.
    /// - Returns: the event, or `nil` once the client has been closed with ``close()`` and
    ///   every event before has been read.
    /// - Throws: ``FourInARowClientError/timedOut`` when nothing came in time (the client stays
    ///   usable); ``MatchHostClientError/closed(_:)`` when the session ended otherwise;
    ///   ``FourInARowClientError/badMessage(_:)`` after an undecodable MATCH_EVENT (the client
    ///   is then closed); `CancellationError`.
    public func nextEvent(timeout: Duration?) async throws -> FourInARowEvent? {
        try await self.feed.next(timeout: timeout)
    }

    /// The next Four in a Row server message, skipping presence and match-end events.
    /// - Parameter timeout: how long to wait for a message, skipped events included.
    /// - Returns: the message, or `nil` once the events have ended.
    /// - Throws: as ``nextEvent(timeout:)``.
    public func nextMessage(timeout: Duration? = nil) async throws -> FourInARowServerMessage? {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        while true {
            let remaining = deadline.map { max(.zero, $0 - clock.now) }
            guard let event = try await self.nextEvent(timeout: remaining) else { return nil }
            if case .message(let message) = event { return message }
        }
    }

    /// Leaves the match (LEAVE_MATCH); during play that loses the game (GAME_OVER reason
    /// opponent left, then MATCH_ENDED, go to the other player). The session stays open.
    /// - Throws: ``NativeError`` `NOT_IN_MATCH` when the match has already ended; the client's errors.
    public func leave() async throws {
        try await self.client.leaveMatch(self.matchID)
    }

    /// Closes the client: GOODBYE, so the match sees this player leave (which loses a game in
    /// play). Events received before can still be read, then ``nextEvent(timeout:)`` returns `nil`.
    public func close() async {
        await self.client.close()
    }
}
