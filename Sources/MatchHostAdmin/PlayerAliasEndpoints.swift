import Foundation
import Hummingbird
import MatchHostCore
import MatchHostServer
import MatchHostWire
import NIOCore

/// The admin endpoints that rename a player: an alias that must not be shown (an insult, a
/// name that is not the player's) is replaced by the operator, and may be locked so that the
/// player cannot choose another.
///
/// - `PUT /api/players/{id}/alias`, with a JSON body of at most these fields:
///   - `"alias":"…"`: the player's alias becomes that, under the rules SET_ALIAS applies
///     (`--max-alias-length` Unicode scalars, no blank start or end, no invisible characters...);
///   - or `"reset":true`: its first one back, the first 8 characters of its id;
///   - `"locked":true`: the player's SET_ALIAS is refused (ALIAS_LOCKED) from now on;
///     `"locked":false`: it may set one again. Without it, the lock stays as it was.
///
///   At least one of them; `alias` and `reset` not both. Answers `{"player":…,"alias":…,"locked":…}`
///   once it is committed.
/// - `DELETE /api/players/{id}/alias`: the same as `{"reset":true}`.
///
/// Profiles and leaderboards show the new alias from then on. Both need the admin key as a
/// bearer token, as ``PlayerBanEndpoints`` do; other answers: 400 for a body that is not valid
/// or an alias the rules refuse (the reason says why), 413 for a body over
/// ``AdminAction/maximumBodyBytes``, 404 for a player the database does not know, 503 while the
/// server starts or stops or its database fails.
public enum PlayerAliasEndpoints {
    /// What `PUT …/alias` takes.
    public struct AliasRequest: Codable, Sendable, Hashable {
        /// The new alias, if it changes to a given one.
        public var alias: String?
        /// true: the player gets its first alias back.
        public var reset: Bool?
        /// Whether the player may no longer change its alias; nil: as it was.
        public var locked: Bool?

        /// Creates a request.
        public init(alias: String? = nil, reset: Bool? = nil, locked: Bool? = nil) {
            self.alias = alias
            self.reset = reset
            self.locked = locked
        }

        /// The change it asks for.
        /// - Throws: ``NativeError`` `BAD_ARGUMENT` (a 400, as ``AdminAction`` answers it) for a
        ///   body that asks for nothing, or for both an alias and a reset.
        func change() throws -> OperatorAliasChange {
            switch (self.alias, self.reset ?? false) {
            case (.some, true): throw NativeError(.badArgument, "give either an alias or \"reset\":true, not both")
            case (.some(let alias), false): return OperatorAliasChange(alias: .given(alias), locked: self.locked)
            case (nil, true): return OperatorAliasChange(alias: .reset, locked: self.locked)
            case (nil, false):
                guard let locked = self.locked else { throw NativeError(.badArgument, "the body must give \"alias\", \"reset\":true or \"locked\"") }
                return OperatorAliasChange(alias: .unchanged, locked: locked)
            }
        }
    }

    /// What both answer when they succeed.
    public struct AliasState: Codable, Sendable, Hashable {
        /// The player's id.
        public var player: String
        /// Its alias now.
        public var alias: String
        /// Whether the player's own SET_ALIAS is refused.
        public var locked: Bool

        /// Creates an answer.
        public init(player: String, alias: String, locked: Bool) {
            self.player = player
            self.alias = alias
            self.locked = locked
        }
    }

    /// Adds both routes to `router`; `adminKey` is the bearer token they need.
    static func add(to router: Router<BasicRequestContext>, status: ServerStatus, adminKey: String) {
        router.put("api/players/:id/alias") { request, context -> Response in
            if let refusal = AdminAction.unauthorized(request, adminKey: adminKey) { return refusal }
            let playerID = try context.parameters.require("id")
            let body = try await request.body.collect(upTo: AdminAction.maximumBodyBytes)
            guard let asked = try? JSONDecoder().decode(AliasRequest.self, from: Data(body.readableBytesView)) else {
                return try AdminAction.failure(.badRequest, "the body must be JSON: {\"alias\":\"…\"}, {\"reset\":true} or {\"locked\":true}, or two of them")
            }
            return try await Self.apply(asked.change, to: playerID, status: status)
        }
        router.delete("api/players/:id/alias") { request, context -> Response in
            if let refusal = AdminAction.unauthorized(request, adminKey: adminKey) { return refusal }
            return try await Self.apply({ OperatorAliasChange(alias: .reset) }, to: try context.parameters.require("id"), status: status)
        }
    }

    /// Makes the change and answers it; a change that cannot be made, refused by the request's
    /// own checks or the server's, gets its failure from ``AdminAction/failure(for:playerID:)``.
    private static func apply(_ change: () throws -> OperatorAliasChange, to playerID: String, status: ServerStatus) async throws -> Response {
        do {
            let player = try await status.changeAlias(of: playerID, try change())
            return try AdminEndpoints.json(AliasState(player: playerID, alias: player.alias, locked: player.aliasLocked), status: .ok)
        } catch {
            return try AdminAction.failure(for: error, playerID: playerID)
        }
    }
}
