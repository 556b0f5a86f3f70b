import Foundation
import Hummingbird
import MatchHostCore
import MatchHostServer
import NIOCore

/// The admin endpoints that rename a player: an alias that must not be shown (an insult, a
/// name that is not the player's) is replaced by the operator.
///
/// - `PUT /api/players/{id}/alias`, with the JSON body `{"alias":"…"}`: the player's alias
///   becomes that, under the rules SET_ALIAS applies (`--max-alias-length` Unicode scalars, no
///   blank start or end, no invisible characters...). Answers `{"player":…,"alias":…}` once
///   it is committed.
/// - `DELETE /api/players/{id}/alias`: the player's alias goes back to its first one, the
///   first 8 characters of its id. Answers the same.
///
/// Profiles and leaderboards show the new alias from then on; the player may set another
/// with SET_ALIAS (ban one who keeps choosing what must not be shown). Both need the admin key
/// as a bearer token, as ``PlayerBanEndpoints`` do; other answers: 400 for a body that is not
/// valid or an alias the rules refuse (the reason says why), 413 for a body over
/// ``AdminAction/maximumBodyBytes``, 404 for a player the database does not know, 503 while the
/// server starts or stops or its database fails.
public enum PlayerAliasEndpoints {
    /// What `PUT …/alias` takes.
    public struct AliasRequest: Codable, Sendable, Hashable {
        /// The new alias.
        public var alias: String

        /// Creates a request.
        public init(alias: String) {
            self.alias = alias
        }
    }

    /// What both answer when they succeed.
    public struct AliasState: Codable, Sendable, Hashable {
        /// The player's id.
        public var player: String
        /// Its alias now.
        public var alias: String

        /// Creates an answer.
        public init(player: String, alias: String) {
            self.player = player
            self.alias = alias
        }
    }

    /// Adds both routes to `router`; `adminKey` is the bearer token they need.
    static func add(to router: Router<BasicRequestContext>, status: ServerStatus, adminKey: String) {
        router.put("api/players/:id/alias") { request, context -> Response in
            if let refusal = AdminAction.unauthorized(request, adminKey: adminKey) { return refusal }
            let playerID = try context.parameters.require("id")
            let body = try await request.body.collect(upTo: AdminAction.maximumBodyBytes)
            guard let rename = try? JSONDecoder().decode(AliasRequest.self, from: Data(body.readableBytesView)) else {
                return try AdminAction.failure(.badRequest, "the body must be JSON: {\"alias\":\"…\"}")
            }
            return try await Self.apply(rename.alias, to: playerID, status: status)
        }
        router.delete("api/players/:id/alias") { request, context -> Response in
            if let refusal = AdminAction.unauthorized(request, adminKey: adminKey) { return refusal }
            return try await Self.apply(nil, to: try context.parameters.require("id"), status: status)
        }
    }

    private static func apply(_ alias: String?, to playerID: String, status: ServerStatus) async throws -> Response {
        do {
            let alias = try await status.setAlias(alias, of: playerID)
            return try AdminEndpoints.json(AliasState(player: playerID, alias: alias), status: .ok)
        } catch {
            return try AdminAction.failure(for: error, playerID: playerID)
        }
    }
}
