import ArgumentParser
import Logging
import MatchHostClient
import MatchHostWire

/// Connects to the native port as the device stored in `deviceFile` (a new device, its id and
/// secret chosen and stored there before the first contact, when the file does not exist yet);
/// with no file path, as a new throwaway device. With an `alias`, the player takes it
/// (SET_ALIAS) before this returns.
/// - Returns: the connected client and its authentication.
/// - Throws: ``PlayError`` with what to do about it.
func nativeLogin(
    host: String, port: Int, tls: MatchHostClient.TLS? = nil, deviceFile path: String?, alias: String? = nil, logger: Logger
) async throws -> (MatchHostClient, NativeAuthenticated) {
    let server = "\(host):\(port)"
    let file = path.map(DeviceFile.init(path:))
    let stored = try file?.load()
    let credentials = stored ?? DeviceFile.Credentials(id: DeviceFile.newDeviceID(), secret: DeviceFile.newSecret())
    if let file, stored == nil {
        do {
            try file.save(credentials)
            benchPrint("New device: its id and secret are in \(file.path).")
        } catch {
            benchPrintError("warning: \(error); you will be a new player next time")
        }
    }
    var configuration = MatchHostClient.Configuration(
        host: host, port: port, credentials: .device(id: credentials.id, secret: credentials.secret))
    configuration.tls = tls
    let client = MatchHostClient(configuration: configuration, logger: logger)
    let authenticated: NativeAuthenticated
    do {
        authenticated = try await client.connect()
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
