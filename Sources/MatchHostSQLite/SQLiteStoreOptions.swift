/// How ``SQLiteGameStore`` opens and writes its file.
public struct SQLiteStoreOptions: Sendable, Hashable {
    /// How much of what was committed survives a crash.
    public enum Durability: Sendable, Hashable {
        /// `synchronous = FULL`: each commit waits for the write-ahead log to reach the disk,
        /// so every acknowledged write survives a process crash and a power loss.
        case full
        /// `synchronous = NORMAL` (GRDB's default in WAL mode): commits survive a process
        /// crash (kill -9), but a power loss or kernel crash may lose the last ones.
        case normal
    }

    /// Create the file (and its directory), and migrate it, when it does not exist.
    public var createIfMissing: Bool
    /// See ``Durability``; ``Durability/full`` by default.
    public var durability: Durability
    /// Open for reading only, as the command-line readers do beside a running server: nothing
    /// is written, not even a migration (a newer `matchhost` must not change the schema under
    /// an older server), so the file must exist and be at exactly this MatchHost's schema.
    /// Writes then fail with ``MatchHostCore/GameStoreError/storageFailed(reason:)``.
    public var readOnly: Bool

    /// Creates options. `readOnly` implies not creating the file.
    public init(createIfMissing: Bool = true, durability: Durability = .full, readOnly: Bool = false) {
        self.createIfMissing = createIfMissing && !readOnly
        self.durability = durability
        self.readOnly = readOnly
    }
}
