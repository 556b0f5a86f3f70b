import MatchHostCore
import Testing

@Suite("Storage: per-player key-value store")
struct ValueStorageTests {
    private let small = StorageLimits(maximumKeyBytes: 8, maximumValueBytes: 16, maximumKeysPerPlayer: 2)

    @Test(arguments: StoreKind.allCases)
    func valuesAreWrittenReadReplacedAndDeleted(kind: StoreKind) async throws {
        try await kind.withStore(limits: self.small) { store in
            try await store.createPlayer(id: "p1", alias: "Ann", createdAt: 1)
            try await store.createPlayer(id: "p2", alias: "Bob", createdAt: 1)

            #expect(try await store.readValue(playerID: "p1", key: "level") == nil)
            try await store.writeValue(playerID: "p1", key: "level", value: [1, 2])
            try await store.writeValue(playerID: "p1", key: "level", value: [3])
            try await store.writeValue(playerID: "p1", key: "empty", value: [])
            try await store.writeValue(playerID: "p2", key: "level", value: [9])

            #expect(try await store.readValue(playerID: "p1", key: "level") == [3])
            #expect(try await store.readValue(playerID: "p1", key: "empty") == [])
            #expect(try await store.readValue(playerID: "p2", key: "level") == [9])
            #expect(try await store.deleteValue(playerID: "p1", key: "level"))
            #expect(try await store.deleteValue(playerID: "p1", key: "level") == false)
            #expect(try await store.readValue(playerID: "p1", key: "level") == nil)
            #expect(try await store.readValue(playerID: "p2", key: "level") == [9])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func limitsAreEnforcedWithTypedErrors(kind: StoreKind) async throws {
        try await kind.withStore(limits: self.small) { store in
            try await store.createPlayer(id: "p1", alias: "Ann", createdAt: 1)

            await #expect(throws: GameStoreError.emptyKey) { try await store.writeValue(playerID: "p1", key: "", value: [1]) }
            await #expect(throws: GameStoreError.keyTooLong(bytes: 9, limit: 8)) {
                try await store.writeValue(playerID: "p1", key: "123456789", value: [1])
            }
            await #expect(throws: GameStoreError.keyTooLong(bytes: 10, limit: 8)) {
                try await store.writeValue(playerID: "p1", key: "ééééé", value: [1])  // 5 characters, 10 UTF-8 bytes
            }
            await #expect(throws: GameStoreError.valueTooLarge(bytes: 17, limit: 16)) {
                try await store.writeValue(playerID: "p1", key: "k", value: [UInt8](repeating: 7, count: 17))
            }
            await #expect(throws: GameStoreError.unknownPlayer("p9")) { try await store.writeValue(playerID: "p9", key: "k", value: [1]) }

            try await store.writeValue(playerID: "p1", key: "12345678", value: [UInt8](repeating: 7, count: 16))
            try await store.writeValue(playerID: "p1", key: "b", value: [2])
            await #expect(throws: GameStoreError.tooManyKeys("p1", limit: 2)) { try await store.writeValue(playerID: "p1", key: "c", value: [3]) }
            try await store.writeValue(playerID: "p1", key: "b", value: [4])  // replacing takes no new key
            try await store.deleteValue(playerID: "p1", key: "b")
            try await store.writeValue(playerID: "p1", key: "c", value: [3])

            #expect(try await store.readValue(playerID: "p1", key: "c") == [3])
            #expect(try await store.readValue(playerID: "p1", key: "k") == nil)
            #expect(try await store.readValue(playerID: "p1", key: "12345678")?.count == 16)
        }
    }

    @Test func defaultLimitsAreTheIssuesNumbers() {
        let limits = StorageLimits()
        #expect(limits.maximumKeyBytes == 128)
        #expect(limits.maximumValueBytes == 16_384)
        #expect(limits.maximumKeysPerPlayer == 64)
        #expect(GameStoreError.tooManyKeys("p1", limit: 64).description == "player p1 already holds the maximum of 64 keys")
    }
}
