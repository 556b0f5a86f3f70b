import Foundation
import Hummingbird
import MatchHostCore
import MatchHostServer
import MatchHostWire

/// What every admin action (a change to a player: its ban, its devices) shares: the admin key
/// it needs, and how its failures are answered.
public enum AdminAction {
    /// The largest body an action reads: a larger one is answered 413.
    public static let maximumBodyBytes = 4096

    /// What an action's failures answer, as JSON.
    public struct Failure: Codable, Sendable, Hashable {
        /// What went wrong.
        public var error: String
    }

    /// 401 unless the request carries the admin key as its bearer token.
    static func unauthorized(_ request: Request, adminKey: String) -> Response? {
        let given = request.headers[.authorization].flatMap { value -> String? in
            // The scheme's name is case-insensitive (RFC 9110).
            guard value.lowercased().hasPrefix("bearer ") else { return nil }
            return String(value.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        }
        if let given, constantTimeEquals(given, adminKey) { return nil }
        var response =
            (try? Self.failure(.unauthorized, "this action needs the admin key (admin.key in the data directory) as a bearer token"))
            ?? Response(status: .unauthorized)
        response.headers[.wwwAuthenticate] = "Bearer"
        return response
    }

    /// A failure's answer: `status`, and `{"error": message}`.
    static func failure(_ status: HTTPResponse.Status, _ message: String) throws -> Response {
        try AdminEndpoints.json(Failure(error: message), status: status)
    }

    /// The answer to an action on `playerID` that threw `error`: 404 for a player or device the
    /// database does not know, 409 for a change its rules refuse (or a link code asked for while
    /// an unlink of the player was written), 503 while the server starts or
    /// stops or its database fails.
    static func failure(for error: any Error, playerID: PlayerID) throws -> Response {
        switch error {
        case GameStoreError.unknownPlayer:
            return try Self.failure(.notFound, "no player \(playerID)")
        case GameStoreError.unknownDevice(let deviceID):
            return try Self.failure(.notFound, "player \(playerID) has no device \(deviceID)")
        case GameStoreError.lastDevice, GameStoreError.tooManyDevices:
            return try Self.failure(.conflict, "\(error)")
        case let error as NativeError where error.code == .badArgument:
            return try Self.failure(.badRequest, error.message)
        case let error as NativeError where error.code == .linkRefused:
            // A link code asked for as an unlink of the player was being written.
            return try Self.failure(.conflict, error.message)
        case let error as ServerNotServing:
            return try Self.failure(.serviceUnavailable, error.description)
        default:
            return try Self.failure(.serviceUnavailable, "the database failed; nothing changed (\(error))")
        }
    }
}
