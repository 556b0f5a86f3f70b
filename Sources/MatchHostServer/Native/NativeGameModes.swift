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
    /// Where a turn-based game commits its moves.
    var storage: WorldStore
}

/// One game mode a native client can create or queue for.
struct NativeGameMode {
    /// The name clients use.
    var name: String
    /// The sizes a match of this mode may have.
    var capacities: ClosedRange<Int>
    /// The size taken when the client asks for 0.
    var defaultCapacity: Int
    /// The server's options that bound `capacities`, for the refusal of another size.
    var capacityOptions = "--max-players"
    /// Creates and starts a match.
    var make: (MatchSetup) -> any HostedMatch
    /// Continues a stored turn-based game from its state (after a restart), seats not yet
    /// taken; nil for modes that are not stored turn by turn.
    var restore: ((MatchSetup, [UInt8]) throws -> any HostedMatch)?
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
    /// - Parameters:
    ///   - disks: what every `disks` match is created with; each gets a random seed.
    ///   - catRaceInvite: seats tutorial clients named by a START_MATCH in a native race.
    ///   - aliasOf: reads a native player's alias, for its racer in a Cat Race: answers on
    ///     the loop, or never (no such player, a failing store).
    static func builtIn(
        maxPlayers: Int, maxRacers: Int = 16, catRace: CatRaceOptions, disks: DisksGame.Options = DisksGame.Options(),
        turnTimeLimit: TimeAmount = .seconds(30), catRaceInvite: @escaping (Match<CatRaceGame>, [PlayerID]) -> Void,
        aliasOf: @escaping (PlayerID, @escaping (String) -> Void) -> Void
    ) -> NativeGameModes {
        var modes = NativeGameModes()
        let upTo = 2...max(2, maxPlayers)
        // A race on either port holds at most --max-racers.
        let races = 2...max(2, min(maxPlayers, maxRacers))
        modes.add(
            NativeGameMode(name: RelayGame.mode, capacities: upTo, defaultCapacity: upTo.upperBound) { setup in
                let match = Match(
                    id: setup.id, handler: RelayGame(options: .init()), encoders: [relayEncoder(matchID: setup.id)],
                    clock: setup.clock, gracePeriod: setup.seatGrace, capacity: setup.capacity, logger: setup.logger)
                return NativeMatch.relay(match: match, label: setup.label)
            })
        modes.add(
            NativeGameMode(name: CatRaceGame.mode, capacities: races, defaultCapacity: races.upperBound, capacityOptions: "--max-players, --max-racers") { setup in
                let match = Match(
                    id: setup.id, handler: CatRaceGame(options: catRace),
                    // Tutorial clients may race here too (see catRaceInvite), in their own encoding.
                    encoders: [catRaceNativeEncoder(matchID: setup.id), catRaceFrameEncoder],
                    clock: setup.clock, gracePeriod: setup.seatGrace, capacity: setup.capacity, logger: setup.logger)
                let hosted = NativeMatch.catRace(match: match, label: setup.label, invite: catRaceInvite, aliasOf: aliasOf)
                let tally = CatRaceTally()
                match.handler.onRaceWon = { [unowned match, unowned hosted] seat, announce in
                    tally.raceWon(by: match.seats[seat].player)
                    guard let onStanding = hosted.onStanding, let standing = tally.standing(in: match) else { return announce() }
                    onStanding(hosted, standing, announce)
                }
                hosted.storageKind = .realTime
                hosted.storeEnding = tally.ending
                return hosted
            })
        modes.add(
            NativeGameMode(name: DisksGame.mode, capacities: upTo, defaultCapacity: min(4, upTo.upperBound)) { setup in
                var options = disks
                options.seed = UInt64.random(in: 0...UInt64.max)
                // A smaller match than the configured minimum starts when it is full.
                options.minimumPlayers = min(disks.minimumPlayers, setup.capacity)
                let match = Match(
                    id: setup.id, handler: DisksGame(options: options),
                    encoders: [matchEventEncoder(matchID: setup.id) { (event: DisksServerMessage, body) in event.encode(into: &body) }],
                    clock: setup.clock, gracePeriod: setup.seatGrace, capacity: setup.capacity, logger: setup.logger)
                let hosted = NativeMatch(
                    match: match, mode: DisksGame.mode, label: setup.label, dataInput: nil,
                    decodeInput: { try DisksClientMessage(body: $0) })
                hosted.storageKind = .realTime
                hosted.storeEnding = StoredResults.disks
                return hosted
            })
        modes.add(
            NativeGameMode(
                name: FourInARowGame.mode, capacities: 2...2, defaultCapacity: 2,
                make: { setup in fourInARow(setup, turnTimeLimit: turnTimeLimit, restoredState: nil) },
                restore: { setup, bytes in
                    let state = try FourInARowState(bytes: ByteBuffer(bytes: bytes))
                    return fourInARow(setup, turnTimeLimit: turnTimeLimit, restoredState: state)
                }))
        return modes
    }
}

/// A Four in a Row match, new or continuing a stored game; every move is committed to storage
/// before it is acknowledged.
private func fourInARow(_ setup: MatchSetup, turnTimeLimit: TimeAmount, restoredState: FourInARowState?) -> any HostedMatch {
    let options = FourInARowOptions(
        turnTimeLimit: turnTimeLimit, journal: StoreTurnJournal(storage: setup.storage), restoredState: restoredState)
    let match = Match(
        id: setup.id, handler: FourInARowGame(options: options),
        encoders: [matchEventEncoder(matchID: setup.id) { (event: FourInARowServerMessage, body) in event.encode(into: &body) }],
        clock: setup.clock, gracePeriod: setup.seatGrace, capacity: setup.capacity, logger: setup.logger)
    let hosted = NativeMatch(
        match: match, mode: FourInARowGame.mode, label: setup.label, dataInput: nil,
        decodeInput: { try FourInARowClientMessage(body: $0) })
    hosted.storageKind = .turnBased
    hosted.storeEnding = StoredResults.fourInARow
    hosted.turnState = { match in
        match.handler.state.phase == .waiting ? nil : Array(match.handler.state.encoded().readableBytesView)
    }
    return hosted
}

/// The native encoding of a game's events: `MATCH_EVENT` whose `bytes` are the event's body.
func matchEventEncoder<Event>(matchID: MatchID, body: @escaping (Event, inout ByteBuffer) -> Void) -> EventEncoder<Event> {
    EventEncoder(encoding: .native) { event, buffer in
        buffer.writeWireByte(NativeMessageType.matchEvent.rawValue)
        buffer.writeNativeUInt64(matchID)
        // The `bytes` count is a 4-byte length prefix: exactly a frame around the body.
        buffer.writeFrame { body(event, &$0) }
    }
}
