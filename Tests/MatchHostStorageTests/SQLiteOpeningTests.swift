import Foundation
import MatchHostCore
@testable import MatchHostSQLite
import Testing

@Suite("SQLite store: opening, migrations and bad files")
struct SQLiteOpeningTests {
    /// Every migration of the schema, in order: what a fully migrated file has applied.
    static let everyMigration = ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12"]

    private func openError(_ path: String, options: SQLiteStoreOptions = SQLiteStoreOptions()) async -> SQLiteStoreError? {
        do {
            let store = try await SQLiteGameStore.open(path: path, options: options)
            try? await store.close()
            return nil
        } catch {
            return error as? SQLiteStoreError
        }
    }

    private func contents(_ path: String) -> Data? {
        FileManager.default.contents(atPath: path)
    }

    @Test func aMissingFileIsCreatedInNewDirectoriesAndFullyMigrated() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("data/nested/matchhost.sqlite")

        let store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.synchronousSetting() == 2, "FULL by default")
        try await store.close()

        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)
        let normal = try await SQLiteGameStore.open(path: path, options: SQLiteStoreOptions(durability: .normal))
        #expect(try await normal.synchronousSetting() == 1)
        try await normal.close()
    }

    @Test func anEmptyFileIsMigrated() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))

        let store = try await SQLiteGameStore.open(path: path)
        try await store.createPlayer(id: "p1", alias: "Ann", createdAt: 1)
        try await store.writeValue(playerID: "p1", key: "k", value: [1])
        try await store.close()

        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)
    }

    @Test func aFileFromThePreviousSchemaIsMigratedAndKeepsItsData() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v1")
        try SQLiteSchema.execute(
            "INSERT INTO player (id, alias, created_at, last_seen_at) VALUES ('p1', 'Ann', 10, 20)", atPath: path)
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == ["v1"])

        let store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.player(id: "p1") == PlayerRecord(id: "p1", alias: "Ann", createdAt: 10, lastSeenAt: 20))
        try await store.writeValue(playerID: "p1", key: "k", value: [5])
        #expect(try await store.readValue(playerID: "p1", key: "k") == [5])
        try await store.close()

        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)
    }

    @Test func aFileFromBeforeExternalIdentitiesIsMigratedAndKeepsItsData() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v2")
        try SQLiteSchema.execute(
            """
            INSERT INTO player (id, alias, created_at, last_seen_at) VALUES ('p1', 'Ann', 10, 20);
            INSERT INTO device_identity (device_id, player_id, secret_hash) VALUES ('dev', 'p1', x'0102');
            INSERT INTO player_value (player_id, key, value) VALUES ('p1', 'k', x'05');
            """, atPath: path)
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == ["v1", "v2"])

        let store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.player(id: "p1") == PlayerRecord(id: "p1", alias: "Ann", createdAt: 10, lastSeenAt: 20))
        #expect(try await store.deviceIdentity(deviceID: "dev") == DeviceIdentityRecord(deviceID: "dev", playerID: "p1", secretHash: [1, 2], linkedAt: 10))
        #expect(try await store.readValue(playerID: "p1", key: "k") == [5])
        let tutorial = ExternalIdentity.catRaceTutorial("G:1")
        #expect(try await store.player(externalIdentity: tutorial) == nil)
        try await store.createPlayerWithExternalIdentity(id: "p2", alias: "Abby", identity: tutorial, createdAt: 30)
        #expect(try await store.player(externalIdentity: tutorial)?.id == "p2")
        try await store.close()

        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)
    }

    @Test func aFileFromBeforeMatchIDReservationsIsMigratedAndKeepsItsMatches() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v3")
        try SQLiteSchema.execute(
            "INSERT INTO game_match (id, game, mode, kind, started_at, state) VALUES (7, 'disks', '', 'real_time', 10, 'running')",
            atPath: path)

        var store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.largestMatchID() == 7)
        try await store.reserveMatchIDs(through: 1_007)
        try await store.reserveMatchIDs(through: 500)  // never lowers it
        try await store.close()
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)

        store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.largestMatchID() == 1_007)
        try await store.close()
    }

    @Test func aFileFromBeforeEndNoticesIsMigratedAndKeepsItsMatchesAndReservation() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v4")
        try SQLiteSchema.execute(
            """
            INSERT INTO game_match (id, game, mode, kind, started_at, state) VALUES (7, 'disks', '', 'real_time', 10, 'running');
            INSERT INTO match_player (match_id, seat, player_id) VALUES (7, 0, 'p');
            INSERT INTO player (id, alias, created_at, last_seen_at) VALUES ('p', 'P', 1, 1);
            INSERT INTO device_identity (device_id, player_id, secret_hash) VALUES ('device-p', 'p', x'01');
            INSERT INTO match_id_reservation (singleton, reserved_through) VALUES (1, 1007)
            """,
            atPath: path)

        var store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.largestMatchID() == 1_007)
        _ = try await store.endInterruptedMatches(at: 50, reason: "server restarted", notice: "abandoned(server restarted)")
        try await store.close()
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)

        store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.endNotices() == [MatchEndNotice(playerID: "p", matchID: 7, reason: "abandoned(server restarted)", endedAt: 50)])
        try await store.close()
    }

    @Test func aFileFromBeforeMatchPrivacyIsMigratedWithItsMatchesOpen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v5")
        try SQLiteSchema.execute(
            """
            INSERT INTO game_match (id, game, mode, kind, started_at, ended_at, state, abandon_reason)
                VALUES (7, 'disks', '', 'real_time', 10, 20, 'abandoned', 'left');
            INSERT INTO match_player (match_id, seat, player_id) VALUES (7, 0, 'p'), (7, 1, 'q');
            """,
            atPath: path)

        var store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.match(id: 7)?.isPrivate == false)
        #expect(try await store.matchHistory(playerID: "p", limit: 5, readBy: .otherPlayer("z")).map(\.id) == [7])
        try await store.recordMatchStarted(id: 8, game: "disks", mode: "", players: ["p"], startedAt: 30, isPrivate: true)
        try await store.close()
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)

        store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.match(id: 8)?.isPrivate == true)
        try await store.close()
    }

    @Test func aFileFromBeforeBansIsMigratedWithNobodyBanned() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v6")
        try SQLiteSchema.execute(
            "INSERT INTO player (id, alias, created_at, last_seen_at) VALUES ('p', 'Ann', 10, 20), ('q', 'Bob', 10, 30)", atPath: path)

        var store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.player(id: "p") == PlayerRecord(id: "p", alias: "Ann", createdAt: 10, lastSeenAt: 20))
        #expect(try await store.bannedPlayers().isEmpty)
        try await store.setBan(playerID: "q", ban: PlayerBan(reason: "cheating", since: 40), at: 40)
        try await store.close()
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)

        store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.bannedPlayers() == ["q": PlayerBan(reason: "cheating", since: 40)])
        #expect(try await store.player(id: "p")?.ban == nil)
        try await store.close()
    }

    @Test func aBanFromBeforeBanEndsIsMigratedToLastUntilLifted() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v7")
        try SQLiteSchema.execute(
            """
            INSERT INTO player (id, alias, created_at, last_seen_at, banned_at, ban_reason)
                VALUES ('p', 'Ann', 10, 20, 30, 'cheating'), ('q', 'Bob', 10, 30, NULL, NULL)
            """,
            atPath: path)

        var store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.bannedPlayers() == ["p": PlayerBan(reason: "cheating", since: 30)])
        try await store.setBan(playerID: "q", ban: PlayerBan(reason: "spam", since: 40, until: 1_000), at: 40)
        try await store.close()
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)

        store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.player(id: "q")?.ban == PlayerBan(reason: "spam", since: 40, until: 1_000))
        #expect(try await store.player(id: "p")?.ban?.until == nil)
        try await store.close()
    }

    @Test func devicesFromBeforeLinksAreMigratedAsLinkedWhenTheirPlayerWasCreated() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v8")
        try SQLiteSchema.execute(
            """
            INSERT INTO player (id, alias, created_at, last_seen_at) VALUES ('p', 'Ann', 10, 20), ('q', 'Bob', 15, 30);
            INSERT INTO device_identity (device_id, player_id, secret_hash) VALUES ('phone', 'p', x'01'), ('bob', 'q', x'02');
            """,
            atPath: path)

        var store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.devices(playerID: "p") == [DeviceIdentityRecord(deviceID: "phone", playerID: "p", secretHash: [1], linkedAt: 10)])
        #expect(try await store.deviceIdentity(deviceID: "bob")?.linkedAt == 15)
        #expect(try await store.tokenGenerations().isEmpty)
        try await store.addDeviceIdentity(deviceID: "tablet", secretHash: [3], playerID: "p", linkedAt: 40, maximumDevices: 10)
        #expect(try await store.removeDeviceIdentity(deviceID: "phone", playerID: "p", at: 50) == 1)
        try await store.close()
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)

        store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.devices(playerID: "p").map(\.deviceID) == ["tablet"])
        #expect(try await store.tokenGenerations() == ["p": 1])
        try await store.close()
    }

    @Test func bansFromBeforeBanRecordsStartTheRecord() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v9")
        try SQLiteSchema.execute(
            """
            INSERT INTO player (id, alias, created_at, last_seen_at, banned_at, ban_reason, ban_until)
                VALUES ('p', 'Ann', 10, 20, 30, 'cheating', NULL), ('q', 'Bob', 10, 30, 35, NULL, 50), ('r', 'Cy', 10, 30, NULL, NULL, NULL)
            """,
            atPath: path)

        var store = try await SQLiteGameStore.open(path: path)
        #expect(
            try await store.banRecords(playerID: nil, limit: 10) == [
                PlayerBanRecord(playerID: "q", ban: PlayerBan(reason: "", since: 35, until: 50)),
                PlayerBanRecord(playerID: "p", ban: PlayerBan(reason: "cheating", since: 30)),
            ])
        try await store.setBan(playerID: "p", ban: nil, at: 60)
        try await store.close()
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)

        store = try await SQLiteGameStore.open(path: path)
        #expect(
            try await store.banRecords(playerID: "p", limit: 10) == [
                PlayerBanRecord(playerID: "p", ban: PlayerBan(reason: "cheating", since: 30), endedEarly: .lifted(at: 60))
            ])
        #expect(try await store.bannedPlayers() == ["q": PlayerBan(reason: "", since: 35, until: 50)])
        try await store.close()
    }

    @Test func aFileFromBeforeLinkCodesKeepsItsDevicesAndStoresCodes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v10")
        try SQLiteSchema.execute(
            """
            INSERT INTO player (id, alias, created_at, last_seen_at) VALUES ('p', 'Ann', 10, 20);
            INSERT INTO device_identity (device_id, player_id, secret_hash, linked_at) VALUES ('phone', 'p', x'01', 10)
            """,
            atPath: path)

        var store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.linkCodes(validAt: 0).isEmpty)
        try await store.putLinkCode(LinkCodeRecord(playerID: "p", digest: [7, 7], expiresAt: 1_000), at: 30)
        try await store.close()
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)

        store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.devices(playerID: "p").map(\.deviceID) == ["phone"])
        #expect(try await store.linkCodes(validAt: 30) == [LinkCodeRecord(playerID: "p", digest: [7, 7], expiresAt: 1_000)])
        try await store.close()
    }

    @Test func aFileFromBeforeAliasLocksKeepsItsAliasesUnlocked() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v11")
        try SQLiteSchema.execute("INSERT INTO player (id, alias, created_at, last_seen_at) VALUES ('p', 'Ann', 10, 20)", atPath: path)

        var store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.player(id: "p") == PlayerRecord(id: "p", alias: "Ann", createdAt: 10, lastSeenAt: 20, aliasLocked: false))
        _ = try await store.setAliasByOperator(playerID: "p", alias: "Player 1", locked: true)
        try await store.close()
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == Self.everyMigration)

        store = try await SQLiteGameStore.open(path: path)
        #expect(try await store.player(id: "p") == PlayerRecord(id: "p", alias: "Player 1", createdAt: 10, lastSeenAt: 20, aliasLocked: true))
        try await store.close()
    }

    @Test func aFileFromANewerSchemaIsRefusedUntouched() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v3")
        try SQLiteSchema.execute("INSERT INTO grdb_migrations (identifier) VALUES ('v99'); CREATE TABLE future (x)", atPath: path)
        let before = self.contents(path)

        let error = try #require(await self.openError(path))

        #expect(error.kind == .newerSchema)
        #expect(error.path == path)
        #expect(error.description.contains("v99"))
        #expect(self.contents(path) == before)
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == ["v1", "v2", "v3", "v99"])
    }

    @Test func readingOnlyWritesNothingAndRefusesWrites() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        let store = try await SQLiteGameStore.open(path: path)
        try await store.createPlayer(id: "p1", alias: "Ann", createdAt: 10)
        try await store.close()
        let before = self.contents(path)

        let reader = try await SQLiteGameStore.open(path: path, options: SQLiteStoreOptions(readOnly: true))
        #expect(try await reader.player(id: "p1")?.alias == "Ann")
        await #expect(throws: GameStoreError.self) { try await reader.createPlayer(id: "p2", alias: "Bo", createdAt: 20) }
        try await reader.close()

        #expect(self.contents(path) == before)
        #expect(await self.openError(directory.file("missing.sqlite"), options: SQLiteStoreOptions(readOnly: true))?.kind == .missing)
        #expect(!FileManager.default.fileExists(atPath: directory.file("missing.sqlite")))
    }

    /// A newer `matchhost leaderboard` beside an older server must not migrate its database.
    @Test func readingOnlyRefusesAnOlderSchemaAndAnEmptyFileUntouched() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.createFile(atPath: path, migratedUpTo: "v2")
        let before = self.contents(path)

        let error = try #require(await self.openError(path, options: SQLiteStoreOptions(readOnly: true)))

        #expect(error.kind == .olderSchema)
        #expect(error.description.contains("lacks v3"))
        #expect(self.contents(path) == before)
        #expect(try SQLiteSchema.appliedMigrations(atPath: path) == ["v1", "v2"])

        let empty = directory.file("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        #expect(await self.openError(empty, options: SQLiteStoreOptions(readOnly: true))?.kind == .olderSchema)
        #expect(self.contents(empty) == Data())
    }

    @Test func aCorruptFileIsRefusedUntouched() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        var random = SystemRandomNumberGenerator()
        let garbage = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &random) })
        #expect(FileManager.default.createFile(atPath: path, contents: garbage))

        let error = try #require(await self.openError(path))

        #expect(error.kind == .notADatabase)
        #expect(error.description.hasPrefix("cannot open database \(path): "))
        #expect(self.contents(path) == garbage)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func aDatabaseDamagedInsideIsRefusedUntouched() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try await SQLiteGameStore.open(path: path).close()
        try SQLiteSchema.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
            INSERT INTO player (id, alias, created_at, last_seen_at) SELECT printf('%032x', i), 'player ' || i, i, i FROM n
            """, atPath: path)
        // Pages 4 to 9 of the 4 KiB pages, well inside the file, overwritten as a bad block would be.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        var random = SystemRandomNumberGenerator()
        try handle.seek(toOffset: 3 * 4096)
        try handle.write(contentsOf: Data((0..<(6 * 4096)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        try handle.close()
        let before = self.contents(path)

        let error = try #require(await self.openError(path))

        #expect(error.kind == .notADatabase)
        #expect(error.description.contains("damaged"), "\(error)")
        #expect(self.contents(path) == before)
    }

    @Test func anotherProgramsDatabaseIsRefusedUntouched() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        try SQLiteSchema.execute("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')", atPath: path)
        let before = self.contents(path)

        let error = try #require(await self.openError(path))

        #expect(error.kind == .foreignDatabase)
        #expect(error.reason.contains("notes"))
        #expect(self.contents(path) == before)
    }

    @Test func aDirectoryThatCannotBeCreatedIsReported() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A regular file where a directory should be stops root as well as anyone.
        let blocker = directory.file("blocker")
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data([1])))

        let error = try #require(await self.openError(blocker + "/data/matchhost.sqlite"))

        #expect(error.kind == .directoryNotCreatable)
        #expect(error.path == blocker + "/data")
        let inPlace = try #require(await self.openError(blocker + "/matchhost.sqlite"))
        #expect(inPlace.kind == .directoryNotCreatable)
        #expect(inPlace.reason == "it exists and is not a directory")
    }

    @Test func aMissingFileIsAnErrorWhenCreationIsOff() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")

        let error = try #require(await self.openError(path, options: SQLiteStoreOptions(createIfMissing: false)))

        #expect(error.kind == .missing)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test(
        .enabled(
            if: ReadOnlyCondition.available != nil,
            "running as root where chattr +i is unavailable: no way to make a file read-only for this user"))
    func aReadOnlyFileIsRefusedUntouched() async throws {
        let condition = try #require(ReadOnlyCondition.available)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("matchhost.sqlite")
        let store = try await SQLiteGameStore.open(path: path)
        try await store.createPlayer(id: "p1", alias: "Ann", createdAt: 1)
        try await store.close()
        let before = self.contents(path)
        try condition.apply(file: path, directory: directory.path)

        let error = try #require(await self.openError(path))

        #expect(error.kind == .readOnly)
        #expect(error.path == path)
        #expect(error.reason == "the file is read-only")
        #expect(self.contents(path) == before)
    }

    @Test(
        .enabled(
            if: ReadOnlyCondition.available != nil,
            "running as root where chattr +i is unavailable: no way to make a directory read-only for this user"))
    func aReadOnlyDirectoryCannotHoldANewFile() async throws {
        let condition = try #require(ReadOnlyCondition.available)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let marker = directory.file("marker")
        #expect(FileManager.default.createFile(atPath: marker, contents: Data([1])))
        try condition.apply(file: marker, directory: directory.path)

        let error = try #require(await self.openError(directory.file("matchhost.sqlite")))

        #expect(error.kind == .readOnly)
        #expect(error.path == directory.path)
    }
}
