import Foundation
import Hummingbird
import MatchHostCore
import MatchHostServer
import NIOCore

/// The admin endpoints' one action: banning a player and lifting the ban.
///
/// - `POST /api/players/{id}/ban`, with an optional JSON body `{"reason":"…"}`: bans the
///   player (its reason replacing an earlier ban's). Answers `{"player":…,"banned":true,
///   "reason":…,"since":…}` (`since` in Unix milliseconds) once the ban is committed, the
///   player's session has ended and its sign-ins are refused.
/// - `DELETE /api/players/{id}/ban`: lifts the ban; answers `{"player":…,"banned":false}`.
///
/// Both need `Authorization: Bearer <admin key>` (`<data>/admin.key`), or they answer 401:
/// whoever can reach the admin port may read it, but may only act with the key. (A web page
/// in the operator's browser cannot send that header to another origin, so it cannot act
/// either.) Other answers: 400 for a body or reason that is not valid, 413 for a body over
/// ``maximumBodyBytes``, 404 for a player the database does not know, 503 while the server
/// starts or stops or its database fails.
public enum PlayerBanEndpoints {
    /// The longest reason, in UTF-8 bytes: it goes to the player in one ERROR.
    public static let maximumReasonBytes = 200
    /// The largest body `POST …/ban` reads.
    public static let maximumBodyBytes = 4096

    /// What `POST …/ban` takes.
    public struct BanRequest: Codable, Sendable, Hashable {
        /// Why, told to the player; none: no reason given.
        public var reason: String?

        /// Creates a request.
        public init(reason: String? = nil) {
            self.reason = reason
        }
    }

    /// What both answer when they succeed.
    public struct BanState: Codable, Sendable, Hashable {
        /// The player's id.
        public var player: String
        /// Whether it is banned now.
        public var banned: Bool
        /// The ban's reason, while banned.
        public var reason: String?
        /// When it was banned (Unix milliseconds), while banned.
        public var since: Int64?
    }

    /// What the failures answer.
    public struct Failure: Codable, Sendable, Hashable {
        /// What went wrong.
        public var error: String
    }

    /// Adds both routes to `router`; `adminKey` is the bearer token they need.
    static func add(to router: Router<BasicRequestContext>, status: ServerStatus, adminKey: String) {
        router.post("api/players/:id/ban") { request, context -> Response in
            if let refusal = Self.unauthorized(request, adminKey: adminKey) { return refusal }
            let playerID = try context.parameters.require("id")
            let body = try await request.body.collect(upTo: Self.maximumBodyBytes)
            let ban: BanRequest
            if body.readableBytes == 0 {
                ban = BanRequest()
            } else {
                guard let decoded = try? JSONDecoder().decode(BanRequest.self, from: Data(body.readableBytesView)) else {
                    return try Self.failure(.badRequest, "the body must be JSON: {\"reason\":\"…\"}")
                }
                ban = decoded
            }
            let reason = ban.reason ?? ""
            guard reason.utf8.count <= Self.maximumReasonBytes else {
                return try Self.failure(.badRequest, "the reason is longer than \(Self.maximumReasonBytes) bytes")
            }
            guard !reason.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                return try Self.failure(.badRequest, "the reason holds a control character")
            }
            return try await Self.apply(reason: reason, to: playerID, status: status)
        }
        router.delete("api/players/:id/ban") { request, context -> Response in
            if let refusal = Self.unauthorized(request, adminKey: adminKey) { return refusal }
            return try await Self.apply(reason: nil, to: try context.parameters.require("id"), status: status)
        }
    }

    private static func apply(reason: String?, to playerID: String, status: ServerStatus) async throws -> Response {
        do {
            let ban = try await status.setBan(reason: reason, of: playerID)
            return try AdminEndpoints.json(
                BanState(player: playerID, banned: ban != nil, reason: ban?.reason, since: ban?.since.milliseconds), status: .ok)
        } catch GameStoreError.unknownPlayer {
            return try Self.failure(.notFound, "no player \(playerID)")
        } catch let error as ServerNotServing {
            return try Self.failure(.serviceUnavailable, error.description)
        } catch {
            return try Self.failure(.serviceUnavailable, "the database failed; nothing changed (\(error))")
        }
    }

    /// 401 unless the request carries the admin key as its bearer token.
    private static func unauthorized(_ request: Request, adminKey: String) -> Response? {
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

    private static func failure(_ status: HTTPResponse.Status, _ message: String) throws -> Response {
        try AdminEndpoints.json(Failure(error: message), status: status)
    }
}
