import Logging
import MatchHostCore
@testable import MatchHostServer
import MatchHostStoreTesting
import NIOCore
import NIOPosix
import Testing

@Suite struct CatRaceIdentityLookupTests {
    /// Holds the first batch of claims until `release` opens; `reached` opens when it arrives.
    private struct HeldClaimsStore: ForwardingGameStore {
        let memory = InMemoryGameStore()
        var inner: any GameStore { self.memory }
        let reached = Gate()
        let release = Gate()

        func findOrCreatePlayers(_ claims: [ExternalIdentityClaim], at: UnixMillis) async throws -> [PlayerRecord] {
            await self.reached.open()
            await self.release.wait()
            return try await self.inner.findOrCreatePlayers(claims, at: at)
        }
    }

    /// Connections claiming one tutorial id while its lookup is in flight: those under the
    /// same alias share it; one under another alias is looked up after it, so that its alias
    /// is the one stored and the one it is answered with, as if it had come later.
    @Test func aClaimUnderAnotherAliasDuringTheLookupIsStoredAndAnsweredAfterIt() async throws {
        let store = HeldClaimsStore()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let (answers, answered) = AsyncStream.makeStream(of: String.self)
        try await loop.submit {
            let storage = CatRaceStorage(
                storage: WorldStore(store: store, eventLoop: loop, clock: ManualClock(), logger: Logger(label: "test")),
                registrations: .newPlayers(perMinute: 100))
            for alias in ["Ann", "Ann", "Anna"] {
                storage.identify("G:ann", alias: alias, from: "127.0.0.1") { result in
                    answered.yield((try? result.get().alias) ?? "failed")
                }
            }
            // Kept alive by the lookups' completions until they are answered.
            _ = storage
        }.get()
        await store.reached.wait()
        await store.release.open()

        var heard: [String] = []
        for await alias in answers {
            heard.append(alias)
            if heard.count == 3 { break }
        }
        #expect(heard == ["Ann", "Ann", "Anna"])
        #expect(try await store.inner.player(externalIdentity: .catRaceTutorial("G:ann"))?.alias == "Anna")
        try await group.shutdownGracefully()
    }
}
