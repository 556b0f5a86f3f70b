import Logging
import MatchHostCore
import MatchHostGames
import MatchHostWire
import NIOCore

/// What the native world needs to create a match: its id, size, label and the runtime's
/// shared parts.
struct MatchSetup {
    var id: MatchID
    var capacity: Int
    var label: String
    var clock: any MatchClock
    var seatGrace: TimeAmount
    var logger: Logger
}

/// One game mode a native client can create or queue for.
struct NativeGameMode {
    /// The name clients use.
    var name: String
    /// The sizes a match of this mode may have.
    var capacities: ClosedRange<Int>
    /// The size taken when the client asks for 0.
    var defaultCapacity: Int
    /// Creates and starts a match.
    var make: (MatchSetup) -> any HostedMatch
}

/// The game modes of the native port, by name.
struct NativeGameModes {
    private(set) var modes: [String: NativeGameMode] = [:]

    /// The modes' names, sorted, for error messages.
    var names: [String] { self.modes.keys.sorted() }

    subscript(name: String) -> NativeGameMode? { self.modes[name] }

    mutating func add(_ mode: NativeGameMode) {
        self.modes[mode.name] = mode
    }

    /// The built-in games, their sizes bounded by `--max-players`.
    /// - Parameter catRaceInvite: seats tutorial clients named by a START_MATCH in a native race.
    static func builtIn(
        maxPlayers: Int, catRace: CatRaceOptions, catRaceInvite: @escaping (Match<CatRaceGame>, [PlayerID]) -> Void
    ) -> NativeGameModes {
        var modes = NativeGameModes()
        let upTo = 2...max(2, maxPlayers)
        modes.add(
            NativeGameMode(name: RelayGame.mode, capacities: upTo, defaultCapacity: upTo.upperBound) { setup in
                let match = Match(
                    id: setup.id, handler: RelayGame(options: .init()), encoders: [relayEncoder(matchID: setup.id)],
                    clock: setup.clock, gracePeriod: setup.seatGrace, capacity: setup.capacity, logger: setup.logger)
                return NativeMatch.relay(match: match, label: setup.label)
            })
        modes.add(
            NativeGameMode(name: CatRaceGame.mode, capacities: upTo, defaultCapacity: upTo.upperBound) { setup in
                let match = Match(
                    id: setup.id, handler: CatRaceGame(options: catRace),
                    // Tutorial clients may race here too (see catRaceInvite), in their own encoding.
                    encoders: [catRaceNativeEncoder(matchID: setup.id), catRaceFrameEncoder],
                    clock: setup.clock, gracePeriod: setup.seatGrace, capacity: setup.capacity, logger: setup.logger)
                return NativeMatch.catRace(match: match, label: setup.label, invite: catRaceInvite)
            })
        return modes
    }
}
