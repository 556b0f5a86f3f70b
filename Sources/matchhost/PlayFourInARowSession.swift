import MatchHostClient
import MatchHostWire

/// The terminal Four in a Row player's state: the game view, notices, presence and
/// connection, what a key sends, and what to draw. No I/O.
struct FourInARowPlaySession {
    let playerID: String
    let server: String
    let matchID: MatchIdentifier
    /// The private match's invite code, shown while waiting for an opponent.
    let inviteCode: String?
    /// Commands others can run to join, shown while waiting for an opponent.
    let joinCommands: [String]
    private(set) var view: FourInARowView
    private var notice: String?
    /// The column of the last MOVE sent, until the server answers it.
    private var sentColumn: Int?
    private var opponentAway = false
    /// The local client's connection trouble ("reconnecting ..."); nil while connected.
    private var connectionTrouble: String?
    /// Why the client closed for good.
    private var closedReason: String?
    /// MATCH_ENDED's reason.
    private var matchEndedReason: String?
    /// The players' aliases, as the server told them (GET_PROFILE).
    private var aliases: [String: String] = [:]
    /// The players whose aliases were asked for.
    private var aliasesAsked: Set<String> = []

    init(playerID: String, server: String, matchID: MatchIdentifier, inviteCode: String?, joinCommands: [String]) {
        self.playerID = playerID
        self.server = server
        self.matchID = matchID
        self.inviteCode = inviteCode
        self.joinCommands = joinCommands
        self.view = FourInARowView(myPlayerID: playerID)
    }

    /// The column (0-6) to send a MOVE for when `key` is pressed, or nil. Digits 1-7 pick a
    /// column; the server judges the move (a move out of turn or into a full column comes
    /// back refused, with the reason shown).
    mutating func pressed(_ key: UInt8) -> Int? {
        guard (UInt8(ascii: "1")...UInt8(ascii: "7")).contains(key) else { return nil }
        let column = Int(key - UInt8(ascii: "1"))
        if self.closedReason != nil { return nil }
        guard self.view.hasState, self.view.phase != .waiting else {
            self.notice = "The game starts when your opponent joins."
            return nil
        }
        guard !self.view.isOver else {
            self.notice = "The game is over. Press Q to quit."
            return nil
        }
        self.sentColumn = column
        self.notice = nil
        return column
    }

    /// The players whose aliases to ask the server for now: those seated, each once.
    mutating func aliasesToAsk() -> [String] {
        let wanted = self.view.players.map(\.playerID).filter { !self.aliasesAsked.contains($0) }
        self.aliasesAsked.formUnion(wanted)
        return wanted
    }

    /// The server told `playerID`'s alias.
    mutating func aliasKnown(_ alias: String, of playerID: String) {
        self.aliases[playerID] = alias
    }

    /// A player as shown: its alias once known, the start of its id until then.
    private func name(of playerID: String) -> String {
        self.aliases[playerID] ?? String(playerID.prefix(8))
    }

    /// A MOVE could not be sent.
    mutating func sendFailed(_ reason: String) {
        self.sentColumn = nil
        self.notice = "Could not send the move: \(reason)"
    }

    /// Folds in an event of the match received at `now`.
    mutating func received(_ event: FourInARowEvent, at now: ContinuousClock.Instant) {
        switch event {
        case .message(let message):
            self.view.apply(message, at: now)
            switch message {
            case .moveRefused:
                self.sentColumn = nil
                self.notice = "Refused: " + (self.view.lastRefusalText ?? "")
            case .moved(let moved):
                self.sentColumn = nil
                if moved.seat != self.view.mySeat {
                    self.notice = "Your opponent dropped into column \(Int(moved.column) + 1)."
                } else {
                    self.notice = nil
                }
            case .gameOver:
                self.sentColumn = nil
                self.notice = nil
            case .state:
                break
            }
        case .presence(let playerID, let change, let reason):
            guard playerID != self.playerID else { return }
            let name = self.name(of: playerID)
            switch change {
            case .joined:
                self.notice = "\(name) joined."
            case .disconnected:
                self.opponentAway = true
                self.notice = "Your opponent lost its connection; its seat and turn timer wait for it."
            case .reconnected:
                self.opponentAway = false
                self.notice = "Your opponent is back."
            case .left:
                self.opponentAway = false
                switch reason {
                case .asked: self.notice = "Your opponent left the match."
                case .graceExpired: self.notice = "Your opponent stayed away too long."
                case .sessionEnded, .none: self.notice = "Your opponent quit."
                }
            }
        case .matchEnded(let reason):
            self.matchEndedReason = reason
        }
    }

    /// The local client's connection changed.
    mutating func connectionChanged(_ state: MatchHostClient.ConnectionState) {
        switch state {
        case .connected:
            if self.connectionTrouble != nil {
                self.notice = "Reconnected; the board is as the server has it."
            }
            self.connectionTrouble = nil
        case .reconnecting(let attempt):
            self.connectionTrouble = "Connection lost; reconnecting (attempt \(attempt))..."
        case .resuming:
            self.connectionTrouble = "Reconnected; resuming the session..."
        case .closed(let reason):
            self.closed("\(reason)")
        case .disconnected, .connecting, .handshaking, .authenticating:
            break
        }
    }

    /// The client is gone for good.
    mutating func closed(_ reason: String) {
        if self.closedReason == nil {
            self.closedReason = reason
        }
    }

    private func name(ofSeat seat: UInt8) -> String {
        let symbol = FourInARowView.symbol(ofSeat: seat)
        guard let id = self.view.playerID(seat: seat) else { return "\(symbol) (nobody yet)" }
        return "\(symbol) \(self.name(of: id))"
    }

    /// The status line at `now`.
    func status(at now: ContinuousClock.Instant) -> String {
        if let reason = self.closedReason {
            return "Disconnected: \(reason). Press Q to quit."
        }
        if let trouble = self.connectionTrouble {
            return trouble
        }
        guard self.view.hasState else { return "Joining match \(self.matchID)..." }
        if let result = self.view.result {
            let tail = self.matchEndedReason == nil ? " Press Q to quit." : " The match is over. Press Q to quit."
            guard let winner = result.winnerSeat else { return "Draw: the board is full." + tail }
            let how = result.reason == .fourInARow ? "four in a row" : "\(result.reason)"
            if winner == self.view.mySeat { return "You WIN (\(how))!" + tail }
            return "You lose (\(how)): \(self.name(ofSeat: winner)) wins." + tail
        }
        // Before the waiting line: a match still waiting for an opponent when the server
        // stopped is over, and nobody will join it.
        if let reason = self.matchEndedReason {
            return "The match has ended (\(reason)). Press Q to quit."
        }
        if self.view.phase == .waiting {
            return "Waiting for an opponent."
        }
        let left = self.view.turnTimeLeft(at: now).map { " \(Self.seconds($0)) s left." } ?? ""
        if self.view.isMyTurn {
            let mine = self.view.mySeat.map { FourInARowView.symbol(ofSeat: $0) } ?? "?"
            if let column = self.sentColumn { return "Your turn (\(mine)): dropping into column \(column + 1)...\(left)" }
            return "Your turn (\(mine)): press 1-7 to drop a disc.\(left)"
        }
        if let seat = self.view.seatToMove {
            if self.view.turnWaitsForArrival {
                return "\(self.name(ofSeat: seat)) to move, once back: its turn timer starts when it reconnects."
            }
            let away = self.opponentAway ? " (away)" : ""
            return "\(self.name(ofSeat: seat))\(away) to move.\(left)"
        }
        return "Waiting for the server..."
    }

    /// Whole seconds, rounded up: a turn with 0.2 s left still shows 1 s.
    static func seconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds + (attoseconds > 0 ? 1 : 0)
    }

    /// The whole screen at `now`.
    func screen(at now: ContinuousClock.Instant) -> [String] {
        var lines = [
            "MatchHost Four in a Row - match \(self.matchID) on \(self.server)",
            self.playersLine,
            "",
            self.status(at: now),
            self.notice ?? "",
            "",
        ]
        lines += self.view.boardLines().map { "  " + $0 }
        lines.append("")
        if self.view.phase == .waiting, !self.view.isOver, self.matchEndedReason == nil {
            if let code = self.inviteCode { lines.append("Invite code: \(code)") }
            if !self.joinCommands.isEmpty {
                lines.append("Others join with:")
                lines += self.joinCommands.map { "  " + $0 }
            }
            lines.append("")
        }
        lines.append("1-7 drop a disc   Q quit" + (self.view.isOver ? "" : " (quitting a game in play loses it)"))
        return lines
    }

    private var playersLine: String {
        guard let mine = self.view.mySeat else { return "Players: " + self.view.players.map { self.name(ofSeat: $0.seat) }.joined(separator: " vs ") }
        let other = 1 - mine
        let away = self.opponentAway ? " [away]" : ""
        return "You: \(self.name(ofSeat: mine))   Opponent: \(self.name(ofSeat: other))\(away)"
    }

    /// A line for the normal screen after quitting.
    var summary: String? {
        guard let result = self.view.result else {
            return self.view.phase == .playing ? "You left the game in play." : nil
        }
        guard let winner = result.winnerSeat else { return "The game was a draw after \(self.view.moveCount) moves." }
        let outcome = winner == self.view.mySeat ? "You won" : "You lost"
        return "\(outcome) (\(result.reason)) after \(self.view.moveCount) moves."
    }
}
