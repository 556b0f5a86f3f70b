import MatchHostCore
import NIOCore

/// What a relay player sends: bytes for some players of the match, or for all the others.
public struct RelayInput {
    /// The seats to deliver to; empty means every other player.
    public var targetSeats: [Int]
    /// The bytes, opaque to the server.
    public var payload: ByteBuffer
    /// Whether the bytes must arrive (resent after a reconnect) or may be dropped.
    public var reliable: Bool

    /// Creates an input.
    public init(targetSeats: [Int], payload: ByteBuffer, reliable: Bool) {
        self.targetSeats = targetSeats
        self.payload = payload
        self.reliable = reliable
    }
}

/// What a relay match tells players: bytes one of them sent.
public struct RelayData {
    /// The sending player.
    public var sender: PlayerID
    /// The bytes as sent.
    public var payload: ByteBuffer

    /// Creates an event.
    public init(sender: PlayerID, payload: ByteBuffer) {
        self.sender = sender
        self.payload = payload
    }
}

/// A game with no server logic: it forwards what each player sends to the chosen players
/// (GKSession's `sendData:toPeers:`), for client-authoritative games. The runtime supplies
/// capacity, presence and grace; the match ends when its last player leaves.
public final class RelayGame: GameHandler {
    /// A relay has nothing to configure beyond the match's capacity.
    public struct Options: Sendable {
        /// Creates the options.
        public init() {}
    }

    /// Why a relay match ended.
    public typealias Result = String
    /// Bytes to forward.
    public typealias Input = RelayInput
    /// Bytes forwarded.
    public typealias Event = RelayData

    /// The mode name clients use to create a relay match.
    public static let mode = "relay"

    /// Creates the relay's (empty) state.
    public init(options: Options) {}

    /// Forwards the bytes, encoded once: to all the others, or to the chosen seats (each
    /// once, however often it is named: a list naming one player 255 times is one copy).
    public func receive(_ input: RelayInput, fromSeat seat: Int, in match: Match<RelayGame>) {
        let event = RelayData(sender: match.seats[seat].player, payload: input.payload)
        if input.targetSeats.isEmpty {
            match.send(event, to: .allExcept(seat: seat), reliably: input.reliable)
        } else {
            match.send(event, to: .seats(input.targetSeats.filter { $0 != seat }), reliably: input.reliable)
        }
    }

    /// Ends the match once nobody is left in it.
    public func playerLeft(seat: Int, reason: LeaveReason, in match: Match<RelayGame>) {
        if match.activeSeatCount == 0 {
            match.end(.finished("every player left"))
        }
    }
}
