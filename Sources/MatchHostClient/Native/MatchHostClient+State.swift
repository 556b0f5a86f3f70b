import MatchHostWire
import NIOCore

extension MatchHostClient {
    /// Where the client is in its life. ``MatchHostClient/stateChanges()`` reports each change.
    ///
    /// A first ``MatchHostClient/connect()`` goes `disconnected → connecting → handshaking →
    /// authenticating → connected`. A dropped connection goes `connected → reconnecting(1) →
    /// resuming → connected` (or `reconnecting(2)`, and so on, while attempts fail). When the
    /// server no longer has the session (``Configuration/reauthenticatesAfterSessionLoss``),
    /// `resuming` is followed by `connecting → handshaking → authenticating → connected` in a new
    /// session. A server that stops gracefully (``Configuration/reconnectsAfterServerShutdown``)
    /// goes `connected → reconnecting(1)`, `reconnecting(2)`, ... while it is down, then
    /// `resuming → connecting → handshaking → authenticating → connected`. ``closed(_:)`` is final.
    public enum ConnectionState: Hashable, Sendable, CustomStringConvertible {
        /// No session and no connection: before ``MatchHostClient/connect()``, or after it failed.
        case disconnected
        /// Opening the TCP connection for a new session (the first, or one that replaces a
        /// session the server lost).
        case connecting
        /// Connected; `HELLO` sent, waiting for `WELCOME`.
        case handshaking
        /// `AUTHENTICATE` sent, waiting for `AUTHENTICATED` (also while authenticating again
        /// after the server lost the session).
        case authenticating
        /// The session is live: messages flow.
        case connected
        /// The connection dropped; waiting before, or opening the connection of, reconnect
        /// attempt `attempt` (from 1).
        case reconnecting(attempt: Int)
        /// Reconnected; `RESUME` sent (after `HELLO`), waiting for `RESUMED`.
        case resuming
        /// The client is finished: closed by ``MatchHostClient/close()``, or its session ended.
        case closed(CloseReason)

        /// A short description for logs.
        public var description: String {
            switch self {
            case .disconnected: return "disconnected"
            case .connecting: return "connecting"
            case .handshaking: return "handshaking"
            case .authenticating: return "authenticating"
            case .connected: return "connected"
            case .reconnecting(let attempt): return "reconnecting (attempt \(attempt))"
            case .resuming: return "resuming"
            case .closed(let reason): return "closed: \(reason)"
            }
        }

        /// Whether this is ``closed(_:)``.
        public var isClosed: Bool {
            if case .closed = self { return true }
            return false
        }
    }

    /// Why a client closed for good.
    public enum CloseReason: Hashable, Sendable, CustomStringConvertible {
        /// ``MatchHostClient/close()`` was called.
        case closedByClient
        /// The server ended the session with an `ERROR` frame: `RESUME_REFUSED`, `SESSION_REPLACED`
        /// (the player authenticated elsewhere), `BACKLOG_EXCEEDED`, and so on; `SHUTTING_DOWN`
        /// only with ``Configuration/reconnectsAfterServerShutdown`` off;
        /// `SESSION_NOT_FOUND` (a server restart, or the grace period ran out before the client
        /// came back) only with ``Configuration/reauthenticatesAfterSessionLoss`` off; with it
        /// on, the error that refused every credential the client had (`TOKEN_EXPIRED`,
        /// `AUTHENTICATION_FAILED`, ...).
        case serverError(NativeError)
        /// The connection dropped and this many reconnect attempts in a row failed
        /// (``ReconnectPolicy/maximumAttempts``).
        case reconnectAttemptsExhausted(attempts: Int)
        /// The server sent something this client cannot make sense of.
        case protocolViolation(String)

        /// A one-line description for logs.
        public var description: String {
            switch self {
            case .closedByClient: return "closed by the client"
            case .serverError(let error): return "server error \(error)"
            case .reconnectAttemptsExhausted(let attempts): return "gave up after \(attempts) reconnect attempts"
            case .protocolViolation(let detail): return "protocol violation: \(detail)"
            }
        }
    }

    /// Something that happened in one of the player's matches (or to its session), from ``MatchHostClient/events``.
    public enum Event: Hashable, Sendable {
        /// `PRESENCE`: `playerID` joined, disconnected from, came back to, or left match `matchID`;
        /// `reason` says why it left (``NativeLeaveReason/none`` otherwise).
        case presence(matchID: MatchIdentifier, playerID: String, change: NativePresenceChange, reason: NativeLeaveReason)
        /// `MATCH_DATA`: bytes another player sent to this one; `reliable` tells whether they
        /// came in a `RELIABLE` frame (exactly once, in order) or an `UNRELIABLE` one.
        case matchData(matchID: MatchIdentifier, sender: String, payload: ByteBuffer, reliable: Bool)
        /// `MATCH_ENDED`: the match is over.
        case matchEnded(matchID: MatchIdentifier, reason: String)
        /// `MATCH_EVENT`: an event of the game the match runs, in that game's encoding (for
        /// `catrace`, a Cat Race server message body); `reliable` as for ``matchData(matchID:sender:payload:reliable:)``.
        case matchEvent(matchID: MatchIdentifier, event: ByteBuffer, reliable: Bool)
        /// `LOBBY_UPDATE`: matches of a subscribed lobby opened, changed or closed, oldest first.
        case lobbyUpdate(mode: String, changes: [NativeLobbyChange])
        /// `MATCHMAKER_MATCHED`: a ticket found its group; the player is already seated in `match`.
        case matched(ticketID: String, match: NativeMatchInfo)
        /// `PARTY_UPDATE`: the player's party as it is now (no members: disbanded).
        case partyUpdate(NativePartyInfo)
        /// `TICKET_CANCELLED`: the server took a ticket out of the queue (a party member left, say).
        case ticketCancelled(ticketID: String, reason: String)
        /// `MATCH_RESUMED`: after a server restart this player is seated again in a stored
        /// turn-based match it was playing (sent right after authenticating); the game's state follows.
        case matchResumed(NativeMatchInfo)
        /// The server no longer had this client's session (`SESSION_NOT_FOUND` on resume: it
        /// restarted, or the grace period ran out) and the client has authenticated again: what
        /// follows belongs to a new session. The old session's unacknowledged reliable messages
        /// were not resent (see ``SessionRestart/unacknowledged``) and its waiting requests
        /// failed with ``MatchHostClientError/sessionLost(_:)``; matches the server kept come
        /// back next as ``matchResumed(_:)``, and every other match the old session was seated
        /// in ends: with the server's MATCH_ENDED, or, once a ping shows the server has nothing
        /// more to say of it, with ``matchEnded(matchID:reason:)`` "abandoned(session lost)"
        /// from the client (a relay or a game still waiting for its second player after a
        /// crash, a seat given up when the session expired). Only with ``Configuration/reauthenticatesAfterSessionLoss``.
        case sessionRestarted(SessionRestart)
        /// The server said it is stopping (ERROR `SHUTTING_DOWN`, the error given): a deploy or
        /// a restart, most likely. Its real-time matches ended just before
        /// (``matchEnded(matchID:reason:)``, "abandoned(server shutting down)"); its stored
        /// turn-based games did not (no event: they go on after the restart). The client keeps
        /// its state and reconnects
        /// following ``Configuration/reconnectPolicy``; when the server is back,
        /// ``sessionRestarted(_:)`` follows (the stop ended the session), then
        /// ``matchResumed(_:)`` and the game's state for each saved game. If the server is not
        /// back within the policy's limits, the client closes with
        /// ``CloseReason/reconnectAttemptsExhausted(attempts:)``. Only with
        /// ``Configuration/reconnectsAfterServerShutdown``.
        case serverShuttingDown(NativeError)
    }
}

/// What a ``MatchHostClient`` operation throws, besides the ``NativeError`` the server sends
/// (an `ERROR` frame during ``MatchHostClient/connect()``, or a `REQUEST_ERROR`).
public enum MatchHostClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// There is no session yet: call ``MatchHostClient/connect()`` first.
    case notConnected
    /// ``MatchHostClient/connect()`` was called while connecting or connected.
    case alreadyConnected
    /// The client is closed, for this reason; also what pending requests fail with when it closes.
    case closed(MatchHostClient.CloseReason)
    /// Queuing the message would pass ``MatchHostClient/Configuration/maximumSendQueueBytes``;
    /// nothing was queued.
    case sendQueueFull(bytes: Int, limit: Int)
    /// The message would make a frame over the server's limit; nothing was queued.
    case messageTooLarge(bytes: Int, limit: Int)
    /// An argument the protocol cannot carry (a string too long, too many targets).
    case invalidArgument(String)
    /// The request got no answer in time. It may still reach the server and take effect.
    case requestTimedOut(requestID: UInt32, after: TimeAmount)
    /// The TCP connection could not be opened, or dropped before the session started.
    case connectionFailed(String)
    /// The connection opened but the handshake did not finish within
    /// ``MatchHostClient/Configuration/connectTimeout``.
    case handshakeTimedOut
    /// The server sent something this client cannot make sense of.
    case protocolViolation(String)
    /// TLS could not be set up (``MatchHostClient/TLS``'s trusted certificates could not be
    /// read), or its handshake failed: the server's certificate is not trusted, names another
    /// host or has expired, or the server does not speak TLS on that port.
    case tlsFailed(String)
    /// The server no longer had the client's session (the error it gave, `SESSION_NOT_FOUND`):
    /// what the request or ping waited for will not come. A request failing so may or may not
    /// have been handled; ``MatchHostClient/Event/sessionRestarted(_:)`` follows once the client
    /// is in a new session.
    case sessionLost(NativeError)

    /// A one-line description for logs.
    public var description: String {
        switch self {
        case .notConnected: return "not connected: call connect() first"
        case .alreadyConnected: return "already connecting or connected"
        case .closed(let reason): return "client closed (\(reason))"
        case .sendQueueFull(let bytes, let limit): return "send queue full: \(bytes) bytes would pass the limit of \(limit)"
        case .messageTooLarge(let bytes, let limit): return "message makes a \(bytes)-byte frame, the limit is \(limit)"
        case .invalidArgument(let detail): return "invalid argument: \(detail)"
        case .requestTimedOut(let id, let after): return "request \(id) got no answer within \(after)"
        case .connectionFailed(let detail): return "connection failed: \(detail)"
        case .handshakeTimedOut: return "handshake timed out"
        case .protocolViolation(let detail): return "protocol violation: \(detail)"
        case .tlsFailed(let detail): return "TLS failed: \(detail)"
        case .sessionLost(let error): return "the server lost the session (\(error))"
        }
    }
}
