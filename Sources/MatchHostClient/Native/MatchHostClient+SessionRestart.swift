import MatchHostWire

extension MatchHostClient {
    /// What ``Event/sessionRestarted(_:)`` reports: the server no longer had the client's
    /// session (it restarted, or the session's grace period ran out before the client came
    /// back, or the operator revoked it), so the client authenticated again and goes on in a
    /// new session.
    ///
    /// Nothing of the old session carries over but the player: its numbering of reliable
    /// messages starts again, and what the server kept is what it stored (a turn-based game
    /// comes back as ``Event/matchResumed(_:)`` followed by the game's state; anything else the
    /// player was in ends with ``Event/matchEnded(matchID:reason:)``, the server's or, for a
    /// match the server no longer has, the client's "abandoned(session lost)").
    public struct SessionRestart: Hashable, Sendable {
        /// Why the old session could not be resumed (`SESSION_NOT_FOUND`), or why the server
        /// ended it (`SESSION_REVOKED`).
        public var cause: NativeError
        /// The session the server no longer has.
        public var lostSession: NativeAuthenticated
        /// The new session, also ``MatchHostClient/authenticated`` from now on.
        public var newSession: NativeAuthenticated
        /// The reliable messages sent in the lost session that the server never acknowledged,
        /// oldest first: each may have been handled (the server can act on a message and
        /// crash before acknowledging it) or not. The client has **not** resent them, since
        /// resending could play a move twice; send again what is still wanted, after looking
        /// at the state the server sends now. Requests among them have already failed with
        /// ``MatchHostClientError/sessionLost(_:)``.
        public var unacknowledged: [NativeClientMessage]

        /// Creates the report.
        public init(
            cause: NativeError, lostSession: NativeAuthenticated, newSession: NativeAuthenticated,
            unacknowledged: [NativeClientMessage]
        ) {
            self.cause = cause
            self.lostSession = lostSession
            self.newSession = newSession
            self.unacknowledged = unacknowledged
        }
    }
}
