import MatchHostCore
import MatchHostStoreTesting

/// Holds every interim result (a Cat Race race's standing) until `release` opens, so that a
/// test sees what the server does while one is being written; `reached` opens when the first
/// arrives.
struct HeldInterimStore: ForwardingGameStore {
    let memory = InMemoryGameStore()
    var inner: any GameStore { self.memory }
    let reached = Gate()
    let release = Gate()

    func recordInterimResult(matchID: MatchID, result: MatchResultRecord) async throws {
        await self.reached.open()
        await self.release.wait()
        try await self.inner.recordInterimResult(matchID: matchID, result: result)
    }
}
