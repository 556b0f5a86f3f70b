import ArgumentParser
import MatchHostClient
import MatchHostWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `matchhost play`: play a game in the terminal.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play", abstract: "Play against other players in the terminal.",
        subcommands: [PlayCatRaceCommand.self])
}

/// `matchhost play catrace`: the Cat Race in a terminal. SPACE taps, R restarts, Q quits.
struct PlayCatRaceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catrace",
        abstract: "Race cats in the terminal against other players or bots.",
        discussion: """
            Draws one lane per racer. SPACE moves your cat one step (MOVED_SELF with x + 10), R \
            races again after a win (RESTART_MATCH), S starts a race with --opponents again, Q or \
            Ctrl-C quits. With --opponents you start the race (START_MATCH); without, you wait \
            until someone starts one with your --id, e.g. `matchhost bot catrace --racers 1 --with ID`.
            """)

    @Option(help: "Server address.")
    var host = "127.0.0.1"

    @Option(help: "Server Cat Race port.")
    var port = 1955

    @Option(help: "Your player id (default: a random one).")
    var id: String?

    @Option(help: "Your name on the track (default: your id).")
    var alias: String?

    @Option(
        parsing: .singleValue,
        help: "Player ids to start a race with (comma-separated, or repeat the option); without it, wait to be started.")
    var opponents: [String] = []

    private var opponentIDs: [String] {
        self.opponents.flatMap { $0.split(separator: ",").map { String($0) } }.filter { !$0.isEmpty }
    }

    func validate() throws {
        guard (0...65535).contains(self.port) else { throw ValidationError("--port must be 0-65535") }
        if let id = self.id {
            guard !id.isEmpty, id.utf8.count <= 255 else { throw ValidationError("--id must be 1-255 bytes") }
        }
        if let alias = self.alias, alias.utf8.count > 255 { throw ValidationError("--alias must be at most 255 bytes") }
        let opponents = self.opponentIDs
        guard opponents.count <= 15 else { throw ValidationError("--opponents: at most 15") }
        guard Set(opponents).count == opponents.count else { throw ValidationError("--opponents lists an id twice") }
        if let id = self.id, opponents.contains(id) { throw ValidationError("--opponents must not list your own id") }
    }

    func run() async throws {
        let playerID = self.id ?? "player-" + String(UInt16.random(in: 0x1000...0xFFFF), radix: 16)
        let alias = self.alias ?? playerID
        let client: CatRaceClient
        do {
            client = try await CatRaceClient.connect(host: self.host, port: self.port, playerID: playerID, alias: alias)
        } catch {
            benchPrintError("error: \(error)")
            throw ExitCode.failure
        }

        let terminal = RawTerminal()
        do {
            try terminal.enterRawMode()
        } catch {
            await client.close()
            benchPrintError("error: \(error)")
            throw ExitCode.failure
        }
        defer { terminal.restore() }

        var session = PlaySession(
            playerID: playerID, alias: alias, server: "\(self.host):\(self.port)", opponents: self.opponentIDs)
        let (events, input) = AsyncStream.makeStream(of: PlayEvent.self)
        startKeyReader(onByte: { input.yield(.key($0)) }, onEnd: { input.yield(.inputEnded) })
        let signalSources = watchSignals([SIGINT, SIGTERM, SIGHUP]) { input.yield(.signal($0)) }
        let resizeSources = watchSignals([SIGWINCH]) { _ in input.yield(.resize) }
        let receiver = Task {
            do {
                for try await message in client.messages {
                    input.yield(.server(message))
                }
                input.yield(.disconnected("the server closed the connection"))
            } catch {
                input.yield(.disconnected("\(error)"))
            }
        }

        var exitSignal: Int32?
        terminal.draw(session.screen(width: terminal.size.columns))
        loop: for await event in events {
            switch event {
            case .key(let key):
                switch key {
                case UInt8(ascii: "q"), UInt8(ascii: "Q"), 3, 4:  // Q, Ctrl-C, Ctrl-D
                    break loop
                default:
                    for message in session.pressed(key, at: .now) {
                        do {
                            try await client.send(message)
                        } catch {
                            session.disconnected("\(error)")
                        }
                    }
                }
            case .server(let message):
                for reply in session.received(message) {
                    do {
                        try await client.send(reply)
                    } catch {
                        session.disconnected("\(error)")
                    }
                }
            case .disconnected(let reason):
                session.disconnected(reason)
            case .resize:
                break
            case .inputEnded:
                break loop
            case .signal(let number):
                exitSignal = number
                break loop
            }
            terminal.draw(session.screen(width: terminal.size.columns))
        }

        receiver.cancel()
        input.finish()
        for source in signalSources + resizeSources {
            source.cancel()
        }
        await client.close()
        terminal.restore()
        if let summary = session.summary {
            print(summary)
        }
        if let exitSignal {
            throw ExitCode(128 + exitSignal)
        }
    }
}

/// Something the play loop reacts to.
enum PlayEvent: Sendable {
    case key(UInt8)
    case server(CatRaceServerMessage)
    case disconnected(String)
    case resize
    case inputEnded
    case signal(Int32)
}

/// The terminal client's state: the race view, what to send for a key or a message, and
/// what to draw. No I/O.
struct PlaySession {
    let playerID: String
    let alias: String
    let server: String
    let opponents: [String]
    private(set) var view: CatRaceRaceView
    private var startedOnce = false
    /// When the last tap was sent. Taps closer together than ``minimumTapInterval`` are
    /// dropped: a held-down key repeats faster than the server's tap-rate limit, and a client
    /// that runs far ahead of the server has every later move refused (PROTOCOL.md).
    private var lastTap: ContinuousClock.Instant?
    static let minimumTapInterval = Duration.milliseconds(60)
    private var disconnectReason: String?
    private var notice: String?

    init(playerID: String, alias: String, server: String, opponents: [String]) {
        self.playerID = playerID
        self.alias = alias
        self.server = server
        self.opponents = opponents
        self.view = CatRaceRaceView(myPlayerID: playerID)
    }

    private var startMatch: CatRaceClientMessage {
        .startMatch(StartMatch(playerIDs: [self.playerID] + self.opponents))
    }

    /// What to send for a key press.
    mutating func pressed(_ key: UInt8, at now: ContinuousClock.Instant) -> [CatRaceClientMessage] {
        guard self.disconnectReason == nil else { return [] }
        switch key {
        case UInt8(ascii: " "):
            if let lastTap = self.lastTap, now - lastTap < Self.minimumTapInterval { return [] }
            guard let move = self.view.tap() else { return [] }
            self.lastTap = now
            return [.movedSelf(move)]
        case UInt8(ascii: "r"), UInt8(ascii: "R"):
            guard self.view.phase == .finished else { return [] }
            self.notice = "Restart requested."
            return [.restartMatch]
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
            guard self.view.phase == .notInMatch, !self.opponents.isEmpty else { return [] }
            self.notice = "START_MATCH sent again."
            return [self.startMatch]
        default:
            return []
        }
    }

    /// Folds a server message in; returns what to send in answer.
    mutating func received(_ message: CatRaceServerMessage) -> [CatRaceClientMessage] {
        self.view.apply(message)
        switch message {
        case .notInMatch where !self.startedOnce && !self.opponents.isEmpty:
            self.startedOnce = true
            return [self.startMatch]
        case .matchStarted:
            self.notice = nil
        case .notifyReady(let ready):
            self.notice = "\(ready.playerID) is ready."
        default:
            break
        }
        return []
    }

    mutating func disconnected(_ reason: String) {
        if self.disconnectReason == nil {
            self.disconnectReason = reason
        }
    }

    /// The status line.
    var status: String {
        if let reason = self.disconnectReason {
            return "Disconnected: \(reason). Press Q to quit."
        }
        switch self.view.phase {
        case .connecting:
            return "Connecting as \(self.playerID)..."
        case .notInMatch:
            var ended = ""
            if self.view.raceEnded {
                ended = "The race has ended. "
                if self.view.iWon {
                    ended = "You WON! The race has ended. "
                } else if let winner = self.view.winner {
                    ended = "\(winner.displayName) won. The race has ended. "
                }
            }
            if self.opponents.isEmpty {
                return ended + "Waiting for someone to start a race with your id \(self.playerID)."
            }
            return ended + "Waiting for the race with \(self.opponents.joined(separator: ", ")) to start (S sends START_MATCH again)."
        case .racing:
            return self.view.myIndex == nil ? "A race is running without you." : "GO! Tap SPACE to run."
        case .finished:
            let restart = " Press R to race again, Q to quit."
            if self.view.iWon { return "You WIN!" + restart }
            if let winner = self.view.winner { return "\(winner.displayName) wins!" + restart }
            return "The race is over." + restart
        }
    }

    /// The whole screen for a terminal `width` columns wide.
    func screen(width: Int) -> [String] {
        var lines = [
            "MatchHost Cat Race - \(self.alias) (\(self.playerID)) on \(self.server)",
            "",
            self.status,
            self.notice ?? "",
            "",
        ]
        let lanes = self.view.lanes(width: width)
        lines += lanes.isEmpty ? ["  (no race yet)"] : lanes
        lines += [
            "",
            "Finish line at x = \(CatRaceTrack.finishX); each tap is +\(CatRaceTrack.stepX).",
            "SPACE tap   R race again   S start again   Q quit",
        ]
        return lines
    }

    /// A line for the normal screen after quitting.
    var summary: String? {
        guard let winner = self.view.winner else { return nil }
        return self.view.iWon ? "You won the last race." : "\(winner.displayName) won the last race."
    }
}
