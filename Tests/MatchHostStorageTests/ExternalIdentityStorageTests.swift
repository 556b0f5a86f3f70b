import MatchHostCore
import Testing

@Suite("Storage: players known by an external identity")
struct ExternalIdentityStorageTests {
    private let tutorial = ExternalIdentity.catRaceTutorial("G:1036727375")

    @Test(arguments: StoreKind.allCases)
    func createPlayerWithExternalIdentityStoresBoth(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithExternalIdentity(id: "p1", alias: "Abby", identity: self.tutorial, createdAt: 1_000)

            let expected = PlayerRecord(id: "p1", alias: "Abby", createdAt: 1_000, lastSeenAt: 1_000)
            #expect(try await store.player(externalIdentity: self.tutorial) == expected)
            #expect(try await store.player(id: "p1") == expected)
            #expect(try await store.player(externalIdentity: .catRaceTutorial("G:2")) == nil)
            // The same id under another kind is another identity.
            let other = ExternalIdentity(kind: ExternalIdentityKind(rawValue: "other"), externalID: "G:1036727375")
            #expect(try await store.player(externalIdentity: other) == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aTakenIdentityLeavesNoNewPlayerBehind(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithExternalIdentity(id: "p1", alias: "Abby", identity: self.tutorial, createdAt: 1_000)

            await #expect(throws: GameStoreError.externalIdentityExists(self.tutorial)) {
                try await store.createPlayerWithExternalIdentity(id: "p2", alias: "Zed", identity: self.tutorial, createdAt: 2_000)
            }
            #expect(try await store.player(id: "p2") == nil, "the player insert must roll back with the identity's")
            #expect(try await store.player(externalIdentity: self.tutorial)?.id == "p1")

            let fresh = ExternalIdentity.catRaceTutorial("G:new")
            await #expect(throws: GameStoreError.playerExists("p1")) {
                try await store.createPlayerWithExternalIdentity(id: "p1", alias: "Other", identity: fresh, createdAt: 3_000)
            }
            #expect(try await store.player(externalIdentity: fresh) == nil)
            #expect(try await store.player(id: "p1")?.alias == "Abby")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anExternalIdentityIsNeverADevice(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithExternalIdentity(id: "p1", alias: "Abby", identity: self.tutorial, createdAt: 1_000)
            #expect(try await store.deviceIdentity(deviceID: self.tutorial.externalID) == nil)

            // A device whose id is the same string belongs to a player of its own.
            try await store.createPlayerWithDevice(
                id: "p2", alias: "Dev", deviceID: self.tutorial.externalID, secretHash: [1], createdAt: 2_000)
            #expect(try await store.deviceIdentity(deviceID: self.tutorial.externalID)?.playerID == "p2")
            #expect(try await store.player(externalIdentity: self.tutorial)?.id == "p1")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theIdentityFollowsItsPlayersChanges(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithExternalIdentity(id: "p1", alias: "Abby", identity: self.tutorial, createdAt: 1_000)
            try await store.setAlias(playerID: "p1", alias: "Abigail")
            try await store.touch(playerID: "p1", at: 5_000)

            #expect(
                try await store.player(externalIdentity: self.tutorial)
                    == PlayerRecord(id: "p1", alias: "Abigail", createdAt: 1_000, lastSeenAt: 5_000))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func findOrCreateFindsTheKnownAndCreatesTheNewInOneCall(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithExternalIdentity(id: "p1", alias: "Abby", identity: self.tutorial, createdAt: 1_000)
            let bo = ExternalIdentity.catRaceTutorial("G:bo")

            let found = try await store.findOrCreatePlayers(
                [
                    ExternalIdentityClaim(identity: self.tutorial, newPlayerID: "unused", alias: "Zed"),
                    ExternalIdentityClaim(identity: bo, newPlayerID: "p2", alias: "Bo"),
                    ExternalIdentityClaim(identity: bo, newPlayerID: "p3", alias: "Bo again"),
                ], at: 5_000)

            #expect(
                found == [
                    PlayerRecord(id: "p1", alias: "Zed", createdAt: 1_000, lastSeenAt: 5_000),
                    PlayerRecord(id: "p2", alias: "Bo", createdAt: 5_000, lastSeenAt: 5_000),
                    PlayerRecord(id: "p2", alias: "Bo again", createdAt: 5_000, lastSeenAt: 5_000),
                ])
            // A known player takes the claim's alias; an identity claimed twice, the last one's.
            #expect(try await store.player(externalIdentity: self.tutorial) == PlayerRecord(id: "p1", alias: "Zed", createdAt: 1_000, lastSeenAt: 5_000))
            #expect(try await store.player(id: "p2")?.alias == "Bo again")
            #expect(try await store.player(externalIdentity: bo)?.id == "p2")
            #expect(try await store.player(id: "unused") == nil)
            #expect(try await store.player(id: "p3") == nil)
            // A later call finds Bo too, and an earlier time does not move last seen back.
            let again = try await store.findOrCreatePlayers([ExternalIdentityClaim(identity: bo, newPlayerID: "p4", alias: "X")], at: 4_000)
            #expect(again == [PlayerRecord(id: "p2", alias: "X", createdAt: 5_000, lastSeenAt: 5_000)])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aTakenNewIDRefusesTheWholeCall(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayer(id: "taken", alias: "Someone", createdAt: 1_000)
            let first = ExternalIdentity.catRaceTutorial("G:first")
            let second = ExternalIdentity.catRaceTutorial("G:second")

            await #expect(throws: GameStoreError.playerExists("taken")) {
                try await store.findOrCreatePlayers(
                    [
                        ExternalIdentityClaim(identity: first, newPlayerID: "fresh", alias: "First"),
                        ExternalIdentityClaim(identity: second, newPlayerID: "taken", alias: "Second"),
                    ], at: 2_000)
            }
            #expect(try await store.player(externalIdentity: first) == nil, "the whole call rolls back")
            #expect(try await store.player(id: "fresh") == nil)
            #expect(try await store.player(id: "taken")?.alias == "Someone")
        }
    }
}
