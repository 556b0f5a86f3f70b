import Foundation
import Hummingbird
import MatchHostCore
import MatchHostServer
import NIOCore

/// The admin endpoints that give a player its account back: a link code for a new device, the
/// removal of a device (a lost phone), and the removal of every device (a thief's).
///
/// - `POST /api/players/{id}/link-code`: a code the player types on a new device (AUTHENTICATE
///   method 3), as CREATE_LINK_CODE would make it: good for one device and `--link-code-lifetime`,
///   replacing the player's last code. Answers `{"player":…,"code":…,"expiresAt":…}` (Unix
///   milliseconds). 409 for a player at `--max-devices-per-player`.
/// - `POST /api/players/{id}/devices/unlink`, with the JSON body `{"device":"…"}` (a device id is
///   any string, so it goes in the body, not the path): removes the device, as UNLINK_DEVICE
///   would: every token of the player is revoked, the device's secret no longer signs in, and the
///   player's session ends with ERROR `SESSION_REVOKED`, so that the unlinked device cannot stay
///   signed in; the player's other devices sign in again with their secrets. Answers
///   `{"player":…,"device":…,"unlinked":true}` once that is committed and done. 404 for a device
///   that is not the player's, 409 for its only device (link the owner's device first).
/// - `POST /api/players/{id}/recover`: takes the account back from whoever holds its devices.
///   Every device of the player is removed, its only one too, and every token revoked, in one
///   commit; its session ends with `SESSION_REVOKED`; then a link code is made for the owner.
///   Answers `{"player":…,"unlinked":[…],"code":…,"expiresAt":…}`. For a thief holding a linked
///   device, where `link-code` then `unlink` would race it (it can ask for codes and unlink the
///   owner's device in between).
///
/// All need the admin key as a bearer token, as ``PlayerBanEndpoints`` do; other answers: 400 for
/// a body that is not valid, 413 for a body over ``AdminAction/maximumBodyBytes``, 404 for a player the
/// database does not know, 503 while the server starts or stops or its database fails.
public enum PlayerDeviceEndpoints {

    /// What `…/link-code` answers.
    public struct LinkCode: Codable, Sendable, Hashable {
        /// The player's id.
        public var player: String
        /// The code, 8 characters, any case.
        public var code: String
        /// When it stops linking (Unix milliseconds).
        public var expiresAt: Int64
    }

    /// What `…/recover` answers.
    public struct Recovery: Codable, Sendable, Hashable {
        /// The player's id.
        public var player: String
        /// The devices removed, in byte order.
        public var unlinked: [String]
        /// A link code for the owner's device, 8 characters, any case.
        public var code: String
        /// When it stops linking (Unix milliseconds).
        public var expiresAt: Int64
    }

    /// What `…/devices/unlink` takes.
    public struct UnlinkRequest: Codable, Sendable, Hashable {
        /// The device id, as `matchhost player` lists it.
        public var device: String

        /// Creates a request.
        public init(device: String) {
            self.device = device
        }
    }

    /// What `…/devices/unlink` answers.
    public struct Unlinked: Codable, Sendable, Hashable {
        /// The player's id.
        public var player: String
        /// The device removed.
        public var device: String
        /// Always true: a refusal answers ``AdminAction/Failure``.
        public var unlinked: Bool
    }

    /// Adds both routes to `router`; `adminKey` is the bearer token they need.
    static func add(to router: Router<BasicRequestContext>, status: ServerStatus, adminKey: String) {
        router.post("api/players/:id/link-code") { request, context -> Response in
            if let refusal = AdminAction.unauthorized(request, adminKey: adminKey) { return refusal }
            let playerID = try context.parameters.require("id")
            do {
                let (code, expiresAt) = try await status.createLinkCode(for: playerID)
                return try AdminEndpoints.json(LinkCode(player: playerID, code: code, expiresAt: expiresAt.milliseconds), status: .ok)
            } catch {
                return try AdminAction.failure(for: error, playerID: playerID)
            }
        }
        router.post("api/players/:id/recover") { request, context -> Response in
            if let refusal = AdminAction.unauthorized(request, adminKey: adminKey) { return refusal }
            let playerID = try context.parameters.require("id")
            do {
                let (removed, code, expiresAt) = try await status.recoverAccount(of: playerID)
                return try AdminEndpoints.json(
                    Recovery(player: playerID, unlinked: removed, code: code, expiresAt: expiresAt.milliseconds), status: .ok)
            } catch {
                return try AdminAction.failure(for: error, playerID: playerID)
            }
        }
        router.post("api/players/:id/devices/unlink") { request, context -> Response in
            if let refusal = AdminAction.unauthorized(request, adminKey: adminKey) { return refusal }
            let playerID = try context.parameters.require("id")
            let body = try await request.body.collect(upTo: AdminAction.maximumBodyBytes)
            guard let unlink = try? JSONDecoder().decode(UnlinkRequest.self, from: Data(body.readableBytesView)), !unlink.device.isEmpty
            else {
                return try AdminAction.failure(.badRequest, "the body must be JSON naming the device: {\"device\":\"…\"}")
            }
            do {
                try await status.unlinkDevice(unlink.device, of: playerID)
                return try AdminEndpoints.json(Unlinked(player: playerID, device: unlink.device, unlinked: true), status: .ok)
            } catch {
                return try AdminAction.failure(for: error, playerID: playerID)
            }
        }
    }
}
