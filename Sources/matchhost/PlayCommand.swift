import ArgumentParser
import Logging
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
        subcommands: [PlayCatRaceCommand.self, PlayDisksCommand.self, PlayFourInARowCommand.self])
}

/// `matchhost play catrace`: the Cat Race in a terminal, on the Cat Race port or in a native
/// `catrace` match. SPACE taps, R restarts, Q quits.
struct PlayCatRaceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catrace",
        abstract: "Race cats in the terminal against other players or bots.",
        discussion: """
            Draws one lane per racer. SPACE moves your cat one step (MOVED_SELF with x + 10), R \
            races again after a win (RESTART_MATCH), Q or Ctrl-C quits.

            On the Cat Race port (default): S starts a race with --opponents again. With \
            --opponents you start the race (START_MATCH); without, you wait until someone \
            starts one with your --id, e.g. `matchhost bot catrace --racers 1 --with ID`.

            With --native: plays in a catrace match on the native port, as the player of the \
            device stored in --device-file (created on first contact). Without --match you \
            create a match for --racers racers and its id is shown, for others to join with \
            --match ID (e.g. `matchhost bot catrace --native --match ID --racers 1`); the race \
            starts once every seat is taken.
            """)

    @OptionGroup var server: CatRaceServerOptions

    @Option(help: "With --native, without --match: racers in the match you create (2-16; default 2).")
    var racers: Int?

    @Option(
        name: .customLong("device-file"),
        help: "With --native: the file holding your device id and secret (default: ~/.matchhost/device).")
    var deviceFile: String?

    @Option(help: "Cat Race port only: your player id (default: a random one).")
    var id: String?

    @Option(
        help: ArgumentHelp(
            "Your name on the track (default: your id). With --native the server keeps it for your player (SET_ALIAS; its rules apply).",
            valueName: "name"))
    var alias: String?

    @Option(
        parsing: .singleValue,
        help: "Cat Race port only: player ids to start a race with (comma-separated, or repeat the option); without it, wait to be started.")
    var opponents: [String] = []

    @OptionGroup var link: DeviceLinkOption

    private var opponentIDs: [String] {
        playerIDList(self.opponents)
    }

    private var serverPort: Int {
        self.server.resolvedPort
    }

    func validate() throws {
        if self.server.native {
            guard self.id == nil, self.opponentIDs.isEmpty else {
                throw ValidationError("--id and --opponents are for the Cat Race port; natively the server issues your player id")
            }
            if let alias = self.alias {
                guard !alias.isEmpty, alias.utf8.count <= 255 else { throw ValidationError("--alias must be 1-255 bytes") }
            }
            if let racers = self.racers {
                guard self.server.matchID == nil else { throw ValidationError("--racers is for a match you create, not with --match") }
                guard (2...16).contains(racers) else { throw ValidationError("--racers must be 2-16") }
            }
            if let deviceFile = self.deviceFile, deviceFile.isEmpty { throw ValidationError("--device-file must not be empty") }
            return
        }
        guard self.server.matchID == nil, self.racers == nil, self.deviceFile == nil, self.link.linkCode == nil else {
            throw ValidationError("--match, --racers, --device-file and --link-code need --native")
        }
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
        let prepared: (connection: any CatRaceConnection, session: PlaySession)
        do {
            prepared = self.server.native ? try await self.joinNativeRace() : try await self.connectCatRacePort()
        } catch {
            benchPrintError("error: \(error)")
            throw ExitCode.failure
        }
        try await playInTerminal(prepared.connection, session: prepared.session)
    }

    /// Port 1955: connects with PLAYER_CONNECTED.
    private func connectCatRacePort() async throws -> (any CatRaceConnection, PlaySession) {
        let playerID = self.id ?? "player-" + String(UInt16.random(in: 0x1000...0xFFFF), radix: 16)
        let alias = self.alias ?? playerID
        let client = try await CatRaceClient.connect(host: self.server.host, port: self.serverPort, playerID: playerID, alias: alias)
        let session = PlaySession(
            playerID: playerID, alias: alias, server: "\(self.server.host):\(self.serverPort)", mode: .catRacePort(opponents: self.opponentIDs))
        return (client, session)
    }

    /// Native: authenticates as the stored device (storing the secret on first contact), then
    /// creates a catrace match or joins --match.
    private func joinNativeRace() async throws -> (any CatRaceConnection, PlaySession) {
        let server = "\(self.server.host):\(self.serverPort)"
        // Nothing may write to the terminal while it shows the race; errors are thrown.
        let (client, _) = try await nativeLogin(
            host: self.server.host, port: self.serverPort, tls: self.server.tls.clientTLS,
            deviceFile: self.deviceFile ?? DeviceFile.defaultPath, linkCode: self.link.linkCode, alias: self.alias, logger: silentLogger)

        let race: CatRaceNativeClient
        do {
            if let matchID = self.server.matchID {
                race = try await CatRaceNativeClient.joinMatch(matchID, on: client)
            } else {
                race = try await CatRaceNativeClient.createMatch(on: client, racers: self.racers ?? 2)
            }
        } catch {
            await client.close()
            if let matchID = self.server.matchID {
                throw PlayError("cannot join match \(matchID): \(error)")
            }
            throw PlayError("cannot create a catrace match: \(error)")
        }
        let portFlag = (self.server.port == nil ? "" : " --port \(self.serverPort)") + self.server.tls.flags
        if self.server.matchID == nil {
            benchPrint("Created catrace match \(race.matchID) for \(race.capacity) racers.")
        } else {
            benchPrint("Joined catrace match \(race.matchID) (\(race.match.players.count) of \(race.capacity) racers).")
        }
        if race.match.players.count < race.capacity {
            benchPrint("Others join with:")
            benchPrint("  matchhost play catrace --native\(portFlag) --match \(race.matchID)")
            benchPrint("  matchhost bot catrace --native\(portFlag) --match \(race.matchID) --racers 1")
        }
        let session = PlaySession(
            playerID: race.playerID, alias: self.alias ?? String(race.playerID.prefix(8)), server: server,
            mode: .native(matchID: race.matchID, capacity: race.capacity))
        return (race, session)
    }
}

/// The race in the terminal, whichever protocol `connection` speaks
/// (``runInTerminal(startFeeds:draw:handle:close:)``): keys and server events into `session`,
/// its screen redrawn after each; exits with 128 + the signal after a signal.
func playInTerminal(_ connection: any CatRaceConnection, session: PlaySession) async throws {
    var session = session
    let exitSignal = try await runInTerminal(
        startFeeds: { yield in
            [
                terminalFeed(
                    { try await connection.nextEvent(timeout: nil) }, endReason: "the server closed the connection",
                    event: PlayEvent.server, ended: PlayEvent.disconnected, into: yield)
            ]
        },
        draw: { terminal in terminal.draw(session.screen(width: terminal.size.columns)) },
        handle: { input in
            var toSend: [CatRaceClientMessage] = []
            switch input {
            case .key(let key):
                toSend = session.pressed(key, at: .now)
            case .game(.server(let event)):
                toSend = session.received(event)
            case .game(.disconnected(let reason)):
                session.disconnected(reason)
            case .resize:
                break
            }
            for message in toSend {
                do {
                    try await connection.send(message)
                } catch {
                    session.disconnected("\(error)")
                }
            }
        },
        close: { await connection.close() })
    if let summary = session.summary {
        print(summary)
    }
    if let exitSignal {
        throw ExitCode(128 + exitSignal)
    }
}

/// What the race reacts to besides the terminal.
enum PlayEvent: Sendable {
    case server(CatRaceConnectionEvent)
    case disconnected(String)
}

/// The terminal client's state: the race view, what to send for a key or a message, and
/// what to draw. No I/O.
struct PlaySession {
    /// Where the race is held.
    enum Mode {
        /// The Cat Race port: START_MATCH with these players (none: wait to be started).
        case catRacePort(opponents: [String])
        /// A native `catrace` match with room for `capacity` racers; the race is on once
        /// they are all there.
        case native(matchID: MatchIdentifier, capacity: Int)
    }

    let playerID: String
    let alias: String
    let server: String
    let mode: Mode
    private(set) var view: CatRaceRaceView
    private var startedOnce = false
    /// When the last tap was sent. Taps closer together than ``minimumTapInterval`` are
    /// dropped: a held-down key repeats faster than the server's tap-rate limit, and taps over
    /// it only put the player's screen ahead of where the server has its cat (PROTOCOL.md).
    private var lastTap: ContinuousClock.Instant?
    static let minimumTapInterval = Duration.milliseconds(60)
    private var disconnectReason: String?
    private var notice: String?
    /// Native: the server ended the match (MATCH_ENDED).
    private var matchEnded = false

    init(playerID: String, alias: String, server: String, mode: Mode) {
        self.playerID = playerID
        self.alias = alias
        self.server = server
        self.mode = mode
        self.view = CatRaceRaceView(myPlayerID: playerID)
    }

    /// Port 1955: the players to start a race with.
    private var opponents: [String] {
        if case .catRacePort(let opponents) = self.mode { return opponents }
        return []
    }

    private var startMatch: CatRaceClientMessage {
        .startMatch(StartMatch(playerIDs: [self.playerID] + self.opponents))
    }

    /// Native: racers still missing before the race is on (0 on port 1955).
    private var missingRacers: Int {
        guard case .native(_, let capacity) = self.mode else { return 0 }
        return max(0, capacity - self.view.racers.count)
    }

    /// What to send for a key press.
    mutating func pressed(_ key: UInt8, at now: ContinuousClock.Instant) -> [CatRaceClientMessage] {
        guard self.disconnectReason == nil else { return [] }
        switch key {
        case UInt8(ascii: " "):
            guard self.missingRacers == 0 else { return [] }
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

    /// Folds a server event in; returns what to send in answer.
    mutating func received(_ event: CatRaceConnectionEvent) -> [CatRaceClientMessage] {
        switch event {
        case .message(let message):
            return self.received(message)
        case .presence(let playerID, let change, let reason):
            let name = String(playerID.prefix(8))
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
            return []
        case .matchEnded(let reason):
            self.matchEnded = true
            self.notice = "The server ended the match: \(reason)."
            return []
        }
    }

    /// Folds a Cat Race server message in; returns what to send in answer.
    mutating func received(_ message: CatRaceServerMessage) -> [CatRaceClientMessage] {
        self.view.apply(message)
        switch message {
        case .notInMatch where !self.startedOnce && !self.opponents.isEmpty:
            self.startedOnce = true
            return [self.startMatch]
        case .matchStarted:
            // Natively each join shows the line-up again: keep the "joined" notice until the race is on.
            if self.missingRacers == 0 { self.notice = nil }
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
            if case .native(let matchID, _) = self.mode { return "Joining match \(matchID)..." }
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
            switch self.mode {
            case .native:
                return ended + (self.matchEnded ? "The match is over. " : "") + "Press Q to quit."
            case .catRacePort(let opponents) where opponents.isEmpty:
                return ended + "Waiting for someone to start a race with your id \(self.playerID)."
            case .catRacePort(let opponents):
                return ended + "Waiting for the race with \(opponents.joined(separator: ", ")) to start (S sends START_MATCH again)."
            }
        case .racing:
            if self.view.myIndex == nil { return "A race is running without you." }
            if case .native(let matchID, let capacity) = self.mode, self.missingRacers > 0 {
                return "Waiting for racers: \(self.view.racers.count) of \(capacity) here. Others join with --native --match \(matchID)."
            }
            return "GO! Tap SPACE to run."
        case .finished:
            let restart = " Press R to race again, Q to quit."
            if self.view.iWon { return "You WIN!" + restart }
            if let winner = self.view.winner { return "\(winner.displayName) wins!" + restart }
            return "The race is over." + restart
        }
    }

    /// The whole screen for a terminal `width` columns wide.
    func screen(width: Int) -> [String] {
        var place = "on \(self.server)"
        var keys = "SPACE tap   R race again   S start again   Q quit"
        if case .native(let matchID, _) = self.mode {
            place = "in match \(matchID) on \(self.server)"
            keys = "SPACE tap   R race again   Q quit"
        }
        var lines = [
            "MatchHost Cat Race - \(self.alias) (\(self.playerID)) \(place)",
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
            keys,
        ]
        return lines
    }

    /// A line for the normal screen after quitting.
    var summary: String? {
        guard let winner = self.view.winner else { return nil }
        return self.view.iWon ? "You won the last race." : "\(winner.displayName) won the last race."
    }
}
