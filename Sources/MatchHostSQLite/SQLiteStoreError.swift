/// Why ``SQLiteGameStore/open(path:limits:options:)`` could not open a database. Nothing in
/// the file has been changed when it throws.
public struct SQLiteStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: String, Sendable, Hashable {
        /// The directory for the file does not exist and cannot be created.
        case directoryNotCreatable = "directory_not_creatable"
        /// The file or its directory cannot be written (SQLite in WAL mode writes files next to it).
        case readOnly = "read_only"
        /// The file does not exist and ``SQLiteStoreOptions/createIfMissing`` is false.
        case missing
        /// The file is not an SQLite database, or is damaged.
        case notADatabase = "not_a_database"
        /// The file is an SQLite database that MatchHost did not create.
        case foreignDatabase = "foreign_database"
        /// The file was migrated by a newer MatchHost, whose schema this one does not know.
        case newerSchema = "newer_schema"
        /// The file lacks migrations this MatchHost has, and was opened read-only, which
        /// does not migrate.
        case olderSchema = "older_schema"
        /// Any other reason SQLite gave.
        case cannotOpen = "cannot_open"
    }

    /// What kind of problem it is.
    public var kind: Kind
    /// The file or directory concerned.
    public var path: String
    /// What went wrong, in words.
    public var reason: String

    /// Creates an error.
    public init(_ kind: Kind, path: String, reason: String) {
        self.kind = kind
        self.path = path
        self.reason = reason
    }

    /// "cannot open database PATH: REASON", for the log line a failed start ends with.
    public var description: String {
        "cannot open database \(self.path): \(self.reason)"
    }
}
