import MatchHostCore
import Testing

@Suite("Storage: players and devices")
struct PlayerStorageTests {
    @Test(arguments: StoreKind.allCases)
    func createPlayerWithDeviceStoresBoth(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithDevice(id: "p1", alias: "Ann", deviceID: "dev-1", secretHash: [1, 2, 3], createdAt: 1_000)

            #expect(try await store.player(id: "p1") == PlayerRecord(id: "p1", alias: "Ann", createdAt: 1_000, lastSeenAt: 1_000))
            #expect(try await store.deviceIdentity(deviceID: "dev-1") == DeviceIdentityRecord(deviceID: "dev-1", playerID: "p1", secretHash: [1, 2, 3], linkedAt: 1_000))
            #expect(try await store.player(id: "p2") == nil)
            #expect(try await store.deviceIdentity(deviceID: "dev-2") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aTakenDeviceLeavesNoNewPlayerBehind(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithDevice(id: "p1", alias: "Ann", deviceID: "dev-1", secretHash: [1], createdAt: 1_000)

            await #expect(throws: GameStoreError.deviceExists(deviceID: "dev-1")) {
                try await store.createPlayerWithDevice(id: "p2", alias: "Bob", deviceID: "dev-1", secretHash: [2], createdAt: 2_000)
            }
            #expect(try await store.player(id: "p2") == nil, "the player insert must roll back with the device's")
            #expect(try await store.deviceIdentity(deviceID: "dev-1")?.playerID == "p1")

            await #expect(throws: GameStoreError.playerExists("p1")) {
                try await store.createPlayerWithDevice(id: "p1", alias: "Ann", deviceID: "dev-9", secretHash: [9], createdAt: 3_000)
            }
            #expect(try await store.deviceIdentity(deviceID: "dev-9") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func linkCodesAreReplacedClaimedOnceAndForgotten(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithDevice(id: "p1", alias: "Ann", deviceID: "phone", secretHash: [1], createdAt: 1_000)
            try await store.createPlayerWithDevice(id: "p2", alias: "Bob", deviceID: "bob-phone", secretHash: [2], createdAt: 1_000)
            await #expect(throws: GameStoreError.unknownPlayer("nobody")) {
                try await store.putLinkCode(LinkCodeRecord(playerID: "nobody", digest: [9], expiresAt: 5_000), at: 1_000)
            }

            // A new code replaces the player's last; each player holds one.
            try await store.putLinkCode(LinkCodeRecord(playerID: "p1", digest: [1, 1], expiresAt: 5_000), at: 1_000)
            try await store.putLinkCode(LinkCodeRecord(playerID: "p1", digest: [1, 2], expiresAt: 6_000), at: 2_000)
            try await store.putLinkCode(LinkCodeRecord(playerID: "p2", digest: [2, 1], expiresAt: 3_000), at: 2_000)
            #expect(
                try await store.linkCodes(validAt: 2_000) == [
                    LinkCodeRecord(playerID: "p1", digest: [1, 2], expiresAt: 6_000),
                    LinkCodeRecord(playerID: "p2", digest: [2, 1], expiresAt: 3_000),
                ])
            #expect(try await store.linkCodes(validAt: 3_000).map(\.playerID) == ["p1"], "expired at 3,000")

            // The first claim stays; a claim of a code no longer stored changes nothing.
            try await store.claimLinkCode(digest: [1, 2], by: "tablet")
            try await store.claimLinkCode(digest: [1, 2], by: "thief")
            try await store.claimLinkCode(digest: [1, 1], by: "thief")
            #expect(try await store.linkCodes(validAt: 2_000).first == LinkCodeRecord(playerID: "p1", digest: [1, 2], expiresAt: 6_000, claimedBy: "tablet"))

            // Storing a code forgets the expired ones.
            try await store.putLinkCode(LinkCodeRecord(playerID: "p1", digest: [1, 3], expiresAt: 9_000), at: 4_000)
            #expect(try await store.linkCodes(validAt: 0) == [LinkCodeRecord(playerID: "p1", digest: [1, 3], expiresAt: 9_000)])
            try await store.putLinkCode(LinkCodeRecord(playerID: "p2", digest: [2, 2], expiresAt: 9_000), at: 4_500)
            try await store.forgetLinkCode(playerID: "p1")
            try await store.forgetLinkCode(playerID: "nobody")
            #expect(try await store.linkCodes(validAt: 5_000).map(\.playerID) == ["p2"])

            // A committed unlink forgets the player's code in its own transaction.
            try await store.putLinkCode(LinkCodeRecord(playerID: "p1", digest: [1, 4], expiresAt: 9_000), at: 5_000)
            try await store.addDeviceIdentity(deviceID: "tablet", secretHash: [3], playerID: "p1", linkedAt: 5_000, maximumDevices: 10)
            _ = try await store.removeDeviceIdentity(deviceID: "tablet", playerID: "p1", at: 5_500)
            #expect(try await store.linkCodes(validAt: 5_500).map(\.playerID) == ["p2"])
            _ = try await store.removeAllDeviceIdentities(playerID: "p2", at: 5_500)
            #expect(try await store.linkCodes(validAt: 5_500).isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aliasesAndLastSeen(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayer(id: "p1", alias: "Ann", createdAt: 1_000)
            await #expect(throws: GameStoreError.playerExists("p1")) {
                try await store.createPlayer(id: "p1", alias: "Other", createdAt: 5_000)
            }

            try await store.setAlias(playerID: "p1", alias: "Annie")
            try await store.touch(playerID: "p1", at: 9_000)
            try await store.touch(playerID: "p1", at: 4_000)  // overtaken: ignored

            #expect(try await store.player(id: "p1") == PlayerRecord(id: "p1", alias: "Annie", createdAt: 1_000, lastSeenAt: 9_000))
            await #expect(throws: GameStoreError.unknownPlayer("nobody")) { try await store.setAlias(playerID: "nobody", alias: "X") }
            await #expect(throws: GameStoreError.unknownPlayer("nobody")) { try await store.touch(playerID: "nobody", at: 1) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aliasesAreReadManyAtOnce(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayer(id: "p1", alias: "Ann", createdAt: 1_000)
            try await store.createPlayer(id: "p2", alias: "Bob", createdAt: 1_000)
            try await store.createPlayer(id: "p3", alias: "Cy", createdAt: 1_000)
            try await store.setAlias(playerID: "p2", alias: "Bobby")

            #expect(try await store.aliases(playerIDs: ["p2", "nobody", "p1", "p2"]) == ["p1": "Ann", "p2": "Bobby"])
            #expect(try await store.aliases(playerIDs: []) == [:])
            #expect(try await store.aliases(playerIDs: (0..<100).map { "x\($0)" } + ["p3"]) == ["p3": "Cy"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theOperatorsLockRefusesThePlayersOwnAliasUntilUnlocked(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayer(id: "p1", alias: "Ann", createdAt: 1_000)
            try await store.createPlayerWithExternalIdentity(id: "p2", alias: "Cat", identity: .catRaceTutorial("cat"), createdAt: 1_000)

            // A rename alone leaves the player free to choose again.
            #expect(try await store.setAliasByOperator(playerID: "p1", alias: "Player 1", locked: nil).aliasLocked == false)
            try await store.setAlias(playerID: "p1", alias: "Ann again")
            // The lock alone keeps the alias; with it, the player's own change is refused.
            let locked = try await store.setAliasByOperator(playerID: "p1", alias: nil, locked: true)
            #expect(locked == PlayerRecord(id: "p1", alias: "Ann again", createdAt: 1_000, lastSeenAt: 1_000, aliasLocked: true))
            await #expect(throws: GameStoreError.aliasLocked("p1")) { try await store.setAlias(playerID: "p1", alias: "Nope") }
            // The operator still renames a locked player, and the lock stays.
            #expect(try await store.setAliasByOperator(playerID: "p1", alias: "Player 1", locked: nil).aliasLocked)
            #expect(try await store.player(id: "p1") == PlayerRecord(id: "p1", alias: "Player 1", createdAt: 1_000, lastSeenAt: 1_000, aliasLocked: true))
            // Another player is not touched; an identity's read carries its lock too.
            #expect(try await store.player(id: "p2")?.aliasLocked == false)
            _ = try await store.setAliasByOperator(playerID: "p2", alias: "Player 2", locked: true)
            #expect(try await store.player(externalIdentity: .catRaceTutorial("cat"))?.aliasLocked == true)
            // A tutorial client sends its alias each time it connects: a locked one stays.
            let claimed = try await store.findOrCreatePlayers(
                [ExternalIdentityClaim(identity: .catRaceTutorial("cat"), newPlayerID: "unused", alias: "Rude Cat")], at: 5_000)
            #expect(claimed.map(\.alias) == ["Player 2"])
            #expect(try await store.player(id: "p2")?.alias == "Player 2")
            #expect(try await store.player(id: "p2")?.lastSeenAt == 5_000)

            let unlocked = try await store.setAliasByOperator(playerID: "p1", alias: nil, locked: false)
            #expect(unlocked.alias == "Player 1" && !unlocked.aliasLocked)
            try await store.setAlias(playerID: "p1", alias: "Ann at last")
            #expect(try await store.player(id: "p1")?.alias == "Ann at last")
            await #expect(throws: GameStoreError.unknownPlayer("nobody")) {
                try await store.setAliasByOperator(playerID: "nobody", alias: nil, locked: true)
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func bansAreSetReplacedAndLifted(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayer(id: "p1", alias: "Ann", createdAt: 1_000)
            try await store.createPlayer(id: "p2", alias: "Bob", createdAt: 1_000)
            #expect(try await store.bannedPlayers().isEmpty)

            try await store.setBan(playerID: "p1", ban: PlayerBan(reason: "cheating", since: 5_000), at: 5_000)
            #expect(try await store.player(id: "p1")?.ban == PlayerBan(reason: "cheating", since: 5_000))
            #expect(try await store.player(id: "p2")?.ban == nil)
            try await store.setBan(playerID: "p2", ban: PlayerBan(reason: "", since: 6_000), at: 6_000)
            // A timed ban replaces the lasting one, and keeps its end.
            try await store.setBan(playerID: "p1", ban: PlayerBan(reason: "abuse in chat", since: 7_000, until: 90_000), at: 7_000)
            #expect(
                try await store.bannedPlayers() == [
                    "p1": PlayerBan(reason: "abuse in chat", since: 7_000, until: 90_000), "p2": PlayerBan(reason: "", since: 6_000),
                ])
            #expect(try await store.player(id: "p1")?.ban?.until == 90_000)

            try await store.setBan(playerID: "p1", ban: nil, at: 8_000)
            #expect(try await store.player(id: "p1") == PlayerRecord(id: "p1", alias: "Ann", createdAt: 1_000, lastSeenAt: 1_000))
            #expect(try await store.bannedPlayers() == ["p2": PlayerBan(reason: "", since: 6_000)])
            // Lifting a ban the player does not have changes nothing.
            try await store.setBan(playerID: "p1", ban: nil, at: 9_000)
            await #expect(throws: GameStoreError.unknownPlayer("nobody")) {
                try await store.setBan(playerID: "nobody", ban: PlayerBan(reason: "x", since: 1), at: 1)
            }
            #expect(try await store.bannedPlayers().count == 1)

            // The record keeps both of p1's bans, and how each ended.
            let p1Bans = [
                PlayerBanRecord(playerID: "p1", ban: PlayerBan(reason: "abuse in chat", since: 7_000, until: 90_000), endedEarly: .lifted(at: 8_000)),
                PlayerBanRecord(playerID: "p1", ban: PlayerBan(reason: "cheating", since: 5_000), endedEarly: .replaced(at: 7_000)),
            ]
            #expect(try await store.banRecords(playerID: "p1", limit: 10) == p1Bans)
            let p2Ban = PlayerBanRecord(playerID: "p2", ban: PlayerBan(reason: "", since: 6_000))
            #expect(try await store.banRecords(playerID: nil, limit: 10) == [p1Bans[0], p2Ban, p1Bans[1]])
            #expect(try await store.banRecords(playerID: nil, limit: 2) == [p1Bans[0], p2Ban])
            #expect(try await store.banRecords(playerID: "nobody", limit: 10).isEmpty)
        }
    }

    /// A ban that ran out ended by itself: a later ban or lift does not mark it, as it
    /// refused nothing by then; one still in force is marked.
    @Test(arguments: StoreKind.allCases)
    func aBanThatRanOutIsNotMarkedByALaterOne(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayer(id: "p1", alias: "Ann", createdAt: 1_000)
            try await store.setBan(playerID: "p1", ban: PlayerBan(reason: "spam", since: 2_000, until: 3_000), at: 2_000)
            try await store.setBan(playerID: "p1", ban: PlayerBan(reason: "spam again", since: 4_000, until: 9_000), at: 4_000)
            // At the instant a ban ends it no longer refuses: the lift does not mark it.
            try await store.setBan(playerID: "p1", ban: nil, at: 9_000)
            let records = try await store.banRecords(playerID: "p1", limit: 10)
            #expect(
                records == [
                    PlayerBanRecord(playerID: "p1", ban: PlayerBan(reason: "spam again", since: 4_000, until: 9_000)),
                    PlayerBanRecord(playerID: "p1", ban: PlayerBan(reason: "spam", since: 2_000, until: 3_000)),
                ])
            #expect(records.allSatisfy { !$0.isInForce(at: 9_000) })
            #expect(records[0].isInForce(at: 8_999))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func moreDevicesForOnePlayer(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithDevice(id: "p1", alias: "Ann", deviceID: "phone", secretHash: [1], createdAt: 1_000)
            try await store.addDeviceIdentity(deviceID: "tablet", secretHash: [2, 2], playerID: "p1", linkedAt: 5_000, maximumDevices: 2)

            let tablet = DeviceIdentityRecord(deviceID: "tablet", playerID: "p1", secretHash: [2, 2], linkedAt: 5_000)
            #expect(try await store.deviceIdentity(deviceID: "tablet") == tablet)
            await #expect(throws: GameStoreError.deviceExists(deviceID: "phone")) {
                try await store.addDeviceIdentity(deviceID: "phone", secretHash: [3], playerID: "p1", linkedAt: 6_000, maximumDevices: 5)
            }
            await #expect(throws: GameStoreError.unknownPlayer("p9")) {
                try await store.addDeviceIdentity(deviceID: "laptop", secretHash: [4], playerID: "p9", linkedAt: 6_000, maximumDevices: 5)
            }
            await #expect(throws: GameStoreError.tooManyDevices("p1", limit: 2)) {
                try await store.addDeviceIdentity(deviceID: "laptop", secretHash: [4], playerID: "p1", linkedAt: 6_000, maximumDevices: 2)
            }
            #expect(try await store.deviceIdentity(deviceID: "phone")?.secretHash == [1])
            #expect(try await store.deviceIdentity(deviceID: "laptop") == nil)
            #expect(try await store.devices(playerID: "p1").map(\.deviceID) == ["phone", "tablet"])
            #expect(try await store.devices(playerID: "p9").isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func devicesAreListedInLinkOrder(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithDevice(id: "p1", alias: "Ann", deviceID: "m-phone", secretHash: [1], createdAt: 1_000)
            try await store.createPlayerWithDevice(id: "p2", alias: "Bob", deviceID: "bob", secretHash: [9], createdAt: 500)
            for (device, at) in [("z-laptop", 2_000), ("b-tablet", 3_000), ("a-watch", 3_000)] {
                try await store.addDeviceIdentity(
                    deviceID: device, secretHash: [2], playerID: "p1", linkedAt: UnixMillis(milliseconds: Int64(at)), maximumDevices: 10)
            }
            // Oldest link first; a tie goes by device id.
            #expect(try await store.devices(playerID: "p1").map(\.deviceID) == ["m-phone", "z-laptop", "a-watch", "b-tablet"])
            #expect(try await store.devices(playerID: "p1").map(\.linkedAt) == [1_000, 2_000, 3_000, 3_000])
            #expect(try await store.devices(playerID: "p2").map(\.deviceID) == ["bob"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func removingADeviceRevokesThePlayersTokens(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithDevice(id: "p1", alias: "Ann", deviceID: "phone", secretHash: [1], createdAt: 1_000)
            try await store.createPlayerWithDevice(id: "p2", alias: "Bob", deviceID: "bob", secretHash: [9], createdAt: 1_000)
            try await store.addDeviceIdentity(deviceID: "tablet", secretHash: [2], playerID: "p1", linkedAt: 2_000, maximumDevices: 10)
            try await store.addDeviceIdentity(deviceID: "laptop", secretHash: [3], playerID: "p1", linkedAt: 3_000, maximumDevices: 10)
            #expect(try await store.tokenGenerations().isEmpty)

            #expect(try await store.removeDeviceIdentity(deviceID: "tablet", playerID: "p1", at: 4_000) == 1)
            #expect(try await store.deviceIdentity(deviceID: "tablet") == nil)
            #expect(try await store.tokenGenerations() == ["p1": 1])
            #expect(try await store.removeDeviceIdentity(deviceID: "phone", playerID: "p1", at: 5_000) == 2)
            #expect(try await store.tokenGenerations() == ["p1": 2])
            #expect(try await store.devices(playerID: "p1").map(\.deviceID) == ["laptop"])

            // Another player's device, one removed already, one never stored: the same refusal,
            // and nothing changes.
            for device in ["bob", "tablet", "nowhere"] {
                await #expect(throws: GameStoreError.unknownDevice(deviceID: device)) {
                    try await store.removeDeviceIdentity(deviceID: device, playerID: "p1", at: 6_000)
                }
            }
            await #expect(throws: GameStoreError.lastDevice("p1")) {
                try await store.removeDeviceIdentity(deviceID: "laptop", playerID: "p1", at: 6_000)
            }
            #expect(try await store.devices(playerID: "p1").map(\.deviceID) == ["laptop"])
            #expect(try await store.devices(playerID: "p2").map(\.deviceID) == ["bob"])
            #expect(try await store.tokenGenerations() == ["p1": 2])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func removingEveryDeviceOfAPlayerRevokesItsTokensAndRemembersEachDevice(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithDevice(id: "p1", alias: "Ann", deviceID: "phone", secretHash: [1], createdAt: 1_000)
            try await store.addDeviceIdentity(deviceID: "Tablet", secretHash: [2], playerID: "p1", linkedAt: 2_000, maximumDevices: 10)
            try await store.addDeviceIdentity(deviceID: "laptop", secretHash: [3], playerID: "p1", linkedAt: 3_000, maximumDevices: 10)
            try await store.createPlayerWithDevice(id: "p2", alias: "Bob", deviceID: "bob", secretHash: [4], createdAt: 1_000)
            _ = try await store.removeDeviceIdentity(deviceID: "laptop", playerID: "p1", at: 3_500)

            // In byte order: capitals first.
            let reset = try await store.removeAllDeviceIdentities(playerID: "p1", at: 4_000)
            #expect(reset.generation == 2)
            #expect(reset.removed == ["Tablet", "phone"])
            #expect(try await store.devices(playerID: "p1").isEmpty)
            #expect(try await store.tokenGenerations() == ["p1": 2])
            #expect(try await store.devices(playerID: "p2").map(\.deviceID) == ["bob"], "another player's are left")
            for device in ["Tablet", "phone"] {
                await #expect(throws: GameStoreError.deviceUnlinked(deviceID: device)) {
                    try await store.createPlayerWithDevice(id: "p3", alias: "Cy", deviceID: device, secretHash: [9], createdAt: 5_000)
                }
            }
            // The player is still there; a code links a device to it again.
            #expect(try await store.player(id: "p1")?.alias == "Ann")
            try await store.addDeviceIdentity(deviceID: "phone", secretHash: [5], playerID: "p1", linkedAt: 6_000, maximumDevices: 10)
            #expect(try await store.devices(playerID: "p1").map(\.deviceID) == ["phone"])

            // With no device, the tokens are revoked all the same; no player, no change.
            _ = try await store.removeAllDeviceIdentities(playerID: "p1", at: 7_000)
            #expect(try await store.removeAllDeviceIdentities(playerID: "p1", at: 8_000) == (4, []))
            await #expect(throws: GameStoreError.unknownPlayer("nobody")) {
                _ = try await store.removeAllDeviceIdentities(playerID: "nobody", at: 8_000)
            }
            #expect(try await store.tokenGenerations() == ["p1": 4])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anUnlinkedDeviceIsNotANewPlayerButMayBeLinkedAgain(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithDevice(id: "p1", alias: "Ann", deviceID: "phone", secretHash: [1], createdAt: 1_000)
            try await store.addDeviceIdentity(deviceID: "tablet", secretHash: [2], playerID: "p1", linkedAt: 2_000, maximumDevices: 10)
            _ = try await store.removeDeviceIdentity(deviceID: "tablet", playerID: "p1", at: 3_000)

            await #expect(throws: GameStoreError.deviceUnlinked(deviceID: "tablet")) {
                try await store.createPlayerWithDevice(id: "p2", alias: "Bob", deviceID: "tablet", secretHash: [2], createdAt: 4_000)
            }
            #expect(try await store.player(id: "p2") == nil, "refused whole")
            try await store.addDeviceIdentity(deviceID: "tablet", secretHash: [3], playerID: "p1", linkedAt: 5_000, maximumDevices: 10)
            #expect(try await store.deviceIdentity(deviceID: "tablet")?.secretHash == [3])
            // Linked again, then removed again: a new player may not take it either.
            _ = try await store.removeDeviceIdentity(deviceID: "tablet", playerID: "p1", at: 6_000)
            await #expect(throws: GameStoreError.deviceUnlinked(deviceID: "tablet")) {
                try await store.createPlayerWithDevice(id: "p2", alias: "Bob", deviceID: "tablet", secretHash: [2], createdAt: 7_000)
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aPlayersLatestUnlinkedDevicesAreRemembered(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createPlayerWithDevice(id: "p1", alias: "Ann", deviceID: "phone", secretHash: [1], createdAt: 0)
            let kept = DeviceIdentityRecord.unlinkedKeptPerPlayer
            for number in 0...kept {
                let device = "old-\(number)"
                try await store.addDeviceIdentity(deviceID: device, secretHash: [2], playerID: "p1", linkedAt: 1, maximumDevices: 10)
                _ = try await store.removeDeviceIdentity(deviceID: device, playerID: "p1", at: UnixMillis(milliseconds: Int64(10 + number)))
            }
            // The oldest was forgotten: its id is a new device again. The others are not.
            try await store.createPlayerWithDevice(id: "p2", alias: "Bob", deviceID: "old-0", secretHash: [9], createdAt: 1_000)
            await #expect(throws: GameStoreError.deviceUnlinked(deviceID: "old-1")) {
                try await store.createPlayerWithDevice(id: "p3", alias: "Cy", deviceID: "old-1", secretHash: [9], createdAt: 1_000)
            }
            await #expect(throws: GameStoreError.deviceUnlinked(deviceID: "old-\(kept)")) {
                try await store.createPlayerWithDevice(id: "p3", alias: "Cy", deviceID: "old-\(kept)", secretHash: [9], createdAt: 1_000)
            }
        }
    }
}
