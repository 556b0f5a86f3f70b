/// An error code of the native protocol, sent in `ERROR` frames (the connection then
/// closes) and `REQUEST_ERROR` messages (the request failed; the session goes on).
///
/// Codes below 100 concern the connection or session; codes from 100 concern one request.
/// PROTOCOL.md lists them all; a client should show ``NativeError/message`` to a developer
/// and branch on the code.
public struct NativeErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code's value on the wire.
    public let rawValue: UInt16

    /// Wraps a code read from the wire.
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// The client asked for a protocol version this server does not speak.
    public static let unsupportedVersion = NativeErrorCode(rawValue: 1)
    /// The client's game id is not one this server serves.
    public static let unknownGame = NativeErrorCode(rawValue: 2)
    /// A frame or message could not be decoded, or came in the wrong state.
    public static let badMessage = NativeErrorCode(rawValue: 3)
    /// A session message came before authentication.
    public static let notAuthenticated = NativeErrorCode(rawValue: 4)
    /// A device id with the wrong secret.
    public static let authenticationFailed = NativeErrorCode(rawValue: 5)
    /// A session token whose signature does not verify (forged or altered) or that is malformed.
    public static let tokenInvalid = NativeErrorCode(rawValue: 6)
    /// A session token past its expiry.
    public static let tokenExpired = NativeErrorCode(rawValue: 7)
    /// Resume named a session that does not exist (never did, or its grace period ran out).
    public static let sessionNotFound = NativeErrorCode(rawValue: 8)
    /// Resume named a live session with the wrong resume token.
    public static let resumeRefused = NativeErrorCode(rawValue: 9)
    /// This connection's session was resumed on a newer connection.
    public static let sessionReplaced = NativeErrorCode(rawValue: 10)
    /// Nothing arrived within the idle timeout.
    public static let idleTimeout = NativeErrorCode(rawValue: 11)
    /// More messages per second than the server allows.
    public static let rateLimited = NativeErrorCode(rawValue: 12)
    /// The session's unacknowledged backlog passed its bound; the session ended.
    public static let backlogExceeded = NativeErrorCode(rawValue: 13)
    /// A frame longer than the server's maximum.
    public static let frameTooLarge = NativeErrorCode(rawValue: 14)
    /// The server is shutting down.
    public static let shuttingDown = NativeErrorCode(rawValue: 15)
    /// A sequence number or acknowledgement that cannot be right (a gap, or an ack of
    /// something never sent).
    public static let sequenceError = NativeErrorCode(rawValue: 16)
    /// The client did not read fast enough; its outbound buffer passed the server's limit.
    public static let slowConsumer = NativeErrorCode(rawValue: 17)
    /// The handshake or authentication did not finish within the idle timeout.
    public static let handshakeTimeout = NativeErrorCode(rawValue: 18)
    /// The server could not read or write its database (authentication needs it); try again later.
    public static let storageFailed = NativeErrorCode(rawValue: 19)
    /// The server holds its most connections (`--max-connections`); try again later.
    public static let serverFull = NativeErrorCode(rawValue: 20)
    /// The port speaks TLS and the client connected without it; sent in plaintext, then the
    /// connection closes.
    public static let tlsRequired = NativeErrorCode(rawValue: 21)
    /// The server's operator banned the player: it cannot sign in, and a session it had ended.
    /// The message carries the operator's reason. Trying again does not help.
    public static let playerBanned = NativeErrorCode(rawValue: 22)
    /// A link (`AUTHENTICATE` method 3) the server refused: the code is unknown, has expired
    /// or linked another device already, or the player has its most devices. The message says
    /// which; a new code from one of the player's devices is the way on.
    public static let linkRefused = NativeErrorCode(rawValue: 23)
    /// A device id that was unlinked from its player (UNLINK_DEVICE) signing in as a new
    /// device: it is not made a new player. Link it again with a code, or use a new device id.
    public static let deviceUnlinked = NativeErrorCode(rawValue: 24)
    /// The operator unlinked a device of this player (`matchhost unlink-device`, `recover`), and
    /// ended the player's session with it, as the session may be the unlinked device's; its
    /// matches saw the player leave. Sign in again with the device's secret (AUTHENTICATE
    /// method 1): a device still linked gets a new session; the unlinked one gets `DEVICE_UNLINKED`.
    public static let sessionRevoked = NativeErrorCode(rawValue: 25)

    /// A request kind this server does not know.
    public static let unknownRequest = NativeErrorCode(rawValue: 100)
    /// No game mode of that name (create match).
    public static let unknownMode = NativeErrorCode(rawValue: 101)
    /// No match with that id.
    public static let noSuchMatch = NativeErrorCode(rawValue: 102)
    /// The match has no free seat.
    public static let matchFull = NativeErrorCode(rawValue: 103)
    /// The player is already in that match.
    public static let alreadyInMatch = NativeErrorCode(rawValue: 104)
    /// The player is not in that match.
    public static let notInMatch = NativeErrorCode(rawValue: 105)
    /// The game refused the join; the message says why.
    public static let joinRefused = NativeErrorCode(rawValue: 106)
    /// An argument is out of range (a player limit over the maximum, say).
    public static let badArgument = NativeErrorCode(rawValue: 107)
    /// The player is in as many matches as the server allows.
    public static let tooManyMatches = NativeErrorCode(rawValue: 108)
    /// The match has ended. Kept for clients, not sent by this server: it forgets a match the
    /// moment it ends, so a request naming one gets ``noSuchMatch`` or ``notInMatch``.
    public static let matchEnded = NativeErrorCode(rawValue: 109)
    /// No queued ticket with that id (it was matched or cancelled already).
    public static let noSuchTicket = NativeErrorCode(rawValue: 110)
    /// No party with that id.
    public static let noSuchParty = NativeErrorCode(rawValue: 111)
    /// The party has no room.
    public static let partyFull = NativeErrorCode(rawValue: 112)
    /// Only the party's leader may do that (queue it).
    public static let notPartyLeader = NativeErrorCode(rawValue: 113)
    /// The player (or its party) has as many tickets queued as the server allows.
    public static let tooManyTickets = NativeErrorCode(rawValue: 114)
    /// The player is in a party already.
    public static let alreadyInParty = NativeErrorCode(rawValue: 115)
    /// The matchmaker's queue is full.
    public static let queueFull = NativeErrorCode(rawValue: 116)
    /// Too many lobby subscriptions on this session. Not sent by this server (a session
    /// follows each of the server's modes at most once); the number stays taken.
    public static let tooManySubscriptions = NativeErrorCode(rawValue: 117)
    /// No player has that id.
    public static let noSuchPlayer = NativeErrorCode(rawValue: 118)
    /// A key-value key is empty or longer than the server allows.
    public static let invalidKey = NativeErrorCode(rawValue: 119)
    /// A value is larger than the server allows.
    public static let valueTooLarge = NativeErrorCode(rawValue: 120)
    /// The player holds as many keys as the server allows.
    public static let tooManyKeys = NativeErrorCode(rawValue: 121)
    /// The server could not read or write its database for the request; try again later.
    public static let storageUnavailable = NativeErrorCode(rawValue: 122)
    /// The session has its most stored-data requests waiting for the database
    /// (`--max-pending-requests`); send more once some are answered.
    public static let tooManyRequests = NativeErrorCode(rawValue: 123)
    /// The player has no device with that id (UNLINK_DEVICE).
    public static let noSuchDevice = NativeErrorCode(rawValue: 124)
    /// The device is the player's only one (UNLINK_DEVICE): without it the player could not sign in.
    public static let lastDevice = NativeErrorCode(rawValue: 125)
    /// The player has as many devices as the server allows (CREATE_LINK_CODE).
    public static let tooManyDevices = NativeErrorCode(rawValue: 126)
    /// The server's operator fixed the player's alias (SET_ALIAS): the player cannot change it.
    public static let aliasLocked = NativeErrorCode(rawValue: 127)

    /// The code's name as in PROTOCOL.md.
    public var name: String {
        switch self {
        case .unsupportedVersion: return "UNSUPPORTED_VERSION"
        case .unknownGame: return "UNKNOWN_GAME"
        case .badMessage: return "BAD_MESSAGE"
        case .notAuthenticated: return "NOT_AUTHENTICATED"
        case .authenticationFailed: return "AUTHENTICATION_FAILED"
        case .tokenInvalid: return "TOKEN_INVALID"
        case .tokenExpired: return "TOKEN_EXPIRED"
        case .sessionNotFound: return "SESSION_NOT_FOUND"
        case .resumeRefused: return "RESUME_REFUSED"
        case .sessionReplaced: return "SESSION_REPLACED"
        case .idleTimeout: return "IDLE_TIMEOUT"
        case .rateLimited: return "RATE_LIMITED"
        case .backlogExceeded: return "BACKLOG_EXCEEDED"
        case .frameTooLarge: return "FRAME_TOO_LARGE"
        case .shuttingDown: return "SHUTTING_DOWN"
        case .sequenceError: return "SEQUENCE_ERROR"
        case .slowConsumer: return "SLOW_CONSUMER"
        case .handshakeTimeout: return "HANDSHAKE_TIMEOUT"
        case .storageFailed: return "STORAGE_FAILED"
        case .serverFull: return "SERVER_FULL"
        case .tlsRequired: return "TLS_REQUIRED"
        case .playerBanned: return "PLAYER_BANNED"
        case .linkRefused: return "LINK_REFUSED"
        case .deviceUnlinked: return "DEVICE_UNLINKED"
        case .sessionRevoked: return "SESSION_REVOKED"
        case .unknownRequest: return "UNKNOWN_REQUEST"
        case .unknownMode: return "UNKNOWN_MODE"
        case .noSuchMatch: return "NO_SUCH_MATCH"
        case .matchFull: return "MATCH_FULL"
        case .alreadyInMatch: return "ALREADY_IN_MATCH"
        case .notInMatch: return "NOT_IN_MATCH"
        case .joinRefused: return "JOIN_REFUSED"
        case .badArgument: return "BAD_ARGUMENT"
        case .tooManyMatches: return "TOO_MANY_MATCHES"
        case .matchEnded: return "MATCH_ENDED"
        case .noSuchTicket: return "NO_SUCH_TICKET"
        case .noSuchParty: return "NO_SUCH_PARTY"
        case .partyFull: return "PARTY_FULL"
        case .notPartyLeader: return "NOT_PARTY_LEADER"
        case .tooManyTickets: return "TOO_MANY_TICKETS"
        case .alreadyInParty: return "ALREADY_IN_PARTY"
        case .queueFull: return "QUEUE_FULL"
        case .tooManySubscriptions: return "TOO_MANY_SUBSCRIPTIONS"
        case .noSuchPlayer: return "NO_SUCH_PLAYER"
        case .invalidKey: return "INVALID_KEY"
        case .valueTooLarge: return "VALUE_TOO_LARGE"
        case .tooManyKeys: return "TOO_MANY_KEYS"
        case .storageUnavailable: return "STORAGE_UNAVAILABLE"
        case .tooManyRequests: return "TOO_MANY_REQUESTS"
        case .noSuchDevice: return "NO_SUCH_DEVICE"
        case .lastDevice: return "LAST_DEVICE"
        case .tooManyDevices: return "TOO_MANY_DEVICES"
        case .aliasLocked: return "ALIAS_LOCKED"
        default: return "ERROR_\(self.rawValue)"
        }
    }

    /// The name and number, for logs.
    public var description: String { "\(self.name) (\(self.rawValue))" }
}

/// An error as the native protocol carries it: a code and a human-readable message.
public struct NativeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for code to branch on.
    public var code: NativeErrorCode
    /// What went wrong, for a developer to read.
    public var message: String

    /// Creates an error.
    public init(_ code: NativeErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The code and the message, for logs.
    public var description: String { "\(self.code): \(self.message)" }
}
