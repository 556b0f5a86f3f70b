import Logging
import MatchHostWire

/// Why a ``GameStore`` call was refused or failed. Both implementations throw the same
/// cases for the same calls; a refused call has changed nothing.
///
/// Thrown untyped (`throws`, never `throws(GameStoreError)`): with Swift 6.3.1 a typed throw of
/// this enum, once it had its device cases, crashed in the error's destroy under
/// swift-testing's throw hook (a bad pointer in `swift_release`).
public enum GameStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A player with this id already exists.
    case playerExists(PlayerID)
    /// No player has this id.
    case unknownPlayer(PlayerID)
    /// This device id already belongs to a player.
    case deviceExists(deviceID: String)
    /// The player has no device with this id (none has it, or another player's has).
    case unknownDevice(deviceID: String)
    /// This device id was unlinked from its player: it is not a new device.
    case deviceUnlinked(deviceID: String)
    /// The device is the player's only one: removing it would leave no way to sign in.
    case lastDevice(PlayerID)
    /// The player already has `limit` devices.
    case tooManyDevices(PlayerID, limit: Int)
    /// The operator fixed the player's alias: the player cannot change it.
    case aliasLocked(PlayerID)
    /// This external identity already belongs to a player.
    case externalIdentityExists(ExternalIdentity)
    /// A match with this id was already recorded.
    case matchExists(MatchID)
    /// No match has this id.
    case unknownMatch(MatchID)
    /// The match has already ended (finished or abandoned).
    case matchNotRunning(MatchID)
    /// The match cannot be recorded as given.
    case invalidMatch(MatchID, reason: String)
    /// The result does not fit the match.
    case invalidResult(MatchID, reason: String)
    /// The match is real-time, so it has no stored turn state.
    case notTurnBased(MatchID)
    /// A move with this number was already accepted; the log keeps the first.
    case duplicateMove(MatchID, moveNumber: Int)
    /// The move number skips ahead; moves are numbered from 1 without gaps.
    case moveOutOfOrder(MatchID, expected: Int, got: Int)
    /// A key-value key is empty.
    case emptyKey
    /// A key-value key is longer than ``StorageLimits/maximumKeyBytes``.
    case keyTooLong(bytes: Int, limit: Int)
    /// A value is larger than ``StorageLimits/maximumValueBytes``.
    case valueTooLarge(bytes: Int, limit: Int)
    /// The player already holds ``StorageLimits/maximumKeysPerPlayer`` keys.
    case tooManyKeys(PlayerID, limit: Int)
    /// The database itself failed (I/O error, disk full, closed); `reason` is its message.
    case storageFailed(reason: String)

    /// Whether the database itself failed (``storageFailed(reason:)``), rather than the call
    /// being refused for what it asked.
    public var isStorageFailure: Bool {
        if case .storageFailed = self { return true }
        return false
    }

    /// Whether `error`, from a store call or something around it, is the database failing:
    /// ``storageFailed(reason:)`` or an error no store refusal explains; not a refusal (an
    /// unknown player, a duplicate move), nor a protocol error the caller made itself (a
    /// ``NativeError`` such as NO_SUCH_PLAYER).
    public static func isStorageFailure(_ error: any Error) -> Bool {
        switch error {
        case let refusal as GameStoreError: refusal.isStorageFailure
        case is NativeError: false
        default: true
        }
    }

    /// The level to log one call's failure at: `debug` when the database failed (a failing
    /// database fails every call at once, and the server reports the outage once for all),
    /// `warning` otherwise (a refusal nobody expected is a bug to see).
    public static func logLevel(for error: any Error) -> Logger.Level {
        Self.isStorageFailure(error) ? .debug : .warning
    }

    /// A sentence for logs and error replies.
    public var description: String {
        switch self {
        case .playerExists(let id): return "player \(id) already exists"
        case .unknownPlayer(let id): return "no player with id \(id)"
        case .deviceExists(let device): return "device \(device) already belongs to a player"
        case .unknownDevice(let device): return "the player has no device \(device)"
        case .deviceUnlinked(let device): return "device \(device) was unlinked from its player"
        case .lastDevice(let id): return "it is the only device of player \(id), which could not sign in without it"
        case .tooManyDevices(let id, let limit): return "player \(id) already has the maximum of \(limit) devices"
        case .aliasLocked(let id): return "the operator fixed the alias of player \(id); it cannot be changed"
        case .externalIdentityExists(let identity): return "identity \(identity) already belongs to a player"
        case .matchExists(let id): return "match \(id) was already recorded"
        case .unknownMatch(let id): return "no match with id \(id)"
        case .matchNotRunning(let id): return "match \(id) has already ended"
        case .invalidMatch(let id, let reason): return "match \(id) cannot be recorded: \(reason)"
        case .invalidResult(let id, let reason): return "result of match \(id) does not fit: \(reason)"
        case .notTurnBased(let id): return "match \(id) is not turn-based"
        case .duplicateMove(let id, let number): return "match \(id) already has move \(number)"
        case .moveOutOfOrder(let id, let expected, let got): return "match \(id) expects move \(expected), got \(got)"
        case .emptyKey: return "the key is empty"
        case .keyTooLong(let bytes, let limit): return "the key is \(bytes) bytes long; the limit is \(limit)"
        case .valueTooLarge(let bytes, let limit): return "the value is \(bytes) bytes; the limit is \(limit)"
        case .tooManyKeys(let id, let limit): return "player \(id) already holds the maximum of \(limit) keys"
        case .storageFailed(let reason): return "storage failed: \(reason)"
        }
    }
}
