import Logging
import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore
import Testing

/// A player's link that decodes and keeps every Four in a Row message the match sends it.
final class FourInARowLink: PlayerLink {
    let encoding = WireEncoding.native
    let keepsDeliveringWhileAway: Bool
    private(set) var received: [FourInARowServerMessage] = []

    init(keepsDeliveringWhileAway: Bool = false) {
        self.keepsDeliveringWhileAway = keepsDeliveringWhileAway
    }

    func deliver(_ frame: ByteBuffer) {
        do {
            self.received.append(try FourInARowServerMessage(body: frame))
        } catch {
            Issue.record("the match sent bytes that do not decode: \(error)")
        }
    }

    /// Returns and forgets what arrived so far.
    func take() -> [FourInARowServerMessage] {
        defer { self.received.removeAll() }
        return self.received
    }
}

/// A journal whose commits complete only when a test says so (or at once, if asked).
final class RecordingJournal: TurnJournal {
    struct Commit {
        var matchID: MatchID
        var moveNumber: Int
        var move: ByteBuffer
        var state: ByteBuffer
        var completion: ((any Error)?) -> Void
    }

    struct StoreFailed: Error {}

    /// Complete each commit inside `commit`, successfully.
    var completesAtOnce = false
    private(set) var commits: [Commit] = []
    private var completed = 0
    /// The endings committed so far (their final states), each completing at once unless
    /// ``endingsWait``.
    private(set) var endings: [(state: ByteBuffer, completion: ((any Error)?) -> Void)] = []
    /// Hold each ending's completion until ``completeEnding(_:)``.
    var endingsWait = false

    func commit(
        matchID: MatchID, moveNumber: Int, move: ByteBuffer, state: ByteBuffer, completion: @escaping ((any Error)?) -> Void
    ) {
        self.commits.append(Commit(matchID: matchID, moveNumber: moveNumber, move: move, state: state, completion: completion))
        if self.completesAtOnce { self.completeNext() }
    }

    func commitEnding(matchID: MatchID, state: ByteBuffer, completion: @escaping ((any Error)?) -> Void) {
        self.endings.append((state, completion))
        if !self.endingsWait { completion(nil) }
    }

    /// Completes the latest ending, with `error` (nil: stored).
    func completeEnding(_ error: (any Error)? = nil) {
        self.endings.last?.completion(error)
    }

    /// Completes the oldest commit not completed yet, with `error` (nil: stored).
    func completeNext(_ error: (any Error)? = nil) {
        let commit = self.commits[self.completed]
        self.completed += 1
        commit.completion(error)
    }

    /// The saved state of the latest commit.
    func latestState() throws -> FourInARowState {
        try FourInARowState(bytes: self.commits[self.commits.count - 1].state)
    }
}

/// A Four in a Row match on a manual clock, with links for seats 0 (alice) and 1 (bob).
final class FourInARowFixture {
    static let players = ["alice", "bob"]
    let clock = ManualClock()
    let match: Match<FourInARowGame>
    let links: [FourInARowLink]
    private(set) var outcome: MatchOutcome<FourInARowResult>?

    init(options: FourInARowOptions = FourInARowOptions(), grace: TimeAmount = .seconds(120), links: [FourInARowLink]? = nil) {
        self.links = links ?? [FourInARowLink(), FourInARowLink()]
        self.match = Match(
            id: 77, handler: FourInARowGame(options: options),
            encoders: [EventEncoder(encoding: .native) { event, buffer in event.encode(into: &buffer) }],
            clock: self.clock, gracePeriod: grace, capacity: 4,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        self.match.onEnd = { [weak self] _, outcome in self?.outcome = outcome }
        self.match.start()
    }

    var game: FourInARowGame { self.match.handler }

    /// Seats both players, connected, and forgets the STATEs they got.
    func seatBoth() {
        for (seat, player) in Self.players.enumerated() {
            _ = self.match.join(player, link: self.links[seat])
        }
        self.takeAll()
    }

    /// The seat to move plays `column` with the right move number (or `number`).
    func move(_ column: Int, seat: Int? = nil, number: Int? = nil) {
        let move = FourInARowMove(
            moveNumber: UInt16(number ?? self.game.state.moveNumber), column: UInt8(truncatingIfNeeded: column))
        self.match.receive(.move(move), fromSeat: seat ?? self.game.state.seatToMove)
    }

    /// Plays `columns` in turn, each by the seat to move.
    func play(_ columns: [Int]) {
        for column in columns { self.move(column) }
    }

    func takeAll() {
        for link in self.links { _ = link.take() }
    }

    var result: FourInARowResult? {
        if case .finished(let result) = self.outcome { return result }
        return nil
    }

    var abandonedReason: String? {
        if case .abandoned(let reason) = self.outcome { return reason }
        return nil
    }
}

extension FourInARowServerMessage {
    var state: FourInARowSnapshot? {
        if case .state(let message) = self { return message }
        return nil
    }

    var moved: FourInARowMoved? {
        if case .moved(let message) = self { return message }
        return nil
    }

    var refused: FourInARowMoveRefused? {
        if case .moveRefused(let message) = self { return message }
        return nil
    }

    var gameOver: FourInARowGameOver? {
        if case .gameOver(let message) = self { return message }
        return nil
    }
}
