import MatchHostClient
import MatchHostWire

/// The Disks terminal client's state: the match view, what to tap for a key, and what to draw.
/// No I/O.
struct PlayDisksSession {
    let playerID: String
    let server: String
    let matchID: MatchIdentifier
    let capacity: Int
    /// The `--port` flag to repeat in the join commands shown ("" for the default port).
    let portFlag: String
    private(set) var view: DisksView
    private var disconnectReason: String?
    /// MATCH_ENDED's reason, for a match that ended without GAME_OVER.
    private var matchEndedReason: String?
    private var notice: String?
    /// The latest hits, newest last, as "who hit which disk".
    private var recentHits: [String] = []
    /// The players whose aliases were asked for.
    private var aliasesAsked: Set<String> = []

    init(playerID: String, server: String, matchID: MatchIdentifier, capacity: Int, portFlag: String) {
        self.playerID = playerID
        self.server = server
        self.matchID = matchID
        self.capacity = capacity
        self.portFlag = portFlag
        self.view = DisksView(myPlayerID: playerID)
    }

    /// The tap to send for a key press, if the key names a live disk (either case).
    mutating func pressed(_ key: UInt8) -> DisksTap? {
        guard self.disconnectReason == nil, key < 0x80 else { return nil }
        // Caps Lock should not stop play: A taps the disk marked a.
        let lower = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(key) ? key + 32 : key
        let character = Character(Unicode.Scalar(lower))
        guard self.view.keys.contains(character) else { return nil }
        guard self.view.phase == .playing else {
            self.notice = "The game is not on."
            return nil
        }
        guard let live = self.view.liveDisk(forKey: character), let point = self.view.aimPoint(forDisk: live.disk.id) else {
            self.notice = "No disk \(character) on the board."
            return nil
        }
        self.notice = "Tapped \(character)."
        return DisksTap(x: point.x, y: point.y)
    }

    /// The players whose aliases to ask the server for now: those seated, each once.
    mutating func aliasesToAsk() -> [String] {
        let wanted = self.view.players.map(\.playerID).filter { !$0.isEmpty && !self.aliasesAsked.contains($0) }
        self.aliasesAsked.formUnion(wanted)
        return wanted
    }

    /// The server told `playerID`'s alias: the screen shows it from now on.
    mutating func aliasKnown(_ alias: String, of playerID: String) {
        self.view.setAlias(alias, of: playerID)
    }

    /// Folds a server event in.
    mutating func received(_ event: DisksEvent) {
        self.view.apply(event)
        switch event {
        case .message(.tick(let tick)):
            for hit in tick.hits {
                self.noteHit(hit)
            }
        case .message(.tapMissed(let missed)):
            switch missed.reason {
            case .noDisk: self.notice = "Missed: no disk there any more."
            case .alreadyHit: self.notice = "Too late: someone hit it first."
            case .notPlaying: self.notice = "The game is not on."
            }
        case .message(.state(let state)) where state.phase == .playing:
            self.notice = nil
        case .message(.gameOver):
            self.notice = nil
        case .message:
            break
        case .presence(let playerID, let change, let reason):
            let name =
                playerID == self.playerID
                ? "You" : self.view.players.first { $0.playerID == playerID }?.displayName ?? String(playerID.prefix(8))
            switch change {
            case .joined: self.notice = "\(name) joined."
            case .disconnected: self.notice = "\(name) lost its connection; its seat waits for it."
            case .reconnected: self.notice = "\(name) is back."
            case .left:
                switch reason {
                case .asked: self.notice = "\(name) left the match."
                case .graceExpired: self.notice = "\(name) stayed away too long."
                case .sessionEnded, .none: self.notice = "\(name) quit."
                }
            }
        case .matchEnded(let reason):
            if self.view.gameOverReason == nil { self.matchEndedReason = reason }
        }
    }

    private mutating func noteHit(_ hit: DisksHit) {
        let seat = Int(hit.seat)
        let who = self.view.players.indices.contains(seat) ? self.view.players[seat] : nil
        let name = who?.isMe == true ? "you" : (who?.displayName ?? "seat \(seat + 1)")
        let key = self.view.hitDisks.last { $0.disk.id == hit.diskID }?.key.map { String($0) } ?? "a disk"
        self.recentHits.append("\(name) hit \(key) (\(hit.score))")
        if self.recentHits.count > 4 { self.recentHits.removeFirst() }
    }

    mutating func disconnected(_ reason: String) {
        if self.disconnectReason == nil {
            self.disconnectReason = reason
        }
    }

    /// Players seated and not gone.
    private var playersHere: Int {
        self.view.players.filter { !$0.hasLeft && !$0.playerID.isEmpty }.count
    }

    /// The status line.
    var status: String {
        if let reason = self.disconnectReason {
            return "Disconnected: \(reason). Press Q to quit."
        }
        // Ended without GAME_OVER (everyone else left, or the server stopped while it waited).
        if let reason = self.matchEndedReason {
            return "The match has ended (\(reason)). Press Q to quit."
        }
        switch self.view.phase {
        case .joining:
            return "Joining match \(self.matchID)..."
        case .waiting:
            return "Waiting for players: \(self.playersHere) of \(self.capacity) here."
        case .playing:
            return "GO! Type a disk's letter to hit it."
        case .over:
            let outcome: String
            let winners = self.view.winnerPlayers
            if self.view.iWon {
                outcome = winners.count > 1 ? "You tie for the win!" : "You WIN!"
            } else if winners.isEmpty {
                outcome = "Nobody scored."
            } else {
                outcome = winners.map(\.displayName).joined(separator: " and ") + (winners.count > 1 ? " win." : " wins.")
            }
            let why: String
            switch self.view.gameOverReason {
            case .scoreLimit: why = " (first to \(self.view.scoreLimit))"
            case .timeLimit: why = " (time is up)"
            case .opponentsLeft: why = " (the others left)"
            case nil: why = ""
            }
            return "Game over: " + outcome + why + " Press Q to quit."
        }
    }

    /// The line under the title: time left and the target score.
    private var clockLine: String {
        let seconds = (Int(self.view.timeLeftMilliseconds) + 999) / 1000
        let time = "\(seconds / 60):" + (seconds % 60 < 10 ? "0" : "") + "\(seconds % 60)"
        let target = self.view.scoreLimit > 0 ? "   first to \(self.view.scoreLimit) wins" : ""
        return "Time left \(time)\(target)"
    }

    /// The whole screen for a terminal of `columns` × `rows`: lines of cells, each cell a
    /// character and how to show it.
    func screen(columns: Int, rows: Int) -> [[ScreenCell]] {
        var lines: [[ScreenCell]] = []
        func text(_ line: String, _ style: ScreenCell.Style = .plain) {
            for part in wrapped(line, width: columns) {
                lines.append(part.map { ScreenCell(character: $0, style: style) })
            }
        }
        text("MatchHost Disks - \(self.view.aliases[self.playerID] ?? String(self.playerID.prefix(8))) in match \(self.matchID) on \(self.server)", .bold)
        text(self.status)
        text(self.notice ?? "")
        if self.view.phase == .waiting || self.view.phase == .joining, self.disconnectReason == nil, self.matchEndedReason == nil {
            text("Others join: matchhost play disks\(self.portFlag) --match \(self.matchID)")
            text("        or:  matchhost bot disks\(self.portFlag) --match \(self.matchID) --bots 1")
        } else {
            text(self.clockLine)
            text("Hits: " + (self.recentHits.isEmpty ? "none yet" : self.recentHits.reversed().joined(separator: ", ")))
        }

        let scoreLines = self.view.scoreLines()
        let instructions = "Type a disk's letter to tap it.  Q quits."
        // The rows under the board, as wrapped on this screen: room for a score line per seat
        // (the players still to come too), then the instructions.
        let scoreRows = scoreLines.reduce(0) { $0 + wrapped($1, width: columns).count }
        let footer = max(scoreRows, self.capacity) + wrapped(instructions, width: columns).count
        // Terminal cells are about twice as tall as wide: 5 columns to 2 rows keeps disks round.
        let boardRows = max(6, min(40, rows - lines.count - 2 - footer))
        let boardColumns = max(20, min(columns - 2, boardRows * 5 / 2))
        let grid = self.view.board(columns: boardColumns, rows: boardRows)
        let edge = [ScreenCell(character: "+", style: .plain)]
            + Array(repeating: ScreenCell(character: "-", style: .plain), count: boardColumns)
            + [ScreenCell(character: "+", style: .plain)]
        let side = ScreenCell(character: "|", style: .plain)
        lines.append(edge)
        for row in grid {
            lines.append([side] + row.map(ScreenCell.init(board:)) + [side])
        }
        lines.append(edge)
        for line in scoreLines {
            text(line, line.hasPrefix(">") ? .bold : .plain)
        }
        text(instructions)
        return lines
    }

    /// A line for the normal screen after quitting.
    var summary: String? {
        guard self.view.gameOverReason != nil else { return nil }
        let scores = self.view.players.map { "\($0.displayName) \($0.score)" }.joined(separator: ", ")
        if self.view.iWon { return "You won match \(self.matchID) (\(scores))." }
        let winners = self.view.winnerPlayers.map(\.displayName)
        if winners.isEmpty { return "Nobody won match \(self.matchID) (\(scores))." }
        return "\(winners.joined(separator: " and ")) won match \(self.matchID) (\(scores))."
    }
}

/// One character on the Disks screen and how it is shown.
struct ScreenCell: Equatable {
    enum Style: Equatable {
        case plain
        case bold
        /// A disk's body, in a palette colour.
        case disk(UInt8)
        /// A disk's key: reversed, in its colour.
        case key(UInt8)
        /// A hit disk spinning away: dim, in its colour.
        case spinning(UInt8)
        /// A hit disk's centre: the hitter's seat, bold.
        case hitter(UInt8)
    }

    var character: Character
    var style: Style

    init(character: Character, style: Style) {
        self.character = character
        self.style = style
    }

    init(board cell: DisksView.BoardCell) {
        self.character = cell.character
        let color = cell.color ?? 0
        switch cell.kind {
        case .empty: self.style = .plain
        case .disk: self.style = .disk(color)
        case .key: self.style = .key(color)
        case .spinning: self.style = .spinning(color)
        case .hitter: self.style = .hitter(color)
        }
    }

    /// The escape sequence that sets this style (after a reset).
    var escape: String {
        switch self.style {
        case .plain: return ""
        case .bold: return "\u{1B}[1m"
        case .disk(let color): return "\u{1B}[\(Self.ansi(color))m"
        case .key(let color): return "\u{1B}[1;7;\(Self.ansi(color))m"
        case .spinning(let color): return "\u{1B}[2;\(Self.ansi(color))m"
        case .hitter(let color): return "\u{1B}[1;\(Self.ansi(color))m"
        }
    }

    /// Palette index to an ANSI foreground colour: red, green, yellow, blue, magenta, cyan.
    private static func ansi(_ color: UInt8) -> Int {
        31 + Int(color % 6)
    }
}

/// The screen as one string for the terminal: home, each line with its styles (changed only
/// where they change), clear to the end of each line, clear below. Lines must fit the width.
func renderScreen(_ lines: [[ScreenCell]], rows: Int) -> String {
    var frame = "\u{1B}[H"
    for (index, line) in lines.prefix(rows).enumerated() {
        // No line break after the bottom row: it would scroll the screen.
        if index > 0 { frame += "\r\n" }
        var current = ScreenCell.Style.plain
        for cell in line {
            if cell.style != current {
                frame += "\u{1B}[0m" + cell.escape
                current = cell.style
            }
            frame.append(cell.character)
        }
        frame += "\u{1B}[0m\u{1B}[K"
    }
    frame += "\u{1B}[J"
    return frame
}
