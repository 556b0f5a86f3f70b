import ArgumentParser
import Logging
import MatchHostServer
import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `matchhost serve`: run the server with its embedded defaults.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the MatchHost server.")

    @Option(help: "Address to listen on.")
    var host = "0.0.0.0"

    @Option(name: .customLong("catrace-port"), help: "Port of the Cat Race (tutorial) protocol; 0 picks a free port.")
    var catRacePort = 1955

    @Option(help: "Seconds (0-86400) a disconnected racer keeps its seat; a reserved seat waits as long. A racer away that long ends the race.")
    var grace: Double = 30

    @Option(name: .customLong("max-frame"), help: "Largest frame body accepted, in bytes.")
    var maxFrame = 64 * 1024

    @Option(name: .customLong("max-tap-rate"), help: "Cat Race steps per second refilled into each racer's bucket of 5 steps; faster moves are refused.")
    var maxTapRate: Double = 20

    @Option(name: .customLong("max-message-rate"), help: "Messages per second one connection may send (burst: one second's worth) before it is closed.")
    var maxMessageRate: Double = 100

    @Option(name: .customLong("max-outbound"), help: "Bytes (at least 1024) that may wait to be sent to one connection before it is closed.")
    var maxOutbound = 256 * 1024

    @Option(name: .customLong("max-racers"), help: "Most racers in one Cat Race match (2-16).")
    var maxRacers = 16

    @Option(help: "Listen backlog (capped by the kernel's net.core.somaxconn).")
    var backlog = 4096

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        guard Logger.Level(rawValue: self.logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        guard (0...65535).contains(self.catRacePort) else { throw ValidationError("--catrace-port must be 0-65535") }
        guard self.grace.isFinite, (0...86_400).contains(self.grace) else {
            throw ValidationError("--grace must be 0 to 86400 seconds")
        }
        guard self.maxFrame >= 1 else { throw ValidationError("--max-frame must be at least 1") }
        guard self.maxTapRate.isFinite, self.maxTapRate > 0 else { throw ValidationError("--max-tap-rate must be a positive number") }
        guard self.maxMessageRate.isFinite, self.maxMessageRate > 0 else {
            throw ValidationError("--max-message-rate must be a positive number")
        }
        guard self.maxOutbound >= 1024 else { throw ValidationError("--max-outbound must be at least 1024") }
        guard (2...16).contains(self.maxRacers) else { throw ValidationError("--max-racers must be 2-16") }
        guard self.backlog >= 1 else { throw ValidationError("--backlog must be at least 1") }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: self.logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "matchhost")
        // Thousands of players need thousands of descriptors.
        logger.debug("open file limit", metadata: ["limit": "\(raiseOpenFileLimit())"])

        var configuration = ServerConfiguration()
        configuration.host = self.host
        configuration.catRacePort = self.catRacePort
        configuration.gracePeriod = .nanoseconds(Int64(self.grace * 1e9))
        configuration.maxFrameBytes = self.maxFrame
        configuration.maxTapRate = self.maxTapRate
        configuration.maxMessageRate = self.maxMessageRate
        configuration.maxOutboundBytes = self.maxOutbound
        configuration.maxRacers = self.maxRacers
        configuration.backlog = self.backlog

        let service = MatchHostService(configuration: configuration, logger: logger) { name, address in
            print("\(name) listening on \(address.ipAddress ?? "?"):\(address.port ?? 0)")
            fflush(nil)  // stdout may be a pipe: the bound address must not wait in a buffer
        }
        let group = ServiceGroup(
            configuration: .init(services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
