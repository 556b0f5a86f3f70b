import NIOCore

/// The message type byte that starts a native message (inside a `RELIABLE` or `UNRELIABLE` frame).
/// Client messages are numbered from 0x20, server messages from 0x40.
public enum NativeMessageType: UInt8, Sendable, CaseIterable {
    /// C→S `REQUEST`: something the server answers with `RESPONSE` or `REQUEST_ERROR`.
    case request = 0x20
    /// C→S `SEND_DATA`: relay bytes to the other players of a match.
    case sendData = 0x21
    /// C→S `MATCH_INPUT`: an input for the game a match runs, in the game's own encoding.
    case matchInput = 0x22
    /// S→C `RESPONSE`: a request succeeded.
    case response = 0x40
    /// S→C `REQUEST_ERROR`: a request failed.
    case requestError = 0x41
    /// S→C `PRESENCE`: a player of a match joined, disconnected, reconnected or left.
    case presence = 0x42
    /// S→C `MATCH_DATA`: bytes another player sent.
    case matchData = 0x43
    /// S→C `MATCH_ENDED`: a match the player is in has ended.
    case matchEnded = 0x44
    /// S→C `MATCH_EVENT`: an event of the game a match runs, in the game's own encoding.
    case matchEvent = 0x45
    /// S→C `LOBBY_UPDATE`: matches of a subscribed lobby opened, changed or closed.
    case lobbyUpdate = 0x46
    /// S→C `MATCHMAKER_MATCHED`: a ticket found its group; the player is seated in the match.
    case matchmakerMatched = 0x47
    /// S→C `PARTY_UPDATE`: the player's party changed (members, or disbanded).
    case partyUpdate = 0x48
    /// S→C `TICKET_CANCELLED`: a queued ticket was taken out of the queue by the server.
    case ticketCancelled = 0x49
    /// S→C `MATCH_RESUMED`: a turn-based match the player is in continues after a server restart;
    /// the player has its seat again.
    case matchResumed = 0x4A
}

/// How a player's presence in a match changed.
public enum NativePresenceChange: UInt8, Hashable, Sendable {
    /// Took a seat (or had one reserved).
    case joined = 1
    /// Lost its connection; its seat is kept for the grace period.
    case disconnected = 2
    /// Came back (or arrived at a reserved seat).
    case reconnected = 3
    /// Gone for good.
    case left = 4
}

/// Why a player left, in a `PRESENCE` left message.
public enum NativeLeaveReason: UInt8, Hashable, Sendable {
    /// Not a leave.
    case none = 0
    /// The player asked to leave.
    case asked = 1
    /// The player's grace period ran out.
    case graceExpired = 2
    /// The player's session ended (logged out, or its session grace ran out).
    case sessionEnded = 3
}

/// A message from a client, inside a `RELIABLE` or `UNRELIABLE` frame.
public enum NativeClientMessage: Hashable, Sendable {
    /// `REQUEST`: an id the response will carry, and the request.
    case request(id: UInt32, NativeRequest)
    /// A `REQUEST` of a kind this side does not know (a newer client's, say): the rest of its
    /// body is skipped, and the server answers it with `REQUEST_ERROR` `UNKNOWN_REQUEST`
    /// rather than closing the connection.
    case unknownRequest(id: UInt32, kind: UInt8)
    /// `SEND_DATA`: bytes for chosen players of a match (all others when `targets` is empty).
    case sendData(matchID: MatchIdentifier, targets: [String], payload: ByteBuffer)
    /// `MATCH_INPUT`: an input for the match's game (for Cat Race, a Cat Race client message body).
    case matchInput(matchID: MatchIdentifier, input: ByteBuffer)

    /// Decodes a message (type byte first). A payload is a slice of `message`.
    public init(message: ByteBuffer) throws {
        var body = message
        let raw = try body.readWireByte(field: "message type")
        guard let type = NativeMessageType(rawValue: raw) else { throw WireError.unknownMessageType(raw) }
        switch type {
        case .request:
            let id = try body.readWireInt(field: "request id")
            let kind = try body.readWireByte(field: "request kind")
            do {
                self = .request(id: id, try NativeRequest(kind: kind, from: &body))
            } catch NativeWireError.unknownRequestKind {
                self = .unknownRequest(id: id, kind: kind)
            }
        case .sendData:
            let matchID = try body.readNativeUInt64(field: "match id")
            let count = Int(try body.readWireByte(field: "target count"))
            var targets: [String] = []
            targets.reserveCapacity(count)
            for _ in 0..<count {
                targets.append(try body.readNativeString(field: "target player id", maximumLength: NativeLimits.identifier))
            }
            self = .sendData(matchID: matchID, targets: targets, payload: try body.readNativeBytes(field: "payload"))
        case .matchInput:
            self = .matchInput(
                matchID: try body.readNativeUInt64(field: "match id"), input: try body.readNativeBytes(field: "input"))
        case .response, .requestError, .presence, .matchData, .matchEnded, .matchEvent, .lobbyUpdate, .matchmakerMatched,
            .partyUpdate, .ticketCancelled, .matchResumed:
            throw WireError.wrongDirection(messageType: raw)
        }
    }

    /// Writes the message (type byte first, no frame header).
    public func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .request(let id, let request):
            buffer.writeWireByte(NativeMessageType.request.rawValue)
            buffer.writeWireInt(id)
            request.encode(into: &buffer)
        case .unknownRequest(let id, let kind):
            buffer.writeWireByte(NativeMessageType.request.rawValue)
            buffer.writeWireInt(id)
            buffer.writeWireByte(kind)
        case .sendData(let matchID, let targets, let payload):
            buffer.writeWireByte(NativeMessageType.sendData.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeWireByte(UInt8(targets.count))
            for target in targets { buffer.writeNativeString(target) }
            buffer.writeNativeBytes(payload)
        case .matchInput(let matchID, let input):
            buffer.writeWireByte(NativeMessageType.matchInput.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeNativeBytes(input)
        }
    }

    /// Encodes the message into a new buffer.
    public func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 32)
        self.encode(into: &buffer)
        return buffer
    }
}

/// A message from the server, inside a `RELIABLE` or `UNRELIABLE` frame.
public enum NativeServerMessage: Hashable, Sendable {
    /// `RESPONSE` to the request with this id.
    case response(id: UInt32, NativeResponse)
    /// `REQUEST_ERROR` for the request with this id.
    case requestError(id: UInt32, NativeError)
    /// `PRESENCE`: `player` of the match changed presence.
    case presence(matchID: MatchIdentifier, playerID: String, change: NativePresenceChange, reason: NativeLeaveReason)
    /// `MATCH_DATA`: bytes from `sender` in the match.
    case matchData(matchID: MatchIdentifier, sender: String, payload: ByteBuffer)
    /// `MATCH_ENDED`: the match is over, for this reason.
    case matchEnded(matchID: MatchIdentifier, reason: String)
    /// `MATCH_EVENT`: an event of the match's game (for Cat Race, a Cat Race server message body).
    case matchEvent(matchID: MatchIdentifier, event: ByteBuffer)
    /// `LOBBY_UPDATE`: changes to a subscribed lobby, oldest first.
    case lobbyUpdate(mode: String, changes: [NativeLobbyChange])
    /// `MATCHMAKER_MATCHED`: the ticket's group was formed; the player is seated in `match`.
    case matchmakerMatched(ticketID: String, match: NativeMatchInfo)
    /// `PARTY_UPDATE`: the player's party as it is now (no members: disbanded).
    case partyUpdate(NativePartyInfo)
    /// `TICKET_CANCELLED`: the server took the ticket out of the queue, for this reason.
    case ticketCancelled(ticketID: String, reason: String)
    /// `MATCH_RESUMED`: after a server restart, the player is seated again in this stored
    /// turn-based match (same fields as MATCH_JOINED); the game's STATE follows.
    case matchResumed(NativeMatchInfo)

    /// Decodes a message (type byte first). A payload is a slice of `message`.
    public init(message: ByteBuffer) throws {
        var body = message
        let raw = try body.readWireByte(field: "message type")
        guard let type = NativeMessageType(rawValue: raw) else { throw WireError.unknownMessageType(raw) }
        switch type {
        case .response:
            let id = try body.readWireInt(field: "request id")
            let kind = try body.readWireByte(field: "response kind")
            self = .response(id: id, try NativeResponse(kind: kind, from: &body))
        case .requestError:
            let id = try body.readWireInt(field: "request id")
            let code = NativeErrorCode(rawValue: try body.readNativeUInt16(field: "error code"))
            self = .requestError(id: id, NativeError(code, try body.readNativeString(field: "error message", maximumLength: NativeLimits.message)))
        case .presence:
            let matchID = try body.readNativeUInt64(field: "match id")
            let player = try body.readNativeString(field: "player id", maximumLength: NativeLimits.identifier)
            let rawChange = try body.readWireByte(field: "presence change")
            guard let change = NativePresenceChange(rawValue: rawChange) else {
                throw NativeWireError.invalidValue(field: "presence change", value: UInt64(rawChange))
            }
            let rawReason = try body.readWireByte(field: "leave reason")
            guard let reason = NativeLeaveReason(rawValue: rawReason) else {
                throw NativeWireError.invalidValue(field: "leave reason", value: UInt64(rawReason))
            }
            self = .presence(matchID: matchID, playerID: player, change: change, reason: reason)
        case .matchData:
            self = .matchData(
                matchID: try body.readNativeUInt64(field: "match id"),
                sender: try body.readNativeString(field: "sender", maximumLength: NativeLimits.identifier),
                payload: try body.readNativeBytes(field: "payload"))
        case .matchEnded:
            self = .matchEnded(
                matchID: try body.readNativeUInt64(field: "match id"),
                reason: try body.readNativeString(field: "reason", maximumLength: NativeLimits.message))
        case .matchEvent:
            self = .matchEvent(
                matchID: try body.readNativeUInt64(field: "match id"), event: try body.readNativeBytes(field: "event"))
        case .lobbyUpdate:
            let mode = try body.readNativeString(field: "mode", maximumLength: NativeLimits.mode)
            let count = Int(try body.readNativeUInt16(field: "change count"))
            var changes: [NativeLobbyChange] = []
            changes.reserveCapacity(min(count, 256))
            for _ in 0..<count { changes.append(try NativeLobbyChange(from: &body)) }
            self = .lobbyUpdate(mode: mode, changes: changes)
        case .matchmakerMatched:
            self = .matchmakerMatched(
                ticketID: try body.readNativeString(field: "ticket id", maximumLength: NativeLimits.identifier),
                match: try NativeMatchInfo(from: &body))
        case .partyUpdate:
            self = .partyUpdate(try NativePartyInfo(from: &body))
        case .ticketCancelled:
            self = .ticketCancelled(
                ticketID: try body.readNativeString(field: "ticket id", maximumLength: NativeLimits.identifier),
                reason: try body.readNativeString(field: "reason", maximumLength: NativeLimits.message))
        case .matchResumed:
            self = .matchResumed(try NativeMatchInfo(from: &body))
        case .request, .sendData, .matchInput:
            throw WireError.wrongDirection(messageType: raw)
        }
    }

    /// Writes the message (type byte first, no frame header).
    public func encode(into buffer: inout ByteBuffer) {
        switch self {
        case .response(let id, let response):
            buffer.writeWireByte(NativeMessageType.response.rawValue)
            buffer.writeWireInt(id)
            response.encode(into: &buffer)
        case .requestError(let id, let error):
            buffer.writeWireByte(NativeMessageType.requestError.rawValue)
            buffer.writeWireInt(id)
            buffer.writeNativeUInt16(error.code.rawValue)
            buffer.writeNativeString(error.message)
        case .presence(let matchID, let playerID, let change, let reason):
            buffer.writeWireByte(NativeMessageType.presence.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeNativeString(playerID)
            buffer.writeWireByte(change.rawValue)
            buffer.writeWireByte(reason.rawValue)
        case .matchData(let matchID, let sender, let payload):
            buffer.writeWireByte(NativeMessageType.matchData.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeNativeString(sender)
            buffer.writeNativeBytes(payload)
        case .matchEnded(let matchID, let reason):
            buffer.writeWireByte(NativeMessageType.matchEnded.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeNativeString(reason)
        case .matchEvent(let matchID, let event):
            buffer.writeWireByte(NativeMessageType.matchEvent.rawValue)
            buffer.writeNativeUInt64(matchID)
            buffer.writeNativeBytes(event)
        case .lobbyUpdate(let mode, let changes):
            buffer.writeWireByte(NativeMessageType.lobbyUpdate.rawValue)
            buffer.writeNativeString(mode)
            buffer.writeNativeUInt16(UInt16(changes.count))
            for change in changes { change.encode(into: &buffer) }
        case .matchmakerMatched(let ticketID, let match):
            buffer.writeWireByte(NativeMessageType.matchmakerMatched.rawValue)
            buffer.writeNativeString(ticketID)
            match.encode(into: &buffer)
        case .partyUpdate(let party):
            buffer.writeWireByte(NativeMessageType.partyUpdate.rawValue)
            party.encode(into: &buffer)
        case .ticketCancelled(let ticketID, let reason):
            buffer.writeWireByte(NativeMessageType.ticketCancelled.rawValue)
            buffer.writeNativeString(ticketID)
            buffer.writeNativeString(reason)
        case .matchResumed(let match):
            buffer.writeWireByte(NativeMessageType.matchResumed.rawValue)
            match.encode(into: &buffer)
        }
    }

    /// Encodes the message into a new buffer.
    public func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 32)
        self.encode(into: &buffer)
        return buffer
    }
}
