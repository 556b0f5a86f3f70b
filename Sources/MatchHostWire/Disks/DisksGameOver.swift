import NIOCore

/// S→C type 3 `GAME_OVER`: the game is decided.
///
/// Fields: `u8 reason` (``DisksGameOverReason``), `u8 count` × `u8 seat` (the winners; none
/// when nobody scored), `u8 count` × score (every seat's final score, in seat order).
public struct DisksGameOver: Sendable, Hashable {
    /// Why the game ended.
    public var reason: DisksGameOverReason
    /// The winning seats; several on a tie at the time limit, none if nobody scored.
    public var winners: [UInt8]
    /// Every seat's final score.
    public var scores: [DisksScore]

    /// Creates the message.
    public init(reason: DisksGameOverReason, winners: [UInt8], scores: [DisksScore]) {
        self.reason = reason
        self.winners = winners
        self.scores = scores
    }

    /// Reads the fields after the type byte.
    /// - Throws: ``WireError`` for a truncated field, ``NativeWireError`` for an unknown reason.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.reason = try buffer.readDisksCode(DisksGameOverReason.self, field: "gameOver reason")
        self.winners = try buffer.readDisksList(countField: "gameOver winners count") {
            try $0.readWireByte(field: "gameOver winner seat")
        }
        self.scores = try buffer.readDisksList(countField: "gameOver scores count") { try DisksScore(decoding: &$0) }
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.reason.rawValue)
        buffer.writeDisksCount(self.winners.count)
        for seat in self.winners { buffer.writeWireByte(seat) }
        buffer.writeDisksCount(self.scores.count)
        for score in self.scores { score.encode(into: &buffer) }
    }
}
