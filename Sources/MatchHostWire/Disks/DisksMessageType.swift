import NIOCore

/// The type byte of a Disks client message (the body of a native `MATCH_INPUT`).
public enum DisksClientMessageType: UInt8, Sendable, CaseIterable {
    /// `TAP`: the player touched the board.
    case tap = 1
}

/// The type byte of a Disks server message (the body of a native `MATCH_EVENT`).
public enum DisksServerMessageType: UInt8, Sendable, CaseIterable {
    /// `STATE`: the whole game, for a player who joins or comes back.
    case state = 1
    /// `TICK`: what changed during one tick, to everyone.
    case tick = 2
    /// `GAME_OVER`: who won and why.
    case gameOver = 3
    /// `TAP_MISSED`: the tapper's tap hit nothing.
    case tapMissed = 4
}

/// The Disks board, in board units: the same on every device, whatever its screen.
public enum DisksBoard {
    /// The board's width; x runs from 0 (left) to this.
    public static let width: UInt16 = 1000
    /// The board's height; y runs from 0 (top) to this.
    public static let height: UInt16 = 1000
}
