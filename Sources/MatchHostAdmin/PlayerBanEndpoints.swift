import Foundation
import Hummingbird
import MatchHostCore
import MatchHostServer
import NIOCore

/// The admin endpoints' one action: banning a player and lifting the ban.
///
/// - `POST /api/players/{id}/ban`, with an optional JSON body `{"reason":"…","seconds":…}`:
///   bans the player (replacing an earlier ban), for `seconds` from now (1 to
///   ``maximumBanSeconds``) or, without them, until lifted. Answers `{"player":…,"banned":true,
///   "reason":…,"since":…,"until":…}` (Unix milliseconds; no `until`: until lifted) once the
///   ban is committed, the player's session has ended and its sign-ins are refused.
/// - `DELETE /api/players/{id}/ban`: lifts the ban; answers `{"player":…,"banned":false,
///   "lifted":true}`, or `"lifted":false` when the player was not banned.
/// - `GET /api/bans`: the bans in force, the latest made first; `?all=1`: every ban made, also
///   those that ran out, were lifted or were replaced (``BanList``); `?player=ID`: one player's;
///   `?limit=N`: at most N (1 to ``maximumListedBans``, default 100).
///
/// All three need `Authorization: Bearer <admin key>` (`<data>/admin.key`), or they answer 401:
/// whoever can reach the admin port may read it, but may only act with the key. (A web page
/// in the operator's browser cannot send that header to another origin, so it cannot act
/// either.) Other answers: 400 for a body or reason that is not valid, 413 for a body over
/// ``AdminAction/maximumBodyBytes``, 404 for a player the database does not know, 503 while the server
/// starts or stops or its database fails.
public enum PlayerBanEndpoints {
    /// The longest reason, in UTF-8 bytes: it goes to the player in one ERROR.
    public static let maximumReasonBytes = 200
    /// The longest timed ban: ten years (a longer `seconds` is refused; leave it out for a ban
    /// until lifted).
    public static let maximumBanSeconds: Int64 = 3650 * 86_400

    /// What `POST …/ban` takes.
    public struct BanRequest: Codable, Sendable, Hashable {
        /// Why, told to the player; none: no reason given.
        public var reason: String?
        /// How long the ban lasts, from when the server makes it; none: until lifted.
        public var seconds: Int64?

        /// Creates a request.
        public init(reason: String? = nil, seconds: Int64? = nil) {
            self.reason = reason
            self.seconds = seconds
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
        /// When the ban ends by itself (Unix milliseconds); none: until lifted.
        public var until: Int64?
        /// Answering `DELETE`: whether a ban was in force and is now lifted (false: the player
        /// was not banned, and nothing changed).
        public var lifted: Bool?
    }

    /// The most bans one `GET /api/bans` lists.
    public static let maximumListedBans = 1000

    /// One ban as `GET /api/bans` lists it (times in Unix milliseconds).
    public struct ListedBan: Codable, Sendable, Hashable {
        /// The banned player's id.
        public var player: String
        /// Why, as the operator put it.
        public var reason: String
        /// When it was made.
        public var since: Int64
        /// When it ends (or ended) by itself; none: only when lifted.
        public var until: Int64?
        /// Whether it refuses its player now.
        public var inForce: Bool
        /// When the operator lifted it, if that is how it ended.
        public var lifted: Int64?
        /// When a later ban of the player replaced it, if that is how it ended.
        public var replaced: Int64?

        /// The record as listed, `now` deciding whether it is in force.
        public init(_ record: PlayerBanRecord, now: UnixMillis) {
            self.player = record.playerID
            self.reason = record.ban.reason
            self.since = record.ban.since.milliseconds
            self.until = record.ban.until?.milliseconds
            self.inForce = record.isInForce(at: now)
            switch record.endedEarly {
            case .lifted(let at): self.lifted = at.milliseconds
            case .replaced(let at): self.replaced = at.milliseconds
            case nil: break
            }
        }
    }

    /// What `GET /api/bans` answers.
    public struct BanList: Codable, Sendable, Hashable {
        /// The bans, the latest made first.
        public var bans: [ListedBan]
    }

    /// Adds the routes to `router`; `adminKey` is the bearer token they need.
    static func add(to router: Router<BasicRequestContext>, status: ServerStatus, adminKey: String) {
        router.get("api/bans") { request, _ -> Response in
            if let refusal = AdminAction.unauthorized(request, adminKey: adminKey) { return refusal }
            let query = request.uri.queryParameters
            let all = query["all"].map { $0 == "1" || $0 == "true" } ?? false
            let playerID = query["player"].map(String.init)
            var limit = 100
            if let given = query["limit"] {
                guard let value = Int(given), (1...Self.maximumListedBans).contains(value) else {
                    return try AdminAction.failure(.badRequest, "limit must be 1 to \(Self.maximumListedBans)")
                }
                limit = value
            }
            do {
                let records = try await status.bans(all: all, of: playerID, limit: limit)
                let now = UnixMillis.now()
                return try AdminEndpoints.json(BanList(bans: records.map { ListedBan($0, now: now) }), status: .ok)
            } catch let error as ServerNotServing {
                return try AdminAction.failure(.serviceUnavailable, error.description)
            } catch {
                return try AdminAction.failure(.serviceUnavailable, "the database failed (\(error))")
            }
        }
        router.post("api/players/:id/ban") { request, context -> Response in
            if let refusal = AdminAction.unauthorized(request, adminKey: adminKey) { return refusal }
            let playerID = try context.parameters.require("id")
            let body = try await request.body.collect(upTo: AdminAction.maximumBodyBytes)
            let ban: BanRequest
            if body.readableBytes == 0 {
                ban = BanRequest()
            } else {
                guard let decoded = try? JSONDecoder().decode(BanRequest.self, from: Data(body.readableBytesView)) else {
                    return try AdminAction.failure(.badRequest, "the body must be JSON: {\"reason\":\"…\",\"seconds\":…}")
                }
                ban = decoded
            }
            let reason = ban.reason ?? ""
            guard reason.utf8.count <= Self.maximumReasonBytes else {
                return try AdminAction.failure(.badRequest, "the reason is longer than \(Self.maximumReasonBytes) bytes")
            }
            guard !reason.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                return try AdminAction.failure(.badRequest, "the reason holds a control character")
            }
            if let seconds = ban.seconds, !(1...Self.maximumBanSeconds).contains(seconds) {
                return try AdminAction.failure(.badRequest, "seconds must be 1 to \(Self.maximumBanSeconds) (ten years); leave it out for a ban until lifted")
            }
            return try await Self.apply(reason: reason, lasting: ban.seconds.map { .seconds($0) }, to: playerID, status: status)
        }
        router.delete("api/players/:id/ban") { request, context -> Response in
            if let refusal = AdminAction.unauthorized(request, adminKey: adminKey) { return refusal }
            return try await Self.lift(try context.parameters.require("id"), status: status)
        }
    }

    private static func lift(_ playerID: String, status: ServerStatus) async throws -> Response {
        do {
            let lifted = try await status.liftBan(of: playerID)
            return try AdminEndpoints.json(BanState(player: playerID, banned: false, lifted: lifted), status: .ok)
        } catch {
            return try AdminAction.failure(for: error, playerID: playerID)
        }
    }

    private static func apply(reason: String?, lasting: Duration?, to playerID: String, status: ServerStatus) async throws -> Response {
        do {
            let ban = try await status.setBan(reason: reason, lasting: lasting, of: playerID)
            return try AdminEndpoints.json(
                BanState(player: playerID, banned: ban != nil, reason: ban?.reason, since: ban?.since.milliseconds, until: ban?.until?.milliseconds),
                status: .ok)
        } catch {
            return try AdminAction.failure(for: error, playerID: playerID)
        }
    }
}
