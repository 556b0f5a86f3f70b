import MatchHostWire

extension DisksBot {
    /// What to play.
    public struct Options: Sendable {
        /// The server's host. Default 127.0.0.1.
        public var host = "127.0.0.1"
        /// The server's native port. Default 7355.
        public var port = 7355
        /// The game id sent in HELLO. Default `matchhost`.
        public var gameID = "matchhost"
        /// How the bots speak TLS to the native port (a server with `--tls-certificate`); nil
        /// (the default) speaks plaintext.
        public var tls: MatchHostClient.TLS?
        /// The match the bots join instead of creating one (one match only), e.g. one a human
        /// created with `matchhost play disks`.
        public var matchID: MatchIdentifier?
        /// Matches played at the same time. Default 1.
        public var matches = 1
        /// Bots in each match. Default 2. A match the bots create holds exactly them.
        public var botsPerMatch = 2
        /// The mean time from seeing a disk to tapping it. Default 350 ms.
        public var reactionTime: Duration = .milliseconds(350)
        /// How much each reaction varies: it is drawn evenly within ± this fraction of
        /// ``reactionTime`` (0 to 1). Default 0.5, so equal bots take turns winning.
        public var reactionSpread = 0.5
        /// The most taps per second of each bot (the server ignores more than 20). Default 8.
        public var tapRate: Double = 8
        /// The longest a match may take, from the bots' arrival to GAME_OVER, before the run
        /// fails. Default 120 s (the game's time limit is 60 s once two players are there).
        public var matchTimeout: Duration = .seconds(120)
        /// Part of every bot's device id (`bot-<runID>-<match>-<seat>`), so concurrent runs do
        /// not collide. Default: random.
        public var runID = String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)

        /// The default options.
        public init() {}

        /// The device id of bot `seat` of match `match` (both from 0).
        public func deviceID(match: Int, seat: Int) -> String {
            "bot-\(self.runID)-\(match)-\(seat)"
        }

        /// Checks the options before anything connects.
        /// - Throws: ``DisksBotError`` naming the option.
        public func validate() throws {
            guard (0...65535).contains(self.port) else { throw DisksBotError("the port must be 0-65535") }
            guard self.matches >= 1 else { throw DisksBotError("there must be at least 1 match") }
            if self.matchID == nil {
                guard (2...16).contains(self.botsPerMatch) else {
                    throw DisksBotError("a match the bots create needs 2-16 bots, not \(self.botsPerMatch)")
                }
            } else {
                guard self.matches == 1 else { throw DisksBotError("bots can join a given match in only 1 match") }
                guard (1...15).contains(self.botsPerMatch) else { throw DisksBotError("1-15 bots can join a match") }
            }
            guard self.reactionTime >= .zero else { throw DisksBotError("the reaction time must not be negative") }
            guard (0...1).contains(self.reactionSpread) else { throw DisksBotError("the reaction spread must be 0-1") }
            guard self.tapRate > 0, self.tapRate.isFinite else { throw DisksBotError("the tap rate must be positive") }
            guard self.matchTimeout > .zero else { throw DisksBotError("the match timeout must be positive") }
        }

        /// One reaction time, drawn within the spread.
        func drawReaction<Generator: RandomNumberGenerator>(using generator: inout Generator) -> Duration {
            guard self.reactionSpread > 0 else { return self.reactionTime }
            return self.reactionTime
                * Double.random(in: (1 - self.reactionSpread)...(1 + self.reactionSpread), using: &generator)
        }
    }

    /// One finished match.
    public struct MatchResult: Sendable, Hashable, CustomStringConvertible {
        /// The match's place in the run, from 0.
        public var match: Int
        /// The match's id on the server.
        public var matchID: MatchIdentifier
        /// Why the game ended.
        public var reason: DisksGameOverReason
        /// The winning seats (several on a tie at the time limit, none if nobody scored).
        public var winners: [Int]
        /// Every seat's player and final score, in seat order.
        public var scores: [DisksScore]
        /// From the start of play to GAME_OVER, as the first bot saw them.
        public var duration: Duration

        /// Creates a result.
        public init(
            match: Int, matchID: MatchIdentifier, reason: DisksGameOverReason, winners: [Int], scores: [DisksScore],
            duration: Duration
        ) {
            self.match = match
            self.matchID = matchID
            self.reason = reason
            self.winners = winners
            self.scores = scores
            self.duration = duration
        }

        /// The winners' player ids.
        public var winnerIDs: [String] {
            self.winners.compactMap { seat in self.scores.first { Int($0.seat) == seat }?.playerID }
        }

        /// "match 1 (id 42): score limit in 12.3 s, winner seat 2 b67b73f1; scores f998cf4c 14, b67b73f1 20".
        public var description: String {
            let seconds = Double(self.duration.components.seconds) + Double(self.duration.components.attoseconds) / 1e18
            let tenths = (seconds * 10).rounded() / 10
            let reason =
                switch self.reason {
                case .scoreLimit: "score limit"
                case .timeLimit: "time limit"
                case .opponentsLeft: "opponents left"
                }
            let names = self.winners.map { seat in
                "seat \(seat + 1) " + String(self.scores.first { Int($0.seat) == seat }?.playerID.prefix(8) ?? "?")
            }
            let winners =
                names.isEmpty ? "no winner" : (names.count == 1 ? "winner " : "winners ") + names.joined(separator: ", ")
            let scores = self.scores.map { "\($0.playerID.prefix(8)) \($0.score)" }.joined(separator: ", ")
            return "match \(self.match + 1) (id \(self.matchID)): \(reason) in \(tenths) s, \(winners); scores \(scores)"
        }
    }
}

/// Why a ``DisksBot`` run failed.
public struct DisksBotError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, naming the match and bot.
    public var description: String

    /// Creates an error with this message.
    public init(_ description: String) {
        self.description = description
    }
}
