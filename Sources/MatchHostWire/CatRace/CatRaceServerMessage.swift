import NIOCore

/// Every message a Cat Race server may send (server → client).
public enum CatRaceServerMessage: Sendable, Hashable {
    /// Type 1.
    case notInMatch
    /// Type 3.
    case matchStarted(MatchStarted)
    /// Type 5.
    case playerMoved(PlayerMoved)
    /// Type 6.
    case gameOver(GameOver)
    /// Type 8.
    case notifyReady(NotifyReady)

    /// Decodes a frame body (type byte and fields) as a client reads it.
    public init(frameBody: ByteBuffer) throws {
        var body = frameBody
        guard let typeByte = body.readInteger(as: UInt8.self) else { throw WireError.emptyFrame }
        guard let type = CatRaceMessageType(rawValue: typeByte) else { throw WireError.unknownMessageType(typeByte) }
        switch type {
        case .notInMatch: self = .notInMatch
        case .matchStarted: self = .matchStarted(try MatchStarted(decodingFields: &body))
        case .playerMoved: self = .playerMoved(try PlayerMoved(decodingFields: &body))
        case .gameOver: self = .gameOver(try GameOver(decodingFields: &body))
        case .notifyReady: self = .notifyReady(try NotifyReady(decodingFields: &body))
        case .playerConnected, .startMatch, .movedSelf, .restartMatch:
            throw WireError.wrongDirection(messageType: typeByte)
        }
    }

    /// Writes the whole frame.
    public func encodeFrame(into buffer: inout ByteBuffer) {
        switch self {
        case .notInMatch: NotInMatch().encodeFrame(into: &buffer)
        case .matchStarted(let message): message.encodeFrame(into: &buffer)
        case .playerMoved(let message): message.encodeFrame(into: &buffer)
        case .gameOver(let message): message.encodeFrame(into: &buffer)
        case .notifyReady(let message): message.encodeFrame(into: &buffer)
        }
    }
}
