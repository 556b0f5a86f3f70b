import Logging
import MatchHostWire
import NIOCore

/// The live sessions of the native protocol: opening them at authentication, reattaching
/// them on resume, holding them through a grace period when their connection drops, and
/// ending them.
///
/// Confined to one event loop (or a ``ManualClock``'s thread in tests), like the matches its
/// sessions play in, so that a message goes from a connection through a session into a match
/// with no hop. Its owner learns of presence through the three callbacks.
public final class SessionRegistry {
    /// Time and timers.
    public let clock: any MatchClock
    /// How long a session outlives its connection.
    public let gracePeriod: TimeAmount
    /// The bound on each session's unacknowledged backlog, in bytes.
    public let maximumBacklogBytes: Int
    /// The session lost its connection and is waiting for a resume.
    public var onSessionAway: ((Session) -> Void)?
    /// The session is back on a new connection.
    public var onSessionBack: ((Session) -> Void)?
    /// The session has ended: its player is gone from the server.
    public var onSessionEnded: ((Session) -> Void)?
    /// The session (first) has ended because its player authenticated again (the second):
    /// the player is still here, on the newer session. Called instead of ``onSessionEnded``,
    /// from ``open(player:transport:)``, before it returns the newer session.
    public var onSessionReplaced: ((_ old: Session, _ new: Session) -> Void)?

    private var sessions: [String: Session] = [:]
    private var sessionsByPlayer: [PlayerID: Session] = [:]
    private var logger: Logger
    private var random = SystemRandomNumberGenerator()

    /// Creates an empty registry.
    public init(clock: any MatchClock, gracePeriod: TimeAmount, maximumBacklogBytes: Int, logger: Logger) {
        self.clock = clock
        self.gracePeriod = gracePeriod
        self.maximumBacklogBytes = maximumBacklogBytes
        self.logger = logger
    }

    /// How many sessions are live (connected or waiting for a resume).
    public var count: Int { self.sessions.count }

    /// The live session of `player`, if any.
    public func session(of player: PlayerID) -> Session? { self.sessionsByPlayer[player] }

    /// Opens a new session for an authenticated player on `transport`. A player has at most
    /// one session: an older one ends, its connection told `SESSION_REPLACED`, and its owner
    /// hears of it through ``onSessionReplaced``.
    public func open(player: PlayerID, transport: any SessionTransport) -> Session {
        let previous = self.sessionsByPlayer[player]
        let session = Session(
            id: self.random.hexString(bytes: 16), playerID: player, resumeToken: self.random.hexString(bytes: 32),
            maximumBacklogBytes: self.maximumBacklogBytes)
        session.registry = self
        session.transport = transport
        self.sessions[session.id] = session
        self.sessionsByPlayer[player] = session
        self.logger.info("session opened", metadata: ["session": "\(session.id)", "player": "\(player)"])
        if let previous {
            self.end(previous, error: NativeError(.sessionReplaced, "the player authenticated again on another connection"), replacedBy: session)
        }
        return session
    }

    /// The secret that resumes `session`, for the `AUTHENTICATED` frame only.
    public func resumeToken(of session: Session) -> String { session.resumeToken }

    /// Reattaches a session to `transport`: checks the resume token, drops what the client
    /// acknowledged, replaces any older connection, then writes `RESUMED` and every
    /// unacknowledged message in order.
    public func resume(
        sessionID: String, resumeToken: String, lastReceived: UInt64, transport: any SessionTransport
    ) -> Result<Session, NativeError> {
        guard let session = self.sessions[sessionID], session.isTakingMessages else {
            return .failure(NativeError(.sessionNotFound, "no live session \(sessionID); it ended or never existed"))
        }
        guard constantTimeEquals(resumeToken, session.resumeToken) else {
            self.logger.warning("resume refused: wrong resume token", metadata: ["session": "\(session.id)"])
            return .failure(NativeError(.resumeRefused, "wrong resume token for session \(sessionID)"))
        }
        do {
            try session.receiveAcknowledgement(lastReceived)
        } catch {
            return .failure(NativeError(.sequenceError, "\(error)"))
        }
        let wasAway = session.transport == nil
        if let previous = session.transport, previous !== transport {
            previous.close(with: NativeError(.sessionReplaced, "the session was resumed on a newer connection"))
        }
        session.graceGeneration += 1
        session.graceTimer?.cancel()
        session.graceTimer = nil
        session.transport = transport
        transport.writeControl(.resumed(lastReceived: session.inbox.lastReceived))
        session.resendUnacknowledged()
        self.logger.info(
            "session resumed",
            metadata: [
                "session": "\(session.id)", "player": "\(session.playerID)",
                "resent": "\(session.outbox.unacknowledgedCount)",
            ])
        if wasAway { self.onSessionBack?(session) }
        return .success(session)
    }

    /// `transport` closed. If it was the session's connection, the session waits
    /// ``gracePeriod`` for a resume, then ends.
    public func detach(_ session: Session, from transport: any SessionTransport) {
        guard !session.isEnded, session.transport === transport else { return }
        session.transport = nil
        session.graceGeneration += 1
        let generation = session.graceGeneration
        session.graceTimer = self.clock.schedule(after: self.gracePeriod) { [weak self, weak session] in
            guard let self, let session, !session.isEnded, session.graceGeneration == generation else { return }
            self.logger.info("session grace period expired", metadata: ["session": "\(session.id)"])
            self.end(session, error: nil)
        }
        self.logger.info("session away", metadata: ["session": "\(session.id)", "player": "\(session.playerID)"])
        self.onSessionAway?(session)
    }

    /// Ends `session` now. With an `error`, its connection (if any) is told why and closed.
    public func end(_ session: Session, error: NativeError?) {
        self.end(session, error: error, replacedBy: nil)
    }

    private func end(_ session: Session, error: NativeError?, replacedBy replacement: Session?) {
        guard !session.isEnded else { return }
        session.endState()
        let transport = session.transport
        session.transport = nil
        self.sessions[session.id] = nil
        if self.sessionsByPlayer[session.playerID] === session {
            self.sessionsByPlayer[session.playerID] = nil
        }
        var metadata: Logger.Metadata = ["session": "\(session.id)", "player": "\(session.playerID)"]
        if let error { metadata["reason"] = "\(error)" }
        // The server's own stop ends every session: one line says so, not one per player.
        self.logger.log(level: error?.code == .shuttingDown ? .debug : .info, "session ended", metadata: metadata)
        if let error, let transport { transport.close(with: error) }
        if let replacement {
            self.onSessionReplaced?(session, replacement)
        } else {
            self.onSessionEnded?(session)
        }
    }

    /// Ends `session` at the next turn of the loop: for limits hit in the middle of a
    /// broadcast, so the match sending it is not re-entered.
    func endSoon(_ session: Session, error: NativeError) {
        guard session.isTakingMessages else { return }
        session.isEnding = true
        // Stop writing now; end (and tell the matches) from a clean stack.
        let transport = session.transport
        session.transport = nil
        session.outbox.removeAll()
        transport?.close(with: error)
        _ = self.clock.schedule(after: .zero) { [weak self, weak session] in
            guard let self, let session else { return }
            self.end(session, error: nil)
        }
    }

    /// Ends every session (the server is stopping), telling each connection why.
    public func endAll(error: NativeError) {
        for session in Array(self.sessions.values) {
            self.end(session, error: error)
        }
    }
}

extension RandomNumberGenerator {
    /// `bytes` random bytes as lowercase hexadecimal: how the server writes ids and secrets.
    public mutating func hexString(bytes: Int) -> String {
        hexEncoded((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &self) })
    }
}

/// Lowercase hexadecimal of some bytes.
public func hexEncoded<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.underestimatedCount * 2)
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: text, as: UTF8.self)
}

/// Compares two secrets in time that depends on their lengths only, not on where they differ.
public func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    guard x.count == y.count else { return false }
    var difference: UInt8 = 0
    for index in x.indices { difference |= x[index] ^ y[index] }
    return difference == 0
}
