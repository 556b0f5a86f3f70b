import MatchHostWire

/// What one Cat Race player knows about its race, built by folding the server's messages.
///
/// Pure state, no I/O: feed it every ``CatRaceServerMessage`` with ``apply(_:)`` and ask
/// ``tap()`` for the MOVED_SELF to send when the player taps. The server is the authority on
/// positions but does not echo a racer's own moves back to it, so this racer's position is
/// the one it claimed (as in the tutorial's client): a tap the server refused is caught up by
/// the next one, which claims two steps.
///
/// ```swift
/// var view = CatRaceRaceView(myPlayerID: client.playerID)
/// for try await message in client.messages {
///     view.apply(message)
///     if view.canTap, let move = view.tap() { try await client.send(.movedSelf(move)) }
/// }
/// ```
public struct CatRaceRaceView: Sendable, Hashable {
    /// Where the player stands.
    public enum Phase: Sendable, Hashable {
        /// Connected; the server has not answered PLAYER_CONNECTED yet.
        case connecting
        /// In no race (NOT_IN_MATCH). ``racers`` still shows the last race, if there was one.
        case notInMatch
        /// A race is running: taps move this racer.
        case racing
        /// The race has been won (GAME_OVER, or MATCH_STARTED in the game-over state); a
        /// RESTART_MATCH from any racer starts it again.
        case finished
    }

    /// One racer's lane.
    public struct Racer: Sendable, Hashable {
        /// The racer's player id.
        public var playerID: String
        /// The racer's display name (empty for a reserved seat whose player has not connected).
        public var alias: String
        /// The racer's x: for other racers the last position the server reported, for this
        /// racer the last position it claimed.
        public var posX: UInt32
        /// Whether this lane is the local player's.
        public var isMe: Bool

        /// The alias, or the player id when the alias is empty.
        public var displayName: String {
            self.alias.isEmpty ? self.playerID : self.alias
        }

        /// Creates a lane.
        public init(playerID: String, alias: String, posX: UInt32, isMe: Bool) {
            self.playerID = playerID
            self.alias = alias
            self.posX = posX
            self.isMe = isMe
        }
    }

    /// The local player's id, used to find its seat in MATCH_STARTED.
    public let myPlayerID: String
    /// Where the player stands.
    public private(set) var phase: Phase = .connecting
    /// The racers of the current race in seat order, or of the last race after NOT_IN_MATCH.
    public private(set) var racers: [Racer] = []
    /// The local player's seat in ``racers``, if it is listed.
    public private(set) var myIndex: Int?
    /// The winner's seat once the race is won; `nil` while racing or when unknown.
    public private(set) var winnerIndex: Int?
    /// Players that announced with NOTIFY_READY that they accepted this player's invite, oldest first.
    public private(set) var readyPlayerIDs: [String] = []
    /// True once a race this player was in has been ended by the server (NOT_IN_MATCH after
    /// MATCH_STARTED: a racer quit or stayed away too long). Cleared by the next MATCH_STARTED.
    public private(set) var raceEnded = false

    /// An empty view for player `myPlayerID`.
    public init(myPlayerID: String) {
        self.myPlayerID = myPlayerID
    }

    /// Whether a tap would move this racer: a race is running and it has a seat.
    public var canTap: Bool {
        self.phase == .racing && self.myIndex != nil
    }

    /// The local player's lane, if it has a seat.
    public var me: Racer? {
        self.myIndex.map { self.racers[$0] }
    }

    /// The winner's lane, once known.
    public var winner: Racer? {
        self.winnerIndex.map { self.racers[$0] }
    }

    /// Whether the local player won the race.
    public var iWon: Bool {
        self.winnerIndex != nil && self.winnerIndex == self.myIndex
    }

    /// Folds one server message into the view.
    public mutating func apply(_ message: CatRaceServerMessage) {
        switch message {
        case .notInMatch:
            if self.phase == .racing || self.phase == .finished {
                self.raceEnded = true
            }
            self.phase = .notInMatch

        case .matchStarted(let started):
            self.racers = started.racers.map {
                Racer(playerID: $0.playerID, alias: $0.alias, posX: $0.posX, isMe: $0.playerID == self.myPlayerID)
            }
            self.myIndex = self.racers.firstIndex(where: \.isMe)
            self.raceEnded = false
            switch started.state {
            case .active:
                self.phase = .racing
                self.winnerIndex = nil
            case .gameOver:
                // A snapshot of a finished race (after a reconnect): the leader past the line won.
                self.phase = .finished
                self.winnerIndex = self.racers.indices.max { self.racers[$0].posX < self.racers[$1].posX }
                    .flatMap { self.racers[$0].posX >= CatRaceTrack.finishX ? $0 : nil }
            }

        case .playerMoved(let moved):
            guard var index = self.seat(Int(moved.playerIndex)) else { return }
            if index == self.myIndex {
                // MatchHost names the mover, never the receiver. The tutorial's server named the
                // receiver instead; with two racers the mover is then the other one.
                guard self.racers.count == 2 else { return }
                index = 1 - index
            }
            self.racers[index].posX = moved.posX

        case .gameOver(let over):
            guard !self.racers.isEmpty else { return }
            self.phase = .finished
            self.winnerIndex = self.seat(Int(over.winnerIndex))

        case .notifyReady(let ready):
            self.readyPlayerIDs.append(ready.playerID)
        }
    }

    /// One tap: moves this racer one step (``CatRaceTrack/stepX``) and returns the MOVED_SELF
    /// to send, or `nil` when taps do nothing (see ``canTap``).
    public mutating func tap() -> MovedSelf? {
        guard self.canTap, let index = self.myIndex else { return nil }
        let (posX, overflow) = self.racers[index].posX.addingReportingOverflow(CatRaceTrack.stepX)
        guard !overflow else { return nil }
        self.racers[index].posX = posX
        return MovedSelf(posX: posX)
    }

    private func seat(_ index: Int) -> Int? {
        self.racers.indices.contains(index) ? index : nil
    }

    // MARK: Drawing

    /// How far along the track `posX` is: 0 at the start line, 1 at (or past) the finish.
    public static func progress(of posX: UInt32) -> Double {
        let start = Double(CatRaceTrack.startX)
        let finish = Double(CatRaceTrack.finishX)
        return min(1, max(0, (Double(posX) - start) / (finish - start)))
    }

    /// The cat drawn in each lane.
    public static let catGlyph = "=^.^="

    /// The race as text, one line per racer, each at most `width` characters when `width`
    /// is at least 30 (all ASCII apart from the racers' names; long names are cut with `~`):
    ///
    /// ```
    /// > Ann (you) |.........=^.^=             | 125
    ///   Bo        |....=^.^=                  |  75 WINNER
    /// ```
    ///
    /// The cat's column is its position scaled to the track's width; the right bar is the
    /// finish line. Empty when there are no racers.
    public func lanes(width: Int) -> [String] {
        guard !self.racers.isEmpty else { return [] }
        let labels = self.racers.map { $0.displayName + ($0.isMe ? " (you)" : "") }
        let labelWidth = min(max(labels.map(\.count).max() ?? 0, 4), max(4, width / 4))
        let winnerSuffix = " WINNER"
        // "> " + label + " |" + track + "| " + 3-digit x + suffix
        let fixed = 2 + labelWidth + 2 + 2 + 3 + winnerSuffix.count
        let trackWidth = max(Self.catGlyph.count + 1, width - fixed)
        return self.racers.indices.map { index in
            let racer = self.racers[index]
            let marker = racer.isMe ? "> " : "  "
            let label = Self.pad(labels[index], to: labelWidth)
            let room = trackWidth - Self.catGlyph.count
            let column = Int((Self.progress(of: racer.posX) * Double(room)).rounded())
            let track =
                String(repeating: ".", count: column) + Self.catGlyph
                + String(repeating: " ", count: room - column)
            let position = String(racer.posX)
            let paddedPosition = String(repeating: " ", count: max(0, 3 - position.count)) + position
            let suffix = index == self.winnerIndex ? winnerSuffix : ""
            return marker + label + " |" + track + "| " + paddedPosition + suffix
        }
    }

    private static func pad(_ text: String, to width: Int) -> String {
        if text.count > width {
            return String(text.prefix(max(0, width - 1))) + "~"
        }
        return text + String(repeating: " ", count: width - text.count)
    }
}
