import MatchHostWire

extension FourInARowBot {
    /// What to play.
    public struct Options: Sendable {
        /// The server's host. Default 127.0.0.1.
        public var host = "127.0.0.1"
        /// The server's native port (its `--port`). Default 7355.
        public var port = 7355
        /// The game id sent in HELLO. Default `matchhost`.
        public var gameID = "matchhost"
        /// How the bots speak TLS to the native port (a server with `--tls-certificate`); nil
        /// (the default) speaks plaintext.
        public var tls: MatchHostClient.TLS?
        /// Games played at the same time, two bots each. Default 1. Must be 1 with
        /// ``matchID`` or ``inviteCode``.
        public var games = 1
        /// The match one bot joins instead of two bots playing each other, e.g. one a human
        /// created with `matchhost play fourinarow`.
        public var matchID: MatchIdentifier?
        /// The invite code of the match one bot joins (instead of ``matchID``).
        public var inviteCode: String?
        /// The seed of the bots' random choices (each bot of each game draws from its own
        /// generator derived from it). Default: random.
        public var seed = UInt64.random(in: 0...UInt64.max)
        /// How long a bot waits before each of its moves. Default none.
        public var moveDelay: Duration = .zero
        /// The longest a bot waits for anything from the server before the run fails. The
        /// server's turn timer (30 s by default) bounds a human opponent's silence. Default 90 s.
        public var idleTimeout: Duration = .seconds(90)
        /// Part of every bot's device id (`fourinarow-bot-<runID>-<game>-<seat>`), so that
        /// concurrent runs do not collide. Default: random.
        public var runID = String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)

        /// The default options.
        public init() {}

        /// Whether one bot joins a given match (``matchID`` or ``inviteCode``) rather than two
        /// bots playing each other.
        public var joinsGivenMatch: Bool {
            self.matchID != nil || self.inviteCode != nil
        }

        /// Bots in each game: 1 when joining a given match, else 2.
        public var botsPerGame: Int {
            self.joinsGivenMatch ? 1 : 2
        }

        /// The device id of bot `seat` of game `game` (both from 0).
        public func deviceID(game: Int, seat: Int) -> String {
            "fourinarow-bot-\(self.runID)-\(game)-\(seat)"
        }

        /// The seed of bot `seat` of game `game`'s generator.
        public func seed(game: Int, seat: Int) -> UInt64 {
            var mixer = FourInARowBotRandom(seed: self.seed &+ UInt64(game) &* 2 &+ UInt64(seat))
            return mixer.next()
        }

        /// Checks the options, with a message naming the bad one.
        public func validate() throws {
            guard (0...65535).contains(self.port) else { throw FourInARowBotError("the port must be 0-65535") }
            guard self.games >= 1 else { throw FourInARowBotError("there must be at least 1 game") }
            if self.joinsGivenMatch {
                guard self.matchID == nil || self.inviteCode == nil else {
                    throw FourInARowBotError("give a match id or an invite code, not both")
                }
                guard self.games == 1 else { throw FourInARowBotError("a bot joins a given match in 1 game only") }
            }
            if let code = self.inviteCode {
                guard !code.isEmpty, code.utf8.count <= NativeLimits.identifier else {
                    throw FourInARowBotError("an invite code is 1-255 bytes")
                }
            }
            guard self.moveDelay >= .zero else { throw FourInARowBotError("the move delay must not be negative") }
            guard self.idleTimeout > .zero else { throw FourInARowBotError("the idle timeout must be positive") }
        }
    }

    /// One finished game, as the first bot of the game saw it.
    public struct GameResult: Sendable, Hashable, CustomStringConvertible {
        /// The game, from 0.
        public var game: Int
        /// The match it was played in.
        public var matchID: MatchIdentifier
        /// The winner's seat (0 plays X, 1 plays O); nil for a draw.
        public var winnerSeat: Int?
        /// The winner's player id; nil for a draw.
        public var winnerID: String?
        /// How the game ended.
        public var reason: FourInARowEndReason
        /// Moves played.
        public var moves: Int
        /// From the first STATE of play to GAME_OVER, as the first bot saw them.
        public var duration: Duration

        /// Creates a result.
        public init(
            game: Int, matchID: MatchIdentifier, winnerSeat: Int?, winnerID: String?, reason: FourInARowEndReason, moves: Int,
            duration: Duration
        ) {
            self.game = game
            self.matchID = matchID
            self.winnerSeat = winnerSeat
            self.winnerID = winnerID
            self.reason = reason
            self.moves = moves
            self.duration = duration
        }

        /// Whether the game was drawn.
        public var isDraw: Bool { self.winnerSeat == nil }

        /// "game 1 (match 12): X wins (four in a row, seat 1, 0f3a…) after 13 moves in 0.2 s",
        /// or "game 2 (match 13): draw after 42 moves in 0.4 s", counting games and seats from 1
        /// as every line meant for people does (the Disks bot and the terminals too).
        public var description: String {
            let seconds = Double(self.duration.components.seconds) + Double(self.duration.components.attoseconds) / 1e18
            let time = "\((seconds * 10).rounded() / 10) s"
            let head = "game \(self.game + 1) (match \(self.matchID)): "
            guard let seat = self.winnerSeat else {
                return head + "draw after \(self.moves) moves in \(time)"
            }
            let symbol = FourInARowView.symbol(ofSeat: UInt8(seat))
            return head + "\(symbol) wins (\(self.reason), seat \(seat + 1), \(self.winnerID ?? "?")) after \(self.moves) moves in \(time)"
        }
    }
}

/// Why a ``FourInARowBot`` run failed.
public struct FourInARowBotError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, naming the game and bot.
    public var description: String

    /// Creates an error with this message.
    public init(_ description: String) {
        self.description = description
    }
}
