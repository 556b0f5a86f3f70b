import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The whole server as one ServiceLifecycle service: binds every listener, reports each
/// bound address, runs until graceful shutdown, then closes the listeners.
///
/// ```swift
/// let service = MatchHostService(configuration: config, logger: logger) { name, address in
///     print("\(name) listening on \(address)")
/// }
/// try await ServiceGroup(configuration: .init(services: [service],
///     gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)).run()
/// ```
public struct MatchHostService: Service {
    /// Host, ports and limits.
    public let configuration: ServerConfiguration
    private let group: any EventLoopGroup
    private let logger: Logger
    private let onListening: @Sendable (String, SocketAddress) -> Void
    private let status: ServerStatus?
    private let beforeBinding: @Sendable () async throws -> Void

    /// Creates the service.
    /// - Parameters:
    ///   - configuration: host, ports and limits.
    ///   - group: the event loops; by default one per core the process may run on.
    ///   - logger: the server's logger.
    ///   - status: where the listeners are shown to the admin endpoints while they serve.
    ///   - beforeBinding: awaited before any listener is bound (the admin endpoints binding
    ///     first, so that a server that cannot serve them never takes a player); a throw ends
    ///     the service without binding.
    ///   - onListening: called once per listener with its name and the address it bound.
    public init(
        configuration: ServerConfiguration,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger,
        status: ServerStatus? = nil,
        beforeBinding: @escaping @Sendable () async throws -> Void = {},
        onListening: @escaping @Sendable (String, SocketAddress) -> Void = { _, _ in }
    ) {
        self.configuration = configuration
        self.group = group
        self.logger = logger
        self.status = status
        self.beforeBinding = beforeBinding
        self.onListening = onListening
    }

    /// Runs until graceful shutdown (SIGINT/SIGTERM through the service group).
    public func run() async throws {
        try await self.beforeBinding()
        let catRace = try await CatRaceListener.bind(configuration: self.configuration, group: self.group, logger: self.logger)
        self.onListening("catrace", catRace.localAddress)
        let native: NativeListener
        do {
            native = try await NativeListener.bind(
                configuration: self.configuration, group: self.group, logger: self.logger, catRace: catRace)
        } catch {
            await catRace.close()
            throw error
        }
        // Attached before it is announced: whoever acts on the line finds it serving.
        self.status?.attach(native: native, catRace: catRace)
        self.onListening("native", native.localAddress)
        if let web = native.webAddress { self.onListening("web", web) }
        // Wait for the shutdown signal; cancellation ends the wait the same way.
        try? await gracefulShutdown()
        self.logger.info("shutting down")
        self.status?.detach()
        await native.close()
        await catRace.close()
    }
}
