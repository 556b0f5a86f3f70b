import NIOCore

/// S→C type 1 STATE: the whole game, for a player who joins or comes back. Body:
/// `u8 phase`, `u8 count`, `count` × (`u8 seat`, `str playerId`), 42 × `u8 cell`,
/// `u16 moveNumber`, `u8 seatToMove` (255: nobody), `u32 turnTimeLeftMs`, then, only when the
/// phase is over, GAME_OVER's fields (`u8 winnerSeat`, `u8 reason`, `u8 count`, cells).
public struct FourInARowSnapshot: FourInARowMessage {
    /// The type byte, 1.
    public static let type: UInt8 = 1
    /// The longest player id accepted, in bytes.
    public static let maximumPlayerIDLength = 255
    /// The turn time (STATE's `turnTimeLeftMs`, MOVED's `turnTimeMs`) of a turn whose timer has
    /// not started: the player to move has not arrived (its seat is reserved, as after a server
    /// restart). Its timer starts, with a full turn, when it arrives; both players get STATE then.
    public static let turnWaitsForArrival = UInt32.max

    /// One seated player.
    public struct Player: Sendable, Hashable {
        /// The player's seat: 0 (disc 1) or 1 (disc 2).
        public var seat: UInt8
        /// The player's id.
        public var playerID: String

        /// Creates an entry.
        public init(seat: UInt8, playerID: String) {
            self.seat = seat
            self.playerID = playerID
        }
    }

    /// Where the game stands.
    public var phase: FourInARowPhase
    /// The seated players, in seat order (fewer than two while waiting).
    public var players: [Player]
    /// The 42 cells (see ``FourInARowGrid``): 0 empty, 1 seat 0, 2 seat 1.
    public var board: [UInt8]
    /// The number the next MOVE must carry (1 before the first move).
    public var moveNumber: UInt16
    /// The seat whose turn it is, or nil unless the game is playing.
    public var seatToMove: UInt8?
    /// What is left of the current turn, in milliseconds; 0 unless playing;
    /// ``FourInARowSnapshot/turnWaitsForArrival`` while the timer waits for the player to move.
    public var turnTimeLeftMilliseconds: UInt32
    /// How the game ended: present exactly when ``phase`` is ``FourInARowPhase/over``.
    public var result: FourInARowGameOver?

    /// Creates the message.
    public init(
        phase: FourInARowPhase, players: [Player], board: [UInt8], moveNumber: UInt16, seatToMove: UInt8?,
        turnTimeLeftMilliseconds: UInt32, result: FourInARowGameOver?
    ) {
        precondition(board.count == FourInARowGrid.cellCount, "a board has 42 cells")
        precondition((phase == .over) == (result != nil), "a result exactly when the game is over")
        self.phase = phase
        self.players = players
        self.board = board
        self.moveNumber = moveNumber
        self.seatToMove = seatToMove
        self.turnTimeLeftMilliseconds = turnTimeLeftMilliseconds
        self.result = result
    }

    /// Reads the fields after the type byte.
    public init(decodingFields buffer: inout ByteBuffer) throws {
        self.phase = try buffer.readFourInARowCode(FourInARowPhase.self, field: "phase")
        let count = Int(try buffer.readFourInARowByte(below: 3, field: "count"))
        var players: [Player] = []
        for index in 0..<count {
            let seat = try buffer.readFourInARowSeat(field: "players[\(index)].seat")
            let id = try buffer.readNativeString(field: "players[\(index)].playerId", maximumLength: Self.maximumPlayerIDLength)
            players.append(Player(seat: seat, playerID: id))
        }
        self.players = players
        var board: [UInt8] = []
        board.reserveCapacity(FourInARowGrid.cellCount)
        for index in 0..<FourInARowGrid.cellCount {
            board.append(try buffer.readFourInARowByte(below: 3, field: "board[\(index)]"))
        }
        self.board = board
        self.moveNumber = try buffer.readNativeUInt16(field: "moveNumber")
        self.seatToMove = try buffer.readFourInARowOptionalSeat(field: "seatToMove")
        self.turnTimeLeftMilliseconds = try buffer.readWireInt(field: "turnTimeLeftMs")
        self.result = self.phase == .over ? try FourInARowGameOver(decodingFields: &buffer) : nil
    }

    /// Writes the fields after the type byte.
    public func encodeFields(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.phase.rawValue)
        buffer.writeWireByte(UInt8(self.players.count))
        for player in self.players {
            buffer.writeWireByte(player.seat)
            buffer.writeNativeString(player.playerID)
        }
        for cell in self.board { buffer.writeWireByte(cell) }
        buffer.writeNativeUInt16(self.moveNumber)
        buffer.writeWireByte(self.seatToMove ?? FourInARowGrid.noSeat)
        buffer.writeWireInt(self.turnTimeLeftMilliseconds)
        if self.phase == .over, let result = self.result {
            result.encodeFields(into: &buffer)
        }
    }
}
