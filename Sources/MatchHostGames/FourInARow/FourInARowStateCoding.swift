import MatchHostCore
import MatchHostWire
import NIOCore

/// Why saved bytes are not a ``FourInARowState``.
public enum FourInARowStateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bytes end inside `field`.
    case truncated(field: String)
    /// A format version this server does not read.
    case unsupportedVersion(UInt8)
    /// `field` holds a value outside its range.
    case invalidValue(field: String, value: Int)
    /// A player id that is too long or not UTF-8.
    case invalidPlayerID(index: Int)
    /// Move `index` (from 0) cannot be played on the board the earlier moves make.
    case illegalMove(index: Int, column: Int)
    /// The fields contradict each other (say, a game in play whose board has a line of four).
    case inconsistent(String)
    /// Bytes left over after the state.
    case trailingBytes(count: Int)

    /// A one-line explanation for logs.
    public var description: String {
        switch self {
        case .truncated(let field): return "saved game ends inside \(field)"
        case .unsupportedVersion(let version): return "saved game has format version \(version), this server reads 1"
        case .invalidValue(let field, let value): return "saved game's \(field) cannot be \(value)"
        case .invalidPlayerID(let index): return "saved game's player \(index) has an id that is too long or not UTF-8"
        case .illegalMove(let index, let column): return "saved game's move \(index + 1), column \(column), cannot be played"
        case .inconsistent(let what): return "saved game is inconsistent: \(what)"
        case .trailingBytes(let count): return "saved game has \(count) bytes too many"
        }
    }
}

/// The stored form: the board is not stored but replayed from the moves, so a saved game
/// cannot hold a board its moves do not make.
///
/// ```
/// u8 version (1)  u8 phase (0 waiting, 1 playing, 2 over)  u8 firstSeat
/// u8 playerCount (0-2)  playerCount × str playerId (u16 byte count, UTF-8, at most 255 bytes)
/// u8 moveCount (0-42)   moveCount × u8 column
/// only when over:       u8 winnerSeat (255: none)  u8 reason (FourInARowEndReason)
/// ```
extension FourInARowState {
    /// The stored format's version byte.
    public static let formatVersion: UInt8 = 1
    /// The longest player id stored, in bytes.
    public static let maximumPlayerIDLength = 255

    /// Writes the state in its stored form.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(Self.formatVersion)
        buffer.writeWireByte(self.phase.rawValue)
        buffer.writeWireByte(UInt8(self.firstSeat))
        buffer.writeWireByte(UInt8(self.players.count))
        for player in self.players { buffer.writeNativeString(player) }
        buffer.writeWireByte(UInt8(self.moves.count))
        for column in self.moves { buffer.writeWireByte(UInt8(column)) }
        if let ending = self.ending {
            buffer.writeWireByte(ending.winnerSeat.map(UInt8.init) ?? FourInARowGrid.noSeat)
            buffer.writeWireByte(ending.reason.rawValue)
        }
    }

    /// The stored form in a new buffer.
    public func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 16 + 2 * 34 + self.moves.count)
        self.encode(into: &buffer)
        return buffer
    }

    /// Reads a state in its stored form, replaying its moves; every byte of `bytes` must belong to it.
    /// - Throws: ``FourInARowStateError`` for bytes that are not a whole, consistent game.
    public init(bytes: ByteBuffer) throws(FourInARowStateError) {
        var buffer = bytes
        let version = try buffer.readStateByte(field: "version")
        guard version == Self.formatVersion else { throw .unsupportedVersion(version) }
        let phaseByte = try buffer.readStateByte(field: "phase")
        guard let phase = FourInARowPhase(rawValue: phaseByte) else {
            throw .invalidValue(field: "phase", value: Int(phaseByte))
        }
        let firstSeat = Int(try buffer.readStateByte(field: "firstSeat"))
        guard firstSeat <= 1 else { throw .invalidValue(field: "firstSeat", value: firstSeat) }
        self.init(firstSeat: firstSeat)

        let playerCount = Int(try buffer.readStateByte(field: "playerCount"))
        // Both seats are taken the moment play starts, and never before.
        guard phase == .waiting ? playerCount < 2 : playerCount == 2 else {
            throw .inconsistent("\(playerCount) players in a game that is \(phase)")
        }
        for index in 0..<playerCount {
            self.addPlayer(try buffer.readStatePlayerID(index: index))
        }

        let moveCount = Int(try buffer.readStateByte(field: "moveCount"))
        guard moveCount <= FourInARowGrid.cellCount else { throw .invalidValue(field: "moveCount", value: moveCount) }
        guard phase != .waiting || moveCount == 0 else { throw .inconsistent("moves in a game that has not started") }
        if phase != .waiting { self.start() }
        for index in 0..<moveCount {
            let column = Int(try buffer.readStateByte(field: "moves[\(index)]"))
            guard self.phase == .playing else { throw .inconsistent("move \(index + 1) comes after the game ended") }
            guard case .success = self.play(column: column) else { throw .illegalMove(index: index, column: column) }
        }

        if phase == .over {
            let winnerByte = try buffer.readStateByte(field: "winnerSeat")
            guard winnerByte <= 1 || winnerByte == FourInARowGrid.noSeat else {
                throw .invalidValue(field: "winnerSeat", value: Int(winnerByte))
            }
            let winner = winnerByte == FourInARowGrid.noSeat ? nil : Int(winnerByte)
            let reasonByte = try buffer.readStateByte(field: "reason")
            guard let reason = FourInARowEndReason(rawValue: reasonByte) else {
                throw .invalidValue(field: "reason", value: Int(reasonByte))
            }
            try self.checkEnding(winner: winner, reason: reason)
        } else if self.phase == .over {
            throw .inconsistent("the moves end the game but it is saved as \(phase)")
        }
        guard buffer.readableBytes == 0 else { throw .trailingBytes(count: buffer.readableBytes) }
    }

    /// Checks a stored ending against the replayed board, and records it when it is not on the board.
    private mutating func checkEnding(winner: Int?, reason: FourInARowEndReason) throws(FourInARowStateError) {
        switch reason {
        case .fourInARow, .draw:
            // Only the board can end a game this way: the replay must have ended it just so.
            guard let ending = self.ending, ending.reason == reason, ending.winnerSeat == winner else {
                throw .inconsistent("saved as ended by \(reason) but the board does not say so")
            }
        case .turnTimeout, .opponentLeft:
            guard self.phase == .playing else { throw .inconsistent("the board ended the game, not \(reason)") }
            guard let winner else { throw .inconsistent("\(reason) without a winner") }
            if reason == .turnTimeout && winner == self.seatToMove {
                throw .inconsistent("the seat to move cannot win on its own timeout")
            }
            self.finish(winnerSeat: winner, reason: reason)
        }
    }
}

extension ByteBuffer {
    fileprivate mutating func readStateByte(field: String) throws(FourInARowStateError) -> UInt8 {
        guard let byte = self.readInteger(as: UInt8.self) else { throw .truncated(field: field) }
        return byte
    }

    fileprivate mutating func readStatePlayerID(index: Int) throws(FourInARowStateError) -> String {
        do {
            return try self.readNativeString(field: "players[\(index)]", maximumLength: FourInARowState.maximumPlayerIDLength)
        } catch WireError.truncated {
            throw .truncated(field: "players[\(index)]")
        } catch {
            throw .invalidPlayerID(index: index)
        }
    }
}
