import NIOCore

/// Something a client asks of the server, answered by a ``NativeResponse`` or an error.
public enum NativeRequest: Hashable, Sendable {
    /// Kind 1: creates a match of a game mode and seats the asking player in it.
    /// `maxPlayers` 0 takes the mode's default. A private match is left out of the lobby and
    /// joined by its invite code.
    case createMatch(mode: String, maxPlayers: UInt8, label: String, isPrivate: Bool = false)
    /// Kind 2: seats the asking player in an existing match.
    case joinMatch(MatchIdentifier)
    /// Kind 3: takes the asking player out of a match.
    case leaveMatch(MatchIdentifier)
    /// Kind 4: one page of a mode's open matches.
    case listMatches(NativeLobbyQuery)
    /// Kind 5: live lobby updates for a mode (`LOBBY_UPDATE`), starting with every listed match.
    case subscribeLobby(mode: String)
    /// Kind 6: no more lobby updates for a mode.
    case unsubscribeLobby(mode: String)
    /// Kind 7: seats the asking player in the private (or public) match with this invite code.
    case joinByCode(String)
    /// Kind 8: puts the asking player (or its whole party) in the matchmaker's queue.
    case matchmake(NativeTicketRequest)
    /// Kind 9: takes a ticket out of the queue.
    case cancelTicket(String)
    /// Kind 10: creates a party led by the asking player, of at most `maxSize` players (0: 16).
    case createParty(maxSize: UInt8)
    /// Kind 11: joins a party by its id (which is also its invite code).
    case joinParty(String)
    /// Kind 12: leaves a party; a leader leaving disbands it.
    case leaveParty(String)
    /// Kind 13: a player's profile and stats (`playerID` empty: the asking player's).
    case getProfile(playerID: String)
    /// Kind 14: a player's most recent matches, newest first, at most `limit` (0: 20; at most 100).
    case getMatchHistory(playerID: String, limit: UInt8)
    /// Kind 15: a game's leaderboard: its top `limit` players, or (with `around`) the `limit`
    /// entries around that player (0: 10; at most 100).
    case getLeaderboard(game: String, around: String, limit: UInt8)
    /// Kind 16: the asking player's value under `key`.
    case readValue(key: String)
    /// Kind 17: stores `value` under `key` for the asking player, replacing what was there.
    case writeValue(key: String, value: ByteBuffer)
    /// Kind 18: removes the asking player's `key` (nothing happens if it is not there).
    case deleteValue(key: String)
    /// Kind 19: a code that links a new device to the asking player (`AUTHENTICATE` method 3),
    /// once, for a few minutes; it replaces the player's previous code.
    case createLinkCode
    /// Kind 20: the asking player's devices.
    case listDevices
    /// Kind 21: removes one of the asking player's devices, and revokes every session token the
    /// player holds (its devices sign in again with their secrets).
    case unlinkDevice(deviceID: String)
    /// Kind 22: stores `alias` as the asking player's alias (what profiles and leaderboards
    /// show for it), once the server's rules allow it.
    case setAlias(String)
    /// Kind 23: the aliases of these players (at most ``NativePlayerAlias/maximumPerRequest``),
    /// in one answer: what a client shows for the players of a match or a list.
    case getAliases(playerIDs: [String])

    /// The bytes of a WRITE_VALUE frame's body besides its key's and its value's own: RELIABLE's
    /// kind, sequence and ack, REQUEST's kind and request id, the request kind, and the two
    /// lengths. A server's value limit is reachable only if a value that size fits in its
    /// largest frame with them.
    public static let writeValueFrameOverhead = NativeFrame.reliableHeaderSize - 4 + 1 + 4 + 1 + 2 + 4

    /// The request kind byte.
    public var kind: UInt8 {
        switch self {
        case .createMatch: return 1
        case .joinMatch: return 2
        case .leaveMatch: return 3
        case .listMatches: return 4
        case .subscribeLobby: return 5
        case .unsubscribeLobby: return 6
        case .joinByCode: return 7
        case .matchmake: return 8
        case .cancelTicket: return 9
        case .createParty: return 10
        case .joinParty: return 11
        case .leaveParty: return 12
        case .getProfile: return 13
        case .getMatchHistory: return 14
        case .getLeaderboard: return 15
        case .readValue: return 16
        case .writeValue: return 17
        case .deleteValue: return 18
        case .createLinkCode: return 19
        case .listDevices: return 20
        case .unlinkDevice: return 21
        case .setAlias: return 22
        case .getAliases: return 23
        }
    }

    /// Reads a request of `kind` from its fields.
    init(kind: UInt8, from body: inout ByteBuffer) throws {
        switch kind {
        case 1:
            let mode = try body.readNativeString(field: "mode", maximumLength: NativeLimits.mode)
            let maxPlayers = try body.readWireByte(field: "max players")
            let label = try body.readNativeString(field: "label", maximumLength: NativeLimits.identifier)
            let flags = try body.readWireByte(field: "flags")
            self = .createMatch(mode: mode, maxPlayers: maxPlayers, label: label, isPrivate: flags & 1 != 0)
        case 2:
            self = .joinMatch(try body.readNativeUInt64(field: "match id"))
        case 3:
            self = .leaveMatch(try body.readNativeUInt64(field: "match id"))
        case 4:
            self = .listMatches(try NativeLobbyQuery(from: &body))
        case 5:
            self = .subscribeLobby(mode: try body.readNativeString(field: "mode", maximumLength: NativeLimits.mode))
        case 6:
            self = .unsubscribeLobby(mode: try body.readNativeString(field: "mode", maximumLength: NativeLimits.mode))
        case 7:
            self = .joinByCode(try body.readNativeString(field: "invite code", maximumLength: NativeLimits.identifier))
        case 8:
            self = .matchmake(try NativeTicketRequest(from: &body))
        case 9:
            self = .cancelTicket(try body.readNativeString(field: "ticket id", maximumLength: NativeLimits.identifier))
        case 10:
            self = .createParty(maxSize: try body.readWireByte(field: "max size"))
        case 11:
            self = .joinParty(try body.readNativeString(field: "party id", maximumLength: NativeLimits.identifier))
        case 12:
            self = .leaveParty(try body.readNativeString(field: "party id", maximumLength: NativeLimits.identifier))
        case 13:
            self = .getProfile(playerID: try body.readNativeString(field: "player id", maximumLength: NativeLimits.identifier))
        case 14:
            self = .getMatchHistory(
                playerID: try body.readNativeString(field: "player id", maximumLength: NativeLimits.identifier),
                limit: try body.readWireByte(field: "limit"))
        case 15:
            self = .getLeaderboard(
                game: try body.readNativeString(field: "game", maximumLength: NativeLimits.mode),
                around: try body.readNativeString(field: "around player id", maximumLength: NativeLimits.identifier),
                limit: try body.readWireByte(field: "limit"))
        case 16:
            self = .readValue(key: try body.readNativeString(field: "key", maximumLength: NativeLimits.identifier))
        case 17:
            self = .writeValue(
                key: try body.readNativeString(field: "key", maximumLength: NativeLimits.identifier),
                value: try body.readNativeBytes(field: "value"))
        case 18:
            self = .deleteValue(key: try body.readNativeString(field: "key", maximumLength: NativeLimits.identifier))
        case 19:
            self = .createLinkCode
        case 20:
            self = .listDevices
        case 21:
            self = .unlinkDevice(deviceID: try body.readNativeString(field: "device id", maximumLength: 255))
        case 22:
            self = .setAlias(try body.readNativeString(field: "alias", maximumLength: NativeLimits.identifier))
        case 23:
            let count = Int(try body.readWireByte(field: "player count"))
            var playerIDs: [String] = []
            playerIDs.reserveCapacity(count)
            for _ in 0..<count { playerIDs.append(try body.readNativeString(field: "player id", maximumLength: NativeLimits.identifier)) }
            self = .getAliases(playerIDs: playerIDs)
        default:
            throw NativeWireError.unknownRequestKind(kind)
        }
    }

    /// Writes the kind byte and the fields.
    func encode(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.kind)
        switch self {
        case .createMatch(let mode, let maxPlayers, let label, let isPrivate):
            buffer.writeNativeString(mode)
            buffer.writeWireByte(maxPlayers)
            buffer.writeNativeString(label)
            buffer.writeWireByte(isPrivate ? 1 : 0)
        case .joinMatch(let matchID), .leaveMatch(let matchID):
            buffer.writeNativeUInt64(matchID)
        case .listMatches(let query):
            query.encode(into: &buffer)
        case .subscribeLobby(let mode), .unsubscribeLobby(let mode):
            buffer.writeNativeString(mode)
        case .joinByCode(let text), .cancelTicket(let text), .joinParty(let text), .leaveParty(let text), .setAlias(let text):
            buffer.writeNativeString(text)
        case .matchmake(let ticket):
            ticket.encode(into: &buffer)
        case .createParty(let maxSize):
            buffer.writeWireByte(maxSize)
        case .getProfile(let playerID):
            buffer.writeNativeString(playerID)
        case .getMatchHistory(let playerID, let limit):
            buffer.writeNativeString(playerID)
            buffer.writeWireByte(limit)
        case .getLeaderboard(let game, let around, let limit):
            buffer.writeNativeString(game)
            buffer.writeNativeString(around)
            buffer.writeWireByte(limit)
        case .readValue(let key), .deleteValue(let key):
            buffer.writeNativeString(key)
        case .writeValue(let key, let value):
            buffer.writeNativeString(key)
            buffer.writeNativeBytes(value)
        case .createLinkCode, .listDevices:
            break
        case .unlinkDevice(let deviceID):
            buffer.writeNativeString(deviceID)
        case .getAliases(let playerIDs):
            // A count over 255 cannot be written; the client library refuses it before.
            buffer.writeWireByte(UInt8(clamping: playerIDs.count))
            for playerID in playerIDs.prefix(Int(UInt8.max)) { buffer.writeNativeString(playerID) }
        }
    }
}

/// What a successful request returns.
public enum NativeResponse: Hashable, Sendable {
    /// Kind 1: the player is in this match (create, join, join by code).
    case matchJoined(NativeMatchInfo)
    /// Kind 2: the player has left this match.
    case matchLeft(MatchIdentifier)
    /// Kind 3: one page of a lobby; `next` is the cursor for the following page, 0 at the end.
    case matchList(entries: [NativeLobbyEntry], next: MatchIdentifier)
    /// Kind 4: lobby updates for `mode` follow, the first ones listing the `count` open matches.
    case lobbySubscribed(mode: String, count: UInt32)
    /// Kind 5: the request was done and has nothing to return (unsubscribe, cancel, leave party).
    case done
    /// Kind 6: the ticket is queued under this id.
    case ticketQueued(ticketID: String)
    /// Kind 7: the player's party, as it is now.
    case party(NativePartyInfo)
    /// Kind 8: a player's profile (GET_PROFILE).
    case profile(NativeProfile)
    /// Kind 9: a player's matches, newest first (GET_MATCH_HISTORY).
    case matchHistory(playerID: String, matches: [NativeMatchSummary])
    /// Kind 10: part of a game's leaderboard, best first (GET_LEADERBOARD).
    case leaderboard(game: String, entries: [NativeLeaderboardEntry])
    /// Kind 11: the value under `key`, or nil when there is none (READ_VALUE).
    case value(key: String, value: ByteBuffer?)
    /// Kind 12: a link code for a new device, and when it expires (Unix milliseconds) (CREATE_LINK_CODE).
    case linkCode(code: String, expiresAt: UInt64)
    /// Kind 13: the player's devices, the longest linked first (LIST_DEVICES).
    case devices([NativeDevice])
    /// Kind 14: the aliases of the players asked for that exist, in the order asked, each once
    /// (GET_ALIASES).
    case aliases([NativePlayerAlias])

    /// The response kind byte.
    public var kind: UInt8 {
        switch self {
        case .matchJoined: return 1
        case .matchLeft: return 2
        case .matchList: return 3
        case .lobbySubscribed: return 4
        case .done: return 5
        case .ticketQueued: return 6
        case .party: return 7
        case .profile: return 8
        case .matchHistory: return 9
        case .leaderboard: return 10
        case .value: return 11
        case .linkCode: return 12
        case .devices: return 13
        case .aliases: return 14
        }
    }

    /// Reads a response of `kind` from its fields.
    init(kind: UInt8, from body: inout ByteBuffer) throws {
        switch kind {
        case 1:
            self = .matchJoined(try NativeMatchInfo(from: &body))
        case 2:
            self = .matchLeft(try body.readNativeUInt64(field: "match id"))
        case 3:
            let count = Int(try body.readNativeUInt16(field: "entry count"))
            var entries: [NativeLobbyEntry] = []
            entries.reserveCapacity(min(count, 256))
            for _ in 0..<count { entries.append(try NativeLobbyEntry(from: &body)) }
            self = .matchList(entries: entries, next: try body.readNativeUInt64(field: "next"))
        case 4:
            self = .lobbySubscribed(
                mode: try body.readNativeString(field: "mode", maximumLength: NativeLimits.mode),
                count: try body.readWireInt(field: "count"))
        case 5:
            self = .done
        case 6:
            self = .ticketQueued(ticketID: try body.readNativeString(field: "ticket id", maximumLength: NativeLimits.identifier))
        case 7:
            self = .party(try NativePartyInfo(from: &body))
        case 8:
            self = .profile(try NativeProfile(from: &body))
        case 9:
            let playerID = try body.readNativeString(field: "player id", maximumLength: NativeLimits.identifier)
            let count = Int(try body.readWireByte(field: "match count"))
            var matches: [NativeMatchSummary] = []
            matches.reserveCapacity(count)
            for _ in 0..<count { matches.append(try NativeMatchSummary(from: &body)) }
            self = .matchHistory(playerID: playerID, matches: matches)
        case 10:
            let game = try body.readNativeString(field: "game", maximumLength: NativeLimits.mode)
            let count = Int(try body.readWireByte(field: "entry count"))
            var entries: [NativeLeaderboardEntry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count { entries.append(try NativeLeaderboardEntry(from: &body)) }
            self = .leaderboard(game: game, entries: entries)
        case 11:
            let key = try body.readNativeString(field: "key", maximumLength: NativeLimits.identifier)
            let found = try body.readWireByte(field: "found")
            guard found <= 1 else { throw NativeWireError.invalidValue(field: "found", value: UInt64(found)) }
            let value = try body.readNativeBytes(field: "value")
            self = .value(key: key, value: found == 1 ? value : nil)
        case 12:
            self = .linkCode(
                code: try body.readNativeString(field: "link code", maximumLength: NativeLimits.identifier),
                expiresAt: try body.readNativeUInt64(field: "expires at"))
        case 13:
            let count = Int(try body.readWireByte(field: "device count"))
            var devices: [NativeDevice] = []
            devices.reserveCapacity(count)
            for _ in 0..<count { devices.append(try NativeDevice(from: &body)) }
            self = .devices(devices)
        case 14:
            let count = Int(try body.readWireByte(field: "alias count"))
            var aliases: [NativePlayerAlias] = []
            aliases.reserveCapacity(count)
            for _ in 0..<count { aliases.append(try NativePlayerAlias(from: &body)) }
            self = .aliases(aliases)
        default:
            throw NativeWireError.unknownResponseKind(kind)
        }
    }

    /// Writes the kind byte and the fields.
    func encode(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.kind)
        switch self {
        case .matchJoined(let info):
            info.encode(into: &buffer)
        case .matchLeft(let matchID):
            buffer.writeNativeUInt64(matchID)
        case .matchList(let entries, let next):
            buffer.writeNativeUInt16(UInt16(entries.count))
            for entry in entries { entry.encode(into: &buffer) }
            buffer.writeNativeUInt64(next)
        case .lobbySubscribed(let mode, let count):
            buffer.writeNativeString(mode)
            buffer.writeWireInt(count)
        case .done:
            break
        case .ticketQueued(let ticketID):
            buffer.writeNativeString(ticketID)
        case .party(let party):
            party.encode(into: &buffer)
        case .profile(let profile):
            profile.encode(into: &buffer)
        case .matchHistory(let playerID, let matches):
            buffer.writeNativeString(playerID)
            buffer.writeWireByte(UInt8(matches.count))
            for match in matches { match.encode(into: &buffer) }
        case .leaderboard(let game, let entries):
            buffer.writeNativeString(game)
            buffer.writeWireByte(UInt8(entries.count))
            for entry in entries { entry.encode(into: &buffer) }
        case .value(let key, let value):
            buffer.writeNativeString(key)
            buffer.writeWireByte(value == nil ? 0 : 1)
            buffer.writeNativeBytes(value ?? ByteBuffer())
        case .linkCode(let code, let expiresAt):
            buffer.writeNativeString(code)
            buffer.writeNativeUInt64(expiresAt)
        case .devices(let devices):
            buffer.writeWireByte(UInt8(clamping: devices.count))
            for device in devices.prefix(Int(UInt8.max)) { device.encode(into: &buffer) }
        case .aliases(let aliases):
            buffer.writeWireByte(UInt8(clamping: aliases.count))
            for alias in aliases.prefix(Int(UInt8.max)) { alias.encode(into: &buffer) }
        }
    }
}
