/// Bounds on the per-player key-value store, so that one player cannot fill the disk.
public struct StorageLimits: Sendable, Hashable {
    /// The longest key, in UTF-8 bytes.
    public var maximumKeyBytes: Int
    /// The largest value, in bytes.
    public var maximumValueBytes: Int
    /// The most keys one player may hold.
    public var maximumKeysPerPlayer: Int

    /// Creates limits; the defaults are 128-byte keys, 16 KiB values and 64 keys per player.
    public init(maximumKeyBytes: Int = 128, maximumValueBytes: Int = 16 * 1024, maximumKeysPerPlayer: Int = 64) {
        precondition(maximumKeyBytes > 0 && maximumValueBytes >= 0 && maximumKeysPerPlayer > 0, "storage limits must be positive")
        self.maximumKeyBytes = maximumKeyBytes
        self.maximumValueBytes = maximumValueBytes
        self.maximumKeysPerPlayer = maximumKeysPerPlayer
    }

    /// Checks a key against the limits (not empty, not too long).
    package func check(key: String) throws {
        let bytes = key.utf8.count
        guard bytes > 0 else { throw GameStoreError.emptyKey }
        guard bytes <= self.maximumKeyBytes else {
            throw GameStoreError.keyTooLong(bytes: bytes, limit: self.maximumKeyBytes)
        }
    }

    /// Checks a value against the limits.
    package func check(value: [UInt8]) throws {
        guard value.count <= self.maximumValueBytes else {
            throw GameStoreError.valueTooLarge(bytes: value.count, limit: self.maximumValueBytes)
        }
    }
}
