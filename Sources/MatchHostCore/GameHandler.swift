import NIOCore

/// A player's identity inside the server. For Cat Race it is the id the client sends;
/// for the native protocol it is the id the server issued at authentication.
public typealias PlayerID = String

/// Whether a match accepts a player.
public enum JoinDecision: Sendable, Hashable {
    /// The player may take a seat.
    case accept
    /// The player may not; the reason goes back to the client and into the log.
    case refuse(reason: String)
}

/// Why a player left a match.
public enum LeaveReason: Sendable, Hashable {
    /// The player asked to leave.
    case left
    /// The player was away for the whole grace period (or never arrived at a reserved seat).
    case graceExpired
    /// The player's session ended (it logged out, or its session's grace period ran out).
    case sessionEnded
}

/// How a seat's presence changed; reported to ``Match/onPresenceChange`` just before the handler hears of it.
public enum PresenceChange: Sendable, Hashable {
    /// A seat was created; `present` is false for a reserved seat.
    case joined(present: Bool)
    /// The seat's connection dropped.
    case disconnected
    /// The seat's player is back, or arrived at its reserved seat.
    case reconnected(firstArrival: Bool)
    /// The seat's player is gone for good.
    case left(LeaveReason)
}

/// How a match ended.
public enum MatchOutcome<Result>: CustomStringConvertible {
    /// The game reached its result.
    case finished(Result)
    /// The match was given up before a result, for the reason given.
    case abandoned(reason: String)

    /// A short text for logs.
    public var description: String {
        switch self {
        case .finished(let result): return "finished(\(result))"
        case .abandoned(let reason): return "abandoned(\(reason))"
        }
    }
}

/// The rules of one game, run by a ``Match``.
///
/// One protocol serves a real-time game (a ``tickInterval``), a turn-based game (no tick;
/// turn timers through ``Match/clock``) and a relay (inputs forwarded as events). Every
/// callback runs on the match's event loop, one at a time, so a handler needs no locks.
/// The runtime owns presence: it tracks who is connected, starts each absent player's
/// grace timer and reports expiry as ``playerLeft(_:reason:in:)``.
///
/// Handlers talk back only through the `match` they are handed: ``Match/send(_:to:)``
/// to tell players something, ``Match/end(_:)`` to finish.
public protocol GameHandler: AnyObject {
    /// What the game is created with (rate limits, board size, time limits...).
    associatedtype Options
    /// What a player can do, already decoded by the transport.
    associatedtype Input
    /// What the game tells players; each transport encodes it in its own wire format.
    associatedtype Event
    /// What a finished match reports.
    associatedtype Result

    /// Creates the game's state for a new match.
    init(options: Options)

    /// How often ``tick(in:)`` runs; `nil` for a game driven only by inputs (turn-based, relay).
    var tickInterval: TimeAmount? { get }

    /// Whether `player` may join now.
    func joinAttempt(_ player: PlayerID, in match: Match<Self>) -> JoinDecision
    /// A seat was created for `player` at `seat`; `present` is false for a reserved seat.
    func playerJoined(_ player: PlayerID, seat: Int, present: Bool, in match: Match<Self>)
    /// The connection of the player at `seat` dropped; its grace period has started.
    func playerDisconnected(seat: Int, in match: Match<Self>)
    /// The player at `seat` is connected again; `firstArrival` when it takes a reserved seat.
    func playerRejoined(seat: Int, firstArrival: Bool, in match: Match<Self>)
    /// The player at `seat` is gone for good.
    func playerLeft(seat: Int, reason: LeaveReason, in match: Match<Self>)
    /// An input from the player at `seat`.
    func receive(_ input: Input, fromSeat seat: Int, in match: Match<Self>)
    /// One step of game time, at ``tickInterval``.
    func tick(in match: Match<Self>)
}

extension GameHandler {
    /// Games without a tick need not implement one.
    public var tickInterval: TimeAmount? { nil }
    /// By default anyone may join while the match has room (the runtime checks capacity).
    public func joinAttempt(_ player: PlayerID, in match: Match<Self>) -> JoinDecision { .accept }
    /// By default nothing happens when a seat is created.
    public func playerJoined(_ player: PlayerID, seat: Int, present: Bool, in match: Match<Self>) {}
    /// By default a disconnect only starts the grace period.
    public func playerDisconnected(seat: Int, in match: Match<Self>) {}
    /// By default a returning player is not told anything.
    public func playerRejoined(seat: Int, firstArrival: Bool, in match: Match<Self>) {}
    /// By default a leaving player changes nothing else.
    public func playerLeft(seat: Int, reason: LeaveReason, in match: Match<Self>) {}
    /// By default there is nothing to do per tick.
    public func tick(in match: Match<Self>) {}
}
