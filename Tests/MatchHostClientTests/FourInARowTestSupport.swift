import MatchHostClient
import MatchHostWire
import NIOCore

extension MatchHostClient.Event {
    /// The Four in a Row event this is, in `matchID`.
    func fourInARow(in matchID: MatchIdentifier) -> FourInARowServerMessage? {
        guard case .matchEvent(matchID, let body, _) = self else { return nil }
        return try? FourInARowServerMessage(body: body)
    }
}

/// Plays move `number` into `column` for `client` and waits until `events` show it acknowledged.
func play(
    _ number: UInt16, column: UInt8, by client: MatchHostClient, events: Recorder<MatchHostClient.Event>, in matchID: MatchIdentifier
) async throws {
    try await client.sendInput(FourInARowClientMessage.move(FourInARowMove(moveNumber: number, column: column)).encoded(), in: matchID)
    _ = try await events.next("MOVED \(number)") { event in
        if case .moved(let moved)? = event.fourInARow(in: matchID) { return moved.moveNumber == number }
        return false
    }
}

/// Plays a whole game in which `winner` (seat 0) stacks column 0 and `loser` column 1; returns
/// the match id once both have seen it end.
func playQuickWin(
    _ winner: MatchHostClient, _ winnerEvents: Recorder<MatchHostClient.Event>,
    over loser: MatchHostClient, _ loserEvents: Recorder<MatchHostClient.Event>,
    isPrivate: Bool = false
) async throws -> MatchIdentifier {
    let created = try await winner.createMatch(mode: "fourinarow", isPrivate: isPrivate)
    let match = created.matchID
    if isPrivate {
        _ = try await loser.joinMatch(code: created.inviteCode)
    } else {
        _ = try await loser.joinMatch(match)
    }
    for number in UInt16(1)...7 {
        let seat0 = number % 2 == 1
        try await play(
            number, column: seat0 ? 0 : 1, by: seat0 ? winner : loser, events: seat0 ? winnerEvents : loserEvents, in: match)
    }
    for events in [winnerEvents, loserEvents] {
        _ = try await events.next("MATCH_ENDED") { if case .matchEnded(match, _) = $0 { true } else { false } }
    }
    return match
}
