import Foundation
import MatchHostCore
import MatchHostSQLite
import Testing

/// The two implementations every behaviour test runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemory
    case sqlite

    var testDescription: String { self.rawValue }

    /// Runs `body` with a new, empty store of this kind (SQLite: in a fresh temporary directory).
    func withStore(limits: StorageLimits = StorageLimits(), _ body: (any GameStore) async throws -> Void) async throws {
        switch self {
        case .inMemory:
            try await body(InMemoryGameStore(limits: limits))
        case .sqlite:
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let store = try await SQLiteGameStore.open(directory: directory.path, limits: limits)
            do {
                try await body(store)
            } catch {
                try? await store.close()
                throw error
            }
            try await store.close()
        }
    }
}

/// A directory under the system's temporary directory, removed (permissions restored first) by ``remove()``.
struct TemporaryDirectory {
    let path: String

    init() throws {
        self.path = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-storage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: self.path, withIntermediateDirectories: true)
    }

    /// `name` inside the directory.
    func file(_ name: String) -> String {
        URL(fileURLWithPath: self.path).appendingPathComponent(name).path
    }

    func remove() {
        ReadOnlyCondition.undo(directory: self.path)
        try? FileManager.default.removeItem(atPath: self.path)
    }
}
