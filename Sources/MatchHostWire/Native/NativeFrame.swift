import NIOCore

/// The frame kind byte that starts every native frame body.
public enum NativeFrameKind: UInt8, Sendable, CaseIterable {
    /// C→S: protocol version and game id; the first frame of every connection.
    case hello = 0x01
    /// S→C: the handshake is accepted; the server's timing and limits.
    case welcome = 0x02
    /// C→S: prove who the player is (device or session token).
    case authenticate = 0x03
    /// S→C: authentication succeeded; a new session.
    case authenticated = 0x04
    /// C→S: reattach to a session within its grace period.
    case resume = 0x05
    /// S→C: the session is reattached; what the server had received.
    case resumed = 0x06
    /// Either way: a fatal error; the sender closes the connection after it.
    case error = 0x07
    /// Either way: a heartbeat; the other side answers with ``pong``.
    case ping = 0x08
    /// Either way: the answer to a ``ping``, echoing its value.
    case pong = 0x09
    /// Either way: everything up to a sequence number has arrived.
    case ack = 0x0A
    /// Either way: a sequenced message that is resent until acknowledged.
    case reliable = 0x0B
    /// Either way: a message that is not sequenced, acknowledged or resent.
    case unreliable = 0x0C
    /// C→S: end the session now (log out); its matches see the player leave.
    case goodbye = 0x0D
}

/// How a client proves who its player is.
public enum NativeCredentials: Hashable, Sendable {
    /// A device: its id, chosen by the client, and the secret the server issued it on first
    /// contact (empty on first contact).
    case device(id: String, secret: String)
    /// A session token issued by this server.
    case token(String)
    /// A new device joining an existing player: the link code one of the player's devices got
    /// (`CREATE_LINK_CODE`), and this device's id and secret, as on a first contact (the secret
    /// chosen by the client, or empty for the server to issue one). Once linked, the device
    /// signs in with ``device(id:secret:)``.
    case link(code: String, deviceID: String, secret: String)
}

/// What the server says when a client has authenticated.
public struct NativeAuthenticated: Hashable, Sendable {
    /// The player's id on this server.
    public var playerID: String
    /// A device secret issued on this device's first contact; empty otherwise. The client must
    /// store it: it is the only way back to the same player from this device.
    public var deviceSecret: String
    /// A signed token that authenticates the player on later connections until it expires.
    public var sessionToken: String
    /// When ``sessionToken`` expires, in seconds since 1970 (UTC).
    public var tokenExpiresAt: UInt64
    /// The new session's id.
    public var sessionID: String
    /// The secret that resumes this session; only its holder can resume it.
    public var resumeToken: String
    /// How long the server keeps the session after its connection drops, in milliseconds.
    public var sessionGraceMilliseconds: UInt32

    /// Creates the message.
    public init(
        playerID: String, deviceSecret: String, sessionToken: String, tokenExpiresAt: UInt64, sessionID: String,
        resumeToken: String, sessionGraceMilliseconds: UInt32
    ) {
        self.playerID = playerID
        self.deviceSecret = deviceSecret
        self.sessionToken = sessionToken
        self.tokenExpiresAt = tokenExpiresAt
        self.sessionID = sessionID
        self.resumeToken = resumeToken
        self.sessionGraceMilliseconds = sessionGraceMilliseconds
    }
}

/// What the server announces once the handshake is accepted.
public struct NativeWelcome: Hashable, Sendable {
    /// The protocol version both sides now speak.
    public var version: UInt16
    /// How often the server pings, in milliseconds.
    public var heartbeatMilliseconds: UInt32
    /// After this long without receiving anything, either side may drop the connection.
    public var idleTimeoutMilliseconds: UInt32
    /// The largest frame body the server accepts.
    public var maximumFrameBytes: UInt32

    /// Creates the message.
    public init(version: UInt16, heartbeatMilliseconds: UInt32, idleTimeoutMilliseconds: UInt32, maximumFrameBytes: UInt32) {
        self.version = version
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.maximumFrameBytes = maximumFrameBytes
    }
}

/// One native frame body, decoded. Both sides use this type; each refuses the kinds that only
/// it may send (``NativeFrameKind`` documents the direction).
public enum NativeFrame: Hashable, Sendable {
    /// C→S `HELLO`.
    case hello(version: UInt16, gameID: String)
    /// S→C `WELCOME`.
    case welcome(NativeWelcome)
    /// C→S `AUTHENTICATE`.
    case authenticate(NativeCredentials)
    /// S→C `AUTHENTICATED`.
    case authenticated(NativeAuthenticated)
    /// C→S `RESUME`: the session, its resume token, and the last server sequence number the
    /// client received.
    case resume(sessionID: String, resumeToken: String, lastReceived: UInt64)
    /// S→C `RESUMED`: the last client sequence number the server received.
    case resumed(lastReceived: UInt64)
    /// Either way `ERROR`.
    case error(NativeError)
    /// Either way `PING`, carrying a value the answer echoes (the sender's clock, typically).
    case ping(UInt64)
    /// Either way `PONG`.
    case pong(UInt64)
    /// Either way `ACK`.
    case ack(UInt64)
    /// Either way `RELIABLE`: sequence number, piggybacked ack, and the message bytes (type byte first).
    case reliable(sequence: UInt64, ack: UInt64, message: ByteBuffer)
    /// Either way `UNRELIABLE`: the message bytes.
    case unreliable(message: ByteBuffer)
    /// C→S `GOODBYE`.
    case goodbye

    /// The version of the protocol this code speaks.
    public static let protocolVersion: UInt16 = 1
    /// The bytes a `RELIABLE` frame adds in front of its message: length, kind, sequence, ack.
    public static let reliableHeaderSize = 4 + 1 + 8 + 8
    /// The bytes an `UNRELIABLE` frame adds in front of its message: length, kind.
    public static let unreliableHeaderSize = 4 + 1

    /// Decodes a frame body (without its length prefix). Message bytes are slices of `frameBody`.
    public init(frameBody: ByteBuffer) throws {
        var body = frameBody
        let raw = try body.readWireByte(field: "frame kind")
        guard let kind = NativeFrameKind(rawValue: raw) else { throw NativeWireError.unknownFrameKind(raw) }
        switch kind {
        case .hello:
            self = .hello(
                version: try body.readNativeUInt16(field: "version"),
                gameID: try body.readNativeString(field: "game id", maximumLength: 255))
        case .welcome:
            self = .welcome(
                NativeWelcome(
                    version: try body.readNativeUInt16(field: "version"),
                    heartbeatMilliseconds: try body.readWireInt(field: "heartbeat"),
                    idleTimeoutMilliseconds: try body.readWireInt(field: "idle timeout"),
                    maximumFrameBytes: try body.readWireInt(field: "maximum frame")))
        case .authenticate:
            let method = try body.readWireByte(field: "method")
            switch method {
            case 1:
                self = .authenticate(
                    .device(
                        id: try body.readNativeString(field: "device id", maximumLength: 255),
                        secret: try body.readNativeString(field: "device secret", maximumLength: 255)))
            case 2:
                self = .authenticate(.token(try body.readNativeString(field: "session token", maximumLength: 1024)))
            case 3:
                self = .authenticate(
                    .link(
                        code: try body.readNativeString(field: "link code", maximumLength: NativeLimits.identifier),
                        deviceID: try body.readNativeString(field: "device id", maximumLength: 255),
                        secret: try body.readNativeString(field: "device secret", maximumLength: 255)))
            default:
                throw NativeWireError.unknownAuthenticationMethod(method)
            }
        case .authenticated:
            self = .authenticated(
                NativeAuthenticated(
                    playerID: try body.readNativeString(field: "player id", maximumLength: 255),
                    deviceSecret: try body.readNativeString(field: "device secret", maximumLength: 255),
                    sessionToken: try body.readNativeString(field: "session token", maximumLength: 1024),
                    tokenExpiresAt: try body.readNativeUInt64(field: "token expiry"),
                    sessionID: try body.readNativeString(field: "session id", maximumLength: 255),
                    resumeToken: try body.readNativeString(field: "resume token", maximumLength: 255),
                    sessionGraceMilliseconds: try body.readWireInt(field: "session grace")))
        case .resume:
            self = .resume(
                sessionID: try body.readNativeString(field: "session id", maximumLength: 255),
                resumeToken: try body.readNativeString(field: "resume token", maximumLength: 255),
                lastReceived: try body.readNativeUInt64(field: "last received"))
        case .resumed:
            self = .resumed(lastReceived: try body.readNativeUInt64(field: "last received"))
        case .error:
            let code = NativeErrorCode(rawValue: try body.readNativeUInt16(field: "error code"))
            self = .error(NativeError(code, try body.readNativeString(field: "error message", maximumLength: 4096)))
        case .ping:
            self = .ping(try body.readNativeUInt64(field: "ping value"))
        case .pong:
            self = .pong(try body.readNativeUInt64(field: "pong value"))
        case .ack:
            self = .ack(try body.readNativeUInt64(field: "ack"))
        case .reliable:
            let sequence = try body.readNativeUInt64(field: "sequence")
            let ack = try body.readNativeUInt64(field: "ack")
            guard body.readableBytes > 0 else {
                throw WireError.truncated(field: "message type", needed: 1, available: 0)
            }
            self = .reliable(sequence: sequence, ack: ack, message: body)
        case .unreliable:
            guard body.readableBytes > 0 else {
                throw WireError.truncated(field: "message type", needed: 1, available: 0)
            }
            self = .unreliable(message: body)
        case .goodbye:
            self = .goodbye
        }
    }

    /// The kind byte of this frame.
    public var kind: NativeFrameKind {
        switch self {
        case .hello: return .hello
        case .welcome: return .welcome
        case .authenticate: return .authenticate
        case .authenticated: return .authenticated
        case .resume: return .resume
        case .resumed: return .resumed
        case .error: return .error
        case .ping: return .ping
        case .pong: return .pong
        case .ack: return .ack
        case .reliable: return .reliable
        case .unreliable: return .unreliable
        case .goodbye: return .goodbye
        }
    }

    /// Writes the whole frame (length prefix, kind, fields) into `buffer`.
    public func encodeFrame(into buffer: inout ByteBuffer) {
        buffer.writeFrame { body in
            body.writeWireByte(self.kind.rawValue)
            switch self {
            case .hello(let version, let gameID):
                body.writeNativeUInt16(version)
                body.writeNativeString(gameID)
            case .welcome(let welcome):
                body.writeNativeUInt16(welcome.version)
                body.writeWireInt(welcome.heartbeatMilliseconds)
                body.writeWireInt(welcome.idleTimeoutMilliseconds)
                body.writeWireInt(welcome.maximumFrameBytes)
            case .authenticate(.device(let id, let secret)):
                body.writeWireByte(1)
                body.writeNativeString(id)
                body.writeNativeString(secret)
            case .authenticate(.token(let token)):
                body.writeWireByte(2)
                body.writeNativeString(token)
            case .authenticate(.link(let code, let deviceID, let secret)):
                body.writeWireByte(3)
                body.writeNativeString(code)
                body.writeNativeString(deviceID)
                body.writeNativeString(secret)
            case .authenticated(let value):
                body.writeNativeString(value.playerID)
                body.writeNativeString(value.deviceSecret)
                body.writeNativeString(value.sessionToken)
                body.writeNativeUInt64(value.tokenExpiresAt)
                body.writeNativeString(value.sessionID)
                body.writeNativeString(value.resumeToken)
                body.writeWireInt(value.sessionGraceMilliseconds)
            case .resume(let sessionID, let resumeToken, let lastReceived):
                body.writeNativeString(sessionID)
                body.writeNativeString(resumeToken)
                body.writeNativeUInt64(lastReceived)
            case .resumed(let lastReceived):
                body.writeNativeUInt64(lastReceived)
            case .error(let error):
                body.writeNativeUInt16(error.code.rawValue)
                body.writeNativeString(error.message)
            case .ping(let value), .pong(let value), .ack(let value):
                body.writeNativeUInt64(value)
            case .reliable(let sequence, let ack, let message):
                body.writeNativeUInt64(sequence)
                body.writeNativeUInt64(ack)
                body.writeImmutableBuffer(message)
            case .unreliable(let message):
                body.writeImmutableBuffer(message)
            case .goodbye:
                break
            }
        }
    }

    /// Encodes the whole frame into a new buffer.
    public func encodedFrame(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: 32)
        self.encodeFrame(into: &buffer)
        return buffer
    }
}

extension ByteBuffer {
    /// Appends a `RELIABLE` frame around `message` without building a ``NativeFrame``: the hot
    /// path of every session, which writes many of them into one outbound buffer.
    public mutating func writeReliableFrame(sequence: UInt64, ack: UInt64, message: ByteBuffer) {
        self.writeInteger(UInt32(1 + 8 + 8 + message.readableBytes), endianness: .big)
        self.writeInteger(NativeFrameKind.reliable.rawValue)
        self.writeInteger(sequence, endianness: .big)
        self.writeInteger(ack, endianness: .big)
        self.writeImmutableBuffer(message)
    }

    /// Appends an `UNRELIABLE` frame around `message`.
    public mutating func writeUnreliableFrame(message: ByteBuffer) {
        self.writeInteger(UInt32(1 + message.readableBytes), endianness: .big)
        self.writeInteger(NativeFrameKind.unreliable.rawValue)
        self.writeImmutableBuffer(message)
    }
}

/// Decoding errors particular to the native protocol.
public enum NativeWireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A frame's first byte named a frame kind this protocol does not define.
    case unknownFrameKind(UInt8)
    /// `AUTHENTICATE` named a method this protocol does not define.
    case unknownAuthenticationMethod(UInt8)
    /// A `REQUEST` named a request kind this protocol does not define.
    case unknownRequestKind(UInt8)
    /// A `RESPONSE` named a response kind this protocol does not define.
    case unknownResponseKind(UInt8)
    /// A field held a value outside its range.
    case invalidValue(field: String, value: UInt64)

    /// A one-line explanation for logs and error replies.
    public var description: String {
        switch self {
        case .unknownFrameKind(let kind): return "unknown frame kind \(kind)"
        case .unknownAuthenticationMethod(let method): return "unknown authentication method \(method)"
        case .unknownRequestKind(let kind): return "unknown request kind \(kind)"
        case .unknownResponseKind(let kind): return "unknown response kind \(kind)"
        case .invalidValue(let field, let value): return "\(field) cannot be \(value)"
        }
    }
}
