import ArgumentParser
import Foundation
import MatchHostAdmin
import MatchHostCore

/// Why a Cat Race port player has no devices to act on.
private let noDevices = "it has no devices"

/// `matchhost link-code PLAYER`: the running server makes a link code for a player.
struct LinkCodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "link-code",
        abstract: "Make a link code for a player on the running server: it links one new device to the player.",
        discussion: """
            How a player who lost every device, or whose devices were taken, gets its account \
            back: the player types the code in the game on the new device (AUTHENTICATE method 3) \
            before it expires (the server's --link-code-lifetime, 10 minutes by default). The code \
            is the same kind a signed-in device asks for (CREATE_LINK_CODE), and replaces the \
            player's last one. Then `matchhost unlink-device` removes the lost device; unlinking \
            forgets a code not used yet, so the new device must be linked first. When a thief \
            holds a linked device, use `matchhost recover` instead. Asks the server running on \
            --data, as `matchhost ban` does.
            """)

    @Argument(help: "The player id, or its first characters (at least 4).")
    var player: String

    @OptionGroup var admin: AdminActionOptions

    func run() async throws {
        let answer: PlayerDeviceEndpoints.LinkCode = try await self.admin.act(.POST, "link-code", on: self.player, tutorialRefusal: noDevices)
        print("link code for \(answer.player): \(answer.code), until \(formatted(UnixMillis(milliseconds: answer.expiresAt)))")
    }
}

/// `matchhost unlink-device PLAYER DEVICE`: the running server removes a device of a player.
struct UnlinkDeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlink-device",
        abstract: "Remove a device from a player on the running server: it can no longer sign in as the player.",
        discussion: """
            For a stolen or lost device: removed as UNLINK_DEVICE removes one, stored before the \
            command returns. Every session token of the player is revoked, the device's secret \
            no longer signs in (it gets DEVICE_UNLINKED), and the player's session ends with \
            ERROR SESSION_REVOKED, as it may be the removed device's; the player's other devices \
            sign in again with their secrets. The only device of a player cannot be removed: link \
            the owner's device first (`matchhost link-code`), or, against a thief, use `matchhost \
            recover`. `matchhost player` lists a player's devices. Asks the server running on \
            --data, as `matchhost ban` does.
            """)

    @Argument(help: "The player id, or its first characters (at least 4).")
    var player: String

    @Argument(help: "The device id, exactly as `matchhost player` lists it.")
    var device: String

    @OptionGroup var admin: AdminActionOptions

    func validate() throws {
        guard !self.device.isEmpty else { throw ValidationError("the device id must not be empty") }
    }

    func run() async throws {
        let answer: PlayerDeviceEndpoints.Unlinked = try await self.admin.act(
            .POST, "devices/unlink", on: self.player, body: PlayerDeviceEndpoints.UnlinkRequest(device: self.device),
            tutorialRefusal: noDevices)
        print("unlinked \(answer.device) from \(answer.player): its tokens are revoked and its session ended")
    }
}

/// `matchhost recover PLAYER`: the running server takes a player's account back.
struct RecoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Take a player's account back from whoever holds its devices, and make a link code for the owner.",
        discussion: """
            For a thief with a linked device (who may have unlinked the owner's): every device \
            of the player is removed, its only one too, and every session token revoked, in one \
            commit, before the command returns; the player's session ends with ERROR \
            SESSION_REVOKED; then a link code is made, which the owner types in the game on its \
            device (AUTHENTICATE method 3) before it expires. Until then the player has no \
            device: nobody can sign in as it, and nobody else can have asked for a code. \
            (`link-code` then `unlink-device` would leave the thief's device linked in between, \
            free to replace the code or unlink the owner's.) The removed devices get \
            DEVICE_UNLINKED; the owner's may be linked again with the code. Asks the server \
            running on --data, as `matchhost ban` does.
            """)

    @Argument(help: "The player id, or its first characters (at least 4).")
    var player: String

    @OptionGroup var admin: AdminActionOptions

    func run() async throws {
        let answer: PlayerDeviceEndpoints.Recovery = try await self.admin.act(.POST, "recover", on: self.player, tutorialRefusal: noDevices)
        let devices = answer.unlinked.isEmpty ? "no device" : answer.unlinked.joined(separator: ", ")
        print("unlinked from \(answer.player): \(devices); every token revoked")
        print("link code for the owner's device: \(answer.code), until \(formatted(UnixMillis(milliseconds: answer.expiresAt)))")
    }
}
