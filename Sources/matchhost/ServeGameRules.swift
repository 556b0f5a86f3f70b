import ArgumentParser
import MatchHostGames
import MatchHostServer
import NIOCore

/// `matchhost serve`'s flags for the built-in games' rules: Disks and Four in a Row.
struct ServeGameRules: ParsableArguments {
    @Option(name: .customLong("disks-tick-rate"), help: "Disks ticks per second (1-120): spawns, expiries and one TICK broadcast each.")
    var disksTickRate = DisksGame.Options().ticksPerSecond

    @Option(name: .customLong("disks-score-limit"), help: "Disks score that wins at once (1-65535).")
    var disksScoreLimit = Int(DisksGame.Options().scoreLimit)

    @Option(name: .customLong("disks-time-limit"), help: "Seconds (1-3600) a Disks game lasts; then the highest score wins.")
    var disksTimeLimit = Double(DisksGame.Options().timeLimit.nanoseconds) / 1e9

    @Option(name: .customLong("disks-min-players"), help: "Connected players (2-16) a Disks match waits for before play starts.")
    var disksMinPlayers = DisksGame.Options().minimumPlayers

    @Option(name: .customLong("disks-max-taps"), help: "Disks taps per second (1-1000) one player may make; more are ignored and counted.")
    var disksMaxTaps = DisksGame.Options().maxTapsPerSecond

    @Option(name: .customLong("turn-time"), help: "Seconds (1-86400) a Four in a Row player has for a move before losing the game.")
    var turnTime = 30.0

    func validate() throws {
        guard (1...120).contains(self.disksTickRate) else { throw ValidationError("--disks-tick-rate must be 1-120") }
        guard (1...65535).contains(self.disksScoreLimit) else { throw ValidationError("--disks-score-limit must be 1-65535") }
        guard self.disksTimeLimit.isFinite, (1...3600).contains(self.disksTimeLimit) else {
            throw ValidationError("--disks-time-limit must be 1 to 3600 seconds")
        }
        guard (2...16).contains(self.disksMinPlayers) else { throw ValidationError("--disks-min-players must be 2-16") }
        guard (1...1000).contains(self.disksMaxTaps) else { throw ValidationError("--disks-max-taps must be 1-1000") }
        guard self.turnTime.isFinite, (1...86_400).contains(self.turnTime) else {
            throw ValidationError("--turn-time must be 1 to 86400 seconds")
        }
    }

    /// Sets the rules in `configuration`.
    func apply(to configuration: inout ServerConfiguration) {
        configuration.disksOptions.ticksPerSecond = self.disksTickRate
        configuration.disksOptions.scoreLimit = UInt16(self.disksScoreLimit)
        configuration.disksOptions.timeLimit = .nanoseconds(Int64(self.disksTimeLimit * 1e9))
        configuration.disksOptions.minimumPlayers = self.disksMinPlayers
        configuration.disksOptions.maxTapsPerSecond = self.disksMaxTaps
        configuration.turnTimeLimit = .nanoseconds(Int64(self.turnTime * 1e9))
    }
}
