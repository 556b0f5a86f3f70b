import NIOCore

/// Every message a Cat Race client may send (client → server).
public enum CatRaceClientMessage: Sendable, Hashable {
    /// Type 0.
    case playerConnected(PlayerConnected)
    /// Type 2.
    case startMatch(StartMatch)
    /// Type 4.
    case movedSelf(MovedSelf)
    /// Type 7.
    case restartMatch
    /// Type 8.
    case notifyReady(NotifyReady)

    /// Decodes a frame body (type byte and fields) as the server reads it.
    /// - Throws: ``WireError`` for an empty body, an unknown type, a server-only type or a bad field.
    public init(frameBody: ByteBuffer) throws {
        var body = frameBody
        guard let typeByte = body.readInteger(as: UInt8.self) else { throw WireError.emptyFrame }
        guard let type = CatRaceMessageType(rawValue: typeByte) else { throw WireError.unknownMessageType(typeByte) }
        switch type {
        case .playerConnected: self = .playerConnected(try PlayerConnected(decodingFields: &body))
        case .startMatch: self = .startMatch(try StartMatch(decodingFields: &body))
        case .movedSelf: self = .movedSelf(try MovedSelf(decodingFields: &body))
        case .restartMatch: self = .restartMatch
        case .notifyReady: self = .notifyReady(try NotifyReady(decodingFields: &body))
        case .notInMatch, .matchStarted, .playerMoved, .gameOver: throw WireError.wrongDirection(messageType: typeByte)
        }
    }

    /// Writes the whole frame.
    public func encodeFrame(into buffer: inout ByteBuffer) {
        switch self {
        case .playerConnected(let message): message.encodeFrame(into: &buffer)
        case .startMatch(let message): message.encodeFrame(into: &buffer)
        case .movedSelf(let message): message.encodeFrame(into: &buffer)
        case .restartMatch: RestartMatch().encodeFrame(into: &buffer)
        case .notifyReady(let message): message.encodeFrame(into: &buffer)
        }
    }
}
