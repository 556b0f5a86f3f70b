import Logging
import MatchHostCore
import MatchHostWire
import NIOCore

/// Four in a Row on the match runtime, with the rules enforced by the server.
///
/// Two seats; seat 0's discs are 1 on the wire, seat 1's are 2. Play starts when both seats
/// exist, whether or not their players are connected yet, and each turn has a timer (through
/// ``Match/clock``) that keeps running while the player to move is away: when it runs out
/// that player loses. A player who leaves for good loses too. The timer of a player who has
/// not arrived yet (a reserved seat, as every seat of a game restored after a restart is)
/// waits for it, and starts with a full turn when it comes: a player whose phone reconnects
/// late after a restart does not find its turn spent. Its seat's grace period bounds the wait.
///
/// Each accepted move is committed before it is acknowledged: with a ``TurnJournal`` in the
/// options, the move waits in a pending slot (its turn timer stopped) until the journal says
/// it is stored; only then is it applied and MOVED sent to both players. A failed commit
/// refuses the move and the turn goes on with the time that was left; while a commit is
/// pending every move is refused.
///
/// A game that ends off the board (a turn runs out, a player leaves) is over for the rules at
/// once (moves are refused), but its final state is committed too
/// (``TurnJournal/commitEnding(matchID:state:completion:)``) before GAME_OVER: a server that
/// crashes before recording the result restores the game as over, not in play again.
///
/// STATE goes to a player when its seat is created and when it comes back; to both when play
/// starts, and when the player to move arrives at a turn that waited for it. GAME_OVER goes to everyone, then the match ends with a ``FourInARowResult``.
public final class FourInARowGame: GameHandler {
    /// See ``FourInARowOptions``.
    public typealias Options = FourInARowOptions
    /// The client messages (MOVE).
    public typealias Input = FourInARowClientMessage
    /// The server messages (STATE, MOVED, MOVE_REFUSED, GAME_OVER).
    public typealias Event = FourInARowServerMessage
    /// See ``FourInARowResult``.
    public typealias Result = FourInARowResult

    /// The mode name native clients use to create a game.
    public static let mode = "fourinarow"
    /// A game has exactly this many seats.
    public static let seatCount = 2

    /// A move accepted by the rules and waiting for its journal.
    private struct PendingMove {
        var state: FourInARowState
        var drop: FourInARowDrop
        var seat: Int
        var moveNumber: UInt16
        /// What was left of the mover's turn when it moved, to go on with if the commit fails.
        var timeLeft: TimeAmount
        var commit: Int
    }

    /// The options this match was created with.
    public let options: FourInARowOptions
    /// The game as committed: what players have been told.
    public private(set) var state: FourInARowState
    /// When the current turn runs out; nil when no turn timer runs (not playing, a commit
    /// pending, or the player to move not arrived yet).
    public private(set) var turnDeadline: NIODeadline?
    /// Whether the current turn's timer waits for its player to arrive (its seat reserved).
    public private(set) var turnWaitsForArrival = false
    /// Whether a move is waiting for its journal.
    public var isCommitting: Bool { self.pending != nil }

    private var pending: PendingMove?
    /// Whether the game's end off the board is being committed.
    private var isCommittingEnding = false
    /// An end off the board that came while a move was being saved: it waits for the move's
    /// outcome, so that the stored log and the final state agree (the move's write is queued
    /// ahead of the ending's, so it is stored either way).
    private var endingAfterPending: (winnerSeat: Int, reason: FourInARowEndReason)?
    private var commitCount = 0
    private var turnTimer: MatchTimer?
    /// Bumped whenever the turn timer is started or stopped, so a timer that fires after being
    /// cancelled (already dequeued by its loop) does nothing.
    private var turnGeneration = 0
    private let turnTimeMilliseconds: UInt32

    /// Creates a game, fresh or from ``FourInARowOptions/restoredState``.
    public init(options: FourInARowOptions) {
        self.options = options
        self.state = options.restoredState ?? FourInARowState(firstSeat: options.firstSeat)
        self.turnTimeMilliseconds = UInt32(options.turnTimeLimit.nanoseconds / 1_000_000)
    }

    // MARK: GameHandler

    /// Two players; a restored game takes back only its own players, in seat order.
    public func joinAttempt(_ player: PlayerID, in match: Match<FourInARowGame>) -> JoinDecision {
        let seat = match.seats.count
        guard seat < Self.seatCount else {
            return .refuse(reason: self.state.phase == .waiting ? "the game is full" : "the game has already started")
        }
        if seat < self.state.players.count, self.state.players[seat] != player {
            return .refuse(reason: "this saved game has \(self.state.players[seat]) in seat \(seat)")
        }
        return .accept
    }

    /// Seats the player; with both seats taken, play starts.
    public func playerJoined(_ player: PlayerID, seat: Int, present: Bool, in match: Match<FourInARowGame>) {
        if seat >= self.state.players.count { self.state.addPlayer(player) }
        if match.seats.count == Self.seatCount {
            self.begin(in: match)
        } else {
            self.sendState(toSeat: seat, in: match)
        }
    }

    /// A player arriving or coming back gets the game as it is (its turn timer was never paused).
    /// The player to move arriving for the first time starts its turn's timer, and both
    /// players get STATE with the full turn.
    public func playerRejoined(seat: Int, firstArrival: Bool, in match: Match<FourInARowGame>) {
        guard self.turnWaitsForArrival, seat == self.state.seatToMove else {
            return self.sendState(toSeat: seat, in: match)
        }
        self.startTurnTimer(self.options.turnTimeLimit, in: match)
        match.send(.state(self.snapshot(at: match.clock.now)), to: .all)
    }

    /// In play, the other player wins, unless it is gone too or never arrived (then the match
    /// is given up); before play, the match is given up once nobody is left.
    public func playerLeft(seat: Int, reason: LeaveReason, in match: Match<FourInARowGame>) {
        switch self.state.phase {
        case .waiting:
            if match.activeSeatCount == 0 {
                match.end(.abandoned(reason: "every player left before the game started"))
            }
        case .playing:
            // Ended already, for the rules; its end is being saved.
            guard !self.isCommittingEnding else { return }
            let other = 1 - seat
            switch match.seats[other].presence {
            case .connected, .away:
                self.finish(winnerSeat: other, reason: .opponentLeft, in: match)
            case .reserved, .left:
                // The other left first, while a move was being saved: that ending stands, once
                // the move is decided (as the other's leave would with no move being saved).
                guard self.endingAfterPending == nil else { return }
                // Nobody who played is here to win: a win would go to a player who never showed up.
                self.pending = nil
                self.stopTurnTimer()
                match.end(.abandoned(reason: "both players are gone"))
            }
        case .over:
            break
        }
    }

    /// Plays a MOVE, or refuses it to the mover with the reason.
    public func receive(_ input: FourInARowClientMessage, fromSeat seat: Int, in match: Match<FourInARowGame>) {
        switch input {
        case .move(let move): self.play(move, fromSeat: seat, in: match)
        }
    }

    // MARK: Play

    private func play(_ move: FourInARowMove, fromSeat seat: Int, in match: Match<FourInARowGame>) {
        guard self.state.phase == .playing, !self.isCommittingEnding else {
            let text = self.state.phase == .waiting ? "the game has not started" : "the game is over"
            return self.refuse(move.moveNumber, .gameNotRunning, text, toSeat: seat, in: match)
        }
        if let pending = self.pending {
            let text = "move \(pending.moveNumber) is being saved"
            return self.refuse(move.moveNumber, .moveBeingCommitted, text, toSeat: seat, in: match)
        }
        guard Int(move.moveNumber) == self.state.moveNumber else {
            let text = "the next move is number \(self.state.moveNumber)"
            return self.refuse(move.moveNumber, .staleMoveNumber, text, toSeat: seat, in: match)
        }
        guard seat == self.state.seatToMove else {
            let text = "it is seat \(self.state.seatToMove)'s turn"
            return self.refuse(move.moveNumber, .notYourTurn, text, toSeat: seat, in: match)
        }
        var next = self.state
        switch next.play(column: Int(move.column)) {
        case .failure(let refusal):
            let text = refusal == .columnFull ? "column \(move.column) is full" : "column \(move.column) is not 0 to 6"
            self.refuse(move.moveNumber, refusal.wireReason, text, toSeat: seat, in: match)
        case .success(let drop):
            guard let journal = self.options.journal else {
                return self.apply(next, drop: drop, seat: seat, in: match)
            }
            self.commit(next, drop: drop, move: move, seat: seat, journal: journal, in: match)
        }
    }

    // MARK: Snapshots

    /// The STATE message for the game as committed, with the turn time left at `now`.
    public func snapshot(at now: NIODeadline) -> FourInARowSnapshot {
        let playing = self.state.phase == .playing
        var timeLeft = TimeAmount.zero
        if let pending = self.pending {
            timeLeft = pending.timeLeft
        } else if playing, let deadline = self.turnDeadline {
            timeLeft = max(.zero, deadline - now)
        }
        let turnTime =
            playing && self.turnWaitsForArrival
            ? FourInARowSnapshot.turnWaitsForArrival : UInt32(clamping: timeLeft.nanoseconds / 1_000_000)
        return FourInARowSnapshot(
            phase: self.state.phase,
            players: self.state.players.enumerated().map { .init(seat: UInt8($0.offset), playerID: $0.element) },
            board: self.state.board.cells,
            moveNumber: UInt16(self.state.moveNumber),
            seatToMove: playing ? UInt8(self.state.seatToMove) : nil,
            turnTimeLeftMilliseconds: turnTime,
            result: self.state.ending.map(Self.gameOver))
    }

    /// Sends STATE to the player at `seat`, if connected.
    public func sendState(toSeat seat: Int, in match: Match<FourInARowGame>) {
        match.send(.state(self.snapshot(at: match.clock.now)), to: .only(seat: seat))
    }

    private static func gameOver(_ ending: FourInARowEnding) -> FourInARowGameOver {
        FourInARowGameOver(
            winnerSeat: ending.winnerSeat.map(UInt8.init), reason: ending.reason,
            winningCells: ending.winningCells.map(UInt8.init))
    }

    /// Both seats exist: play starts (or resumes, for a restored game, with a full turn once
    /// the player to move is back).
    private func begin(in match: Match<FourInARowGame>) {
        let isNew = self.state.phase == .waiting
        if isNew { self.state.start() }
        if self.state.phase == .playing { self.startTurn(in: match) }
        match.send(.state(self.snapshot(at: match.clock.now)), to: .all)
        if let result = FourInARowResult(self.state) {
            // A game restored after it ended has nothing left to play.
            match.end(.finished(result))
            return
        }
        // A restored game's owner says so in its own line.
        match.logger.log(
            level: isNew ? .info : .debug, isNew ? "four in a row started" : "four in a row resumed",
            metadata: ["players": "\(self.state.players)", "move": "\(self.state.moveNumber)"])
    }

    private func commit(
        _ next: FourInARowState, drop: FourInARowDrop, move: FourInARowMove, seat: Int, journal: any TurnJournal,
        in match: Match<FourInARowGame>
    ) {
        let timeLeft = self.turnDeadline.map { max(.zero, $0 - match.clock.now) } ?? self.options.turnTimeLimit
        // The turn is decided for now: a slow store must not run the mover out of time.
        self.stopTurnTimer()
        self.commitCount += 1
        let commit = self.commitCount
        self.pending = PendingMove(
            state: next, drop: drop, seat: seat, moveNumber: move.moveNumber, timeLeft: timeLeft, commit: commit)
        journal.commit(
            matchID: match.id, moveNumber: Int(move.moveNumber),
            move: FourInARowClientMessage.move(move).encoded(), state: next.encoded()
        ) { [weak self, weak match] error in
            guard let self, let match else { return }
            self.committed(commit, error: error, in: match)
        }
    }

    private func committed(_ commit: Int, error: (any Error)?, in match: Match<FourInARowGame>) {
        // A completion for a move given up (the game ended meanwhile) or reported twice changes nothing.
        guard !match.isEnded, let pending = self.pending, pending.commit == commit else { return }
        self.pending = nil
        let ending = self.endingAfterPending
        self.endingAfterPending = nil
        defer {
            // The move decided first (it may have ended the game on the board), then this.
            if let ending, !match.isEnded, self.state.phase == .playing {
                self.finish(winnerSeat: ending.winnerSeat, reason: ending.reason, in: match)
            }
        }
        if let error {
            // A failing database fails every game's moves at once, and the journal's owner
            // reports that once (the server: "storage failing"); anything else is a bug to see.
            match.logger.log(
                level: GameStoreError.logLevel(for: error), "move could not be saved", metadata: ["move": "\(pending.moveNumber)", "error": "\(error)"])
            self.startTurnTimer(pending.timeLeft, in: match)
            let text = "the move could not be saved; play it again"
            self.refuse(pending.moveNumber, .couldNotBeSaved, text, toSeat: pending.seat, in: match)
            return
        }
        self.apply(pending.state, drop: pending.drop, seat: pending.seat, in: match)
    }

    /// Makes a (committed) move the game's state and tells everyone.
    private func apply(_ next: FourInARowState, drop: FourInARowDrop, seat: Int, in match: Match<FourInARowGame>) {
        self.state = next
        let playing = next.phase == .playing
        if playing { self.startTurn(in: match) }
        let turnTime = self.turnWaitsForArrival ? FourInARowSnapshot.turnWaitsForArrival : self.turnTimeMilliseconds
        let moved = FourInARowMoved(
            seat: UInt8(seat), column: UInt8(drop.column), row: UInt8(drop.row), moveNumber: UInt16(next.moves.count),
            nextSeat: playing ? UInt8(next.seatToMove) : nil, turnTimeMilliseconds: playing ? turnTime : 0)
        match.send(.moved(moved), to: .all)
        if !playing { self.announceEnd(in: match) }
    }

    private func refuse(
        _ moveNumber: UInt16, _ reason: FourInARowRefusalReason, _ text: String, toSeat seat: Int, in match: Match<FourInARowGame>
    ) {
        match.logger.debug("move refused", metadata: ["seat": "\(seat)", "move": "\(moveNumber)", "reason": "\(text)"])
        match.send(.moveRefused(FourInARowMoveRefused(moveNumber: moveNumber, reason: reason, text: text)), to: .only(seat: seat))
    }

    /// Ends a game in play for a reason off the board: committed before it is told. With a move
    /// being saved, once that move is played or refused (``committed(_:error:in:)``).
    private func finish(winnerSeat: Int, reason: FourInARowEndReason, in match: Match<FourInARowGame>) {
        guard self.pending == nil else {
            if self.endingAfterPending == nil { self.endingAfterPending = (winnerSeat, reason) }
            return
        }
        self.stopTurnTimer()
        var ended = self.state
        ended.finish(winnerSeat: winnerSeat, reason: reason)
        guard let journal = self.options.journal else {
            self.state = ended
            return self.announceEnd(in: match)
        }
        self.isCommittingEnding = true
        journal.commitEnding(matchID: match.id, state: ended.encoded()) { [weak self, weak match] error in
            guard let self, let match, !match.isEnded else { return }
            self.isCommittingEnding = false
            if let error {
                // Told anyway: the players cannot be kept in a game one of them lost.
                match.logger.log(level: GameStoreError.logLevel(for: error), "end of the game could not be saved", metadata: ["error": "\(error)"])
            }
            self.state = ended
            self.announceEnd(in: match)
        }
    }

    /// GAME_OVER to everyone, then the match ends with the result.
    private func announceEnd(in match: Match<FourInARowGame>) {
        self.stopTurnTimer()
        guard let ending = self.state.ending, let result = FourInARowResult(self.state) else { return }
        match.send(.gameOver(Self.gameOver(ending)), to: .all)
        match.end(.finished(result))
    }

    // MARK: Turn timer

    /// A new turn: a full turn's timer, or none yet if its player has not arrived.
    private func startTurn(in match: Match<FourInARowGame>) {
        guard match.seats[self.state.seatToMove].presence != .reserved else {
            self.stopTurnTimer()
            self.turnWaitsForArrival = true
            return
        }
        self.startTurnTimer(self.options.turnTimeLimit, in: match)
    }

    private func startTurnTimer(_ duration: TimeAmount, in match: Match<FourInARowGame>) {
        self.stopTurnTimer()
        let generation = self.turnGeneration
        let deadline = match.clock.now + duration
        self.turnDeadline = deadline
        self.turnTimer = match.clock.schedule(at: deadline) { [weak self, weak match] in
            guard let self, let match, !match.isEnded, self.turnGeneration == generation else { return }
            self.turnTimer = nil
            match.logger.info("turn timed out", metadata: ["seat": "\(self.state.seatToMove)"])
            self.finish(winnerSeat: 1 - self.state.seatToMove, reason: .turnTimeout, in: match)
        }
    }

    private func stopTurnTimer() {
        self.turnWaitsForArrival = false
        self.turnGeneration += 1
        self.turnTimer?.cancel()
        self.turnTimer = nil
        self.turnDeadline = nil
    }
}
