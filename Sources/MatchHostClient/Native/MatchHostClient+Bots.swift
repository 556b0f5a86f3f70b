import Logging
import NIOCore

extension MatchHostClient {
    /// A bot's client: a new device of its own, with the default limits, logging nothing.
    static func bot(
        host: String, port: Int, gameID: String, tls: TLS?, deviceID: String, game: String, group: any EventLoopGroup
    ) -> MatchHostClient {
        var configuration = Configuration(host: host, port: port, gameID: gameID, credentials: .device(id: deviceID, secret: ""))
        configuration.tls = tls
        return MatchHostClient(
            configuration: configuration, eventLoopGroup: group,
            logger: Logger(label: "matchhost.\(game).bot", factory: { _ in SwiftLogNoOpLogHandler() }))
    }
}
