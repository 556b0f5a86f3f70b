import Foundation
import MatchHostSQLite
import MatchHostServer

extension RunningNativeServer {
    /// A server on the SQLite file in `directory`, signing tokens with `key`: as it starts
    /// again after a stop, on the same file and key, it finds what the last one stored and
    /// takes the tokens the last one issued.
    static func start(
        onSQLiteIn directory: URL, key: [UInt8] = [UInt8](repeating: 5, count: 32), clock: WallClock = .system,
        _ configure: @escaping (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> (SQLiteGameStore, RunningNativeServer) {
        let store = try await SQLiteGameStore.open(directory: directory.path)
        let server = try await RunningNativeServer.start {
            $0.tokenSigningKey = key
            $0.store = store
            $0.wallClock = clock
            configure(&$0)
        }
        return (store, server)
    }
}
