import ArgumentParser
import Foundation
import Logging
import MatchHostClient
import MatchHostWire

/// Connects to the native port as the device stored in `deviceFile` (a new device, its id and
/// secret chosen and stored there before the first contact, when the file does not exist yet);
/// with no file path, as a new throwaway device. With a `linkCode` (or one stored with a device
/// whose link did not finish), the device in `deviceFile` is linked to the player the code was
/// made for (AUTHENTICATE method 3), not made a new player. With an `alias`, the player takes it (SET_ALIAS) before this returns.
/// - Returns: the connected client and its authentication.
/// - Throws: ``PlayError`` with what to do about it.
func nativeLogin(
    host: String, port: Int, tls: MatchHostClient.TLS? = nil, deviceFile path: String?, linkCode: String? = nil, alias: String? = nil,
    logger: Logger
) async throws -> (MatchHostClient, NativeAuthenticated) {
    let server = "\(host):\(port)"
    let file = path.map(DeviceFile.init(path:))
    let stored = try file?.load()
    // A device whose link an earlier run began (its answer lost, or no answer at all) is
    // linked with that code until the server has said yes: signed in as a plain device, the
    // server would make it a new player. A code given now replaces the stored one. A device
    // already linked may be linked again (the owner's device after `matchhost recover`);
    // the server refuses one that is another player's.
    let linkCode = linkCode ?? stored?.linkCode
    var credentials = stored ?? DeviceFile.Credentials(id: DeviceFile.newDeviceID(), secret: DeviceFile.newSecret(), linkCode: linkCode)
    if let file, let stored, stored.linkCode != linkCode {
        credentials.linkCode = linkCode
        try file.save(credentials)
    }
    if let file, stored == nil {
        do {
            try file.save(credentials)
            benchPrint(linkCode == nil ? "New device: its id and secret are in \(file.path)." : "Linking a new device: its id and secret are in \(file.path).")
        } catch {
            guard linkCode == nil else { throw error }
            benchPrintError("warning: \(error); you will be a new player next time")
        }
    }
    var configuration = MatchHostClient.Configuration(
        host: host, port: port,
        credentials: linkCode.map { .link(code: $0, deviceID: credentials.id, secret: credentials.secret) }
            ?? .device(id: credentials.id, secret: credentials.secret))
    configuration.tls = tls
    let client = MatchHostClient(configuration: configuration, logger: logger)
    let authenticated: NativeAuthenticated
    do {
        authenticated = try await client.connect()
    } catch let error as NativeError where linkCode != nil {
        await client.close()
        // The server answered, so this device was not linked: a file made for it here goes.
        var after = file.map { "\($0.path) still holds this device, waiting to be linked: pass a new --link-code, or remove the file to play as a new player." } ?? ""
        if let file, let stored, stored.linkCode == nil {
            // A device of a player already: it signs in as before.
            try? file.save(stored)
            after = "\(file.path) still signs in as before."
        } else if let file, stored == nil, (try? FileManager.default.removeItem(atPath: file.path)) != nil {
            after = "\(file.path) was removed again."
        }
        throw PlayError(
            """
            the server at \(server) did not link this device (\(error.code.name): \(error.message)). \(after) \
            A new code comes from one of the player's devices, or from the operator (matchhost link-code PLAYER).
            """)
    } catch let error as NativeError where error.code == .authenticationFailed && stored != nil {
        await client.close()
        throw PlayError(
            """
            the server at \(server) refused the device secret stored in \(file!.path) \
            (AUTHENTICATION_FAILED: \(error.message)). The server does not know this device any more \
            or the file is another server's. Remove the file, or pass --device-file with another \
            path, to play as a new player.
            """)
    } catch {
        await client.close()
        throw PlayError("cannot connect to \(server): \(error)")
    }
    if let file, linkCode != nil {
        // Linked: from now on the device signs in as any device of the player does.
        var linked = credentials
        linked.linkCode = nil
        do {
            try file.save(linked)
        } catch {
            benchPrintError("warning: \(error); play without --link-code next time")
        }
        benchPrint("Linked: this device now signs in as player \(authenticated.playerID).")
    }
    if let alias {
        do {
            try await client.setAlias(alias)
        } catch let error as NativeError where error.code == .aliasLocked {
            // The operator fixed this player's name: play on under it.
            benchPrintError("warning: the server refused the alias \"\(alias)\": \(error.message)")
        } catch {
            await client.close()
            throw PlayError("the server refused the alias \"\(alias)\": \(error)")
        }
    }
    return (client, authenticated)
}

/// `--link-code` of the native `play` commands: links the device file's device (a new one, or
/// one unlinked by a recovery) to a player.
struct DeviceLinkOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Link this computer to your player on another device, with the link code that device got (or the operator's `matchhost link-code`). A device already in the device file is linked (a recovered one), else a new one is made there.",
            valueName: "code"))
    var linkCode: String?

    func validate() throws {
        if let code = self.linkCode {
            guard !code.isEmpty, code.utf8.count <= 255, code.unicodeScalars.allSatisfy({ $0.isASCII && $0.properties.isAlphabetic || ("0"..."9").contains($0) })
            else { throw ValidationError("--link-code must be the code's letters and digits") }
        }
    }
}

/// A logger that writes nothing: a terminal game's screen must not be written over.
let silentLogger = Logger(label: "matchhost.cli", factory: { _ in SwiftLogNoOpLogHandler() })

/// `--alias` of the native `play` commands: the name the player takes before it plays.
struct PlayerAliasOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The name other players see for you (SET_ALIAS), kept by the server for your player; the server's rules apply (at most 32 characters by default).",
            valueName: "name"))
    var alias: String?

    func validate() throws {
        if let alias = self.alias {
            guard !alias.isEmpty, alias.utf8.count <= 255 else { throw ValidationError("--alias must be 1-255 bytes") }
        }
    }
}
