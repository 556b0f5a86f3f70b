import MatchHostWire

/// One Cat Race player's connection, whichever protocol carries the race: port 1955
/// (``CatRaceClient``) or a `catrace` match of the native protocol (``CatRaceNativeClient``).
///
/// What a player does is the same on both: send Cat Race client messages (MOVED_SELF,
/// RESTART_MATCH), read Cat Race server messages. `matchhost play catrace` and
/// ``CatRaceBot`` are written against this protocol; only how a race is set up (START_MATCH
/// on port 1955, CREATE_MATCH or JOIN_MATCH natively) and left differs.
public protocol CatRaceConnection: Sendable {
    /// The id of the player this connection speaks for, as MATCH_STARTED lists it (for
    /// ``CatRaceRaceView/init(myPlayerID:)``).
    var playerID: String { get }

    /// Sends one Cat Race client message.
    func send(_ message: CatRaceClientMessage) async throws

    /// The next event.
    ///
    /// - Parameter timeout: how long to wait; `nil` waits until something arrives or the
    ///   connection ends.
    /// - Returns: the event, or `nil` once the connection has closed and every event received
    ///   before has been read.
    /// - Throws: ``CatRaceClientError/timedOut`` when nothing arrived in time (the connection
    ///   stays usable); the error that ended the connection; `CancellationError`.
    func nextEvent(timeout: Duration?) async throws -> CatRaceConnectionEvent?

    /// Ends the connection (and, natively, the session: the player leaves its match).
    func close() async
}

/// What a ``CatRaceConnection`` receives.
public enum CatRaceConnectionEvent: Sendable, Hashable {
    /// A Cat Race server message (on port 1955 a frame; natively the body of a MATCH_EVENT).
    case message(CatRaceServerMessage)
    /// Native only (PRESENCE): a player of the match joined, lost its connection, came back
    /// or left. Cat Race itself shows joins as MATCH_STARTED and the end of the race as
    /// NOT_IN_MATCH; this says who and why.
    case presence(playerID: String, change: NativePresenceChange, reason: NativeLeaveReason)
    /// Native only (MATCH_ENDED): the match is over, for this reason; nothing more comes for it.
    case matchEnded(reason: String)
}

extension CatRaceConnection {
    /// The next Cat Race server message, skipping the other events.
    ///
    /// - Parameter timeout: how long to wait for a message, all skipped events included;
    ///   `nil` waits as long as it takes.
    /// - Returns: the message, or `nil` once the connection has closed.
    /// - Throws: as ``nextEvent(timeout:)``; and ``CatRaceClientError/matchEnded(reason:)`` at
    ///   a native match's MATCH_ENDED, after which no message comes (a server that stops ends a
    ///   native race with it alone, without NOT_IN_MATCH: skipping it would leave the caller
    ///   waiting for good).
    public func nextMessage(timeout: Duration? = nil) async throws -> CatRaceServerMessage? {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        while true {
            let remaining = deadline.map { max(.zero, $0 - clock.now) }
            switch try await self.nextEvent(timeout: remaining) {
            case nil: return nil
            case .message(let message): return message
            case .matchEnded(let reason): throw CatRaceClientError.matchEnded(reason: reason)
            case .presence: continue
            }
        }
    }
}

extension CatRaceClient: CatRaceConnection {
    /// The next server message, as an event (port 1955 has nothing but messages).
    public func nextEvent(timeout: Duration?) async throws -> CatRaceConnectionEvent? {
        try await self.next(timeout: timeout).map { .message($0) }
    }
}
