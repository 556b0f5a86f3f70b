import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import MatchHostServer
import NIOConcurrencyHelpers
import NIOCore
import Prometheus
import ServiceLifecycle

/// The admin HTTP endpoints: `GET /` (the admin page), `GET /health`, `GET /metrics` and
/// `GET /api/matches`.
///
/// - `/health`: 200 with a JSON report while the server accepts players, 503 with the same
///   report while it starts or shuts down. The report: `status` ("serving" or "unavailable"),
///   `storage` ("ok" or "failing": the database refuses writes, which players see as
///   STORAGE_FAILED; the server keeps running), and the counts of ``ServerSnapshot``.
/// - `/metrics`: every metric the server records through swift-metrics, and the gauges of
///   ``ServerGauges``, in Prometheus' text format (version 0.0.4).
/// - `/api/matches`: the running native matches (``RunningMatchSummary``), lowest id first, at
///   most ``listedMatches`` of them, and how many run in all, as JSON: `{"total":…,"matches":[…]}`.
/// - `/`: a page that shows the two JSON answers and refreshes itself.
/// - `/api/players/{id}/ban`: bans a player (POST) or lifts its ban (DELETE), with the admin
///   key; see ``PlayerBanEndpoints``.
/// - `/api/players/{id}/link-code` and `/api/players/{id}/devices/unlink` (POST): a link code
///   for a new device, and a device's removal, with the admin key; see ``PlayerDeviceEndpoints``.
public enum AdminEndpoints {
    /// The most matches `/api/matches` lists: the page stays small however busy the server.
    public static let listedMatches = 200

    /// What `/api/matches` answers.
    public struct MatchList: Codable, Sendable, Hashable {
        /// Native matches running in all.
        public var total: Int
        /// The first of them by id.
        public var matches: [RunningMatchSummary]
    }

    /// What `/health` answers.
    public struct HealthReport: Codable, Sendable, Hashable {
        /// "serving", or "unavailable" while the server starts or stops.
        public var status: String
        /// "ok", or "failing" while the database refuses writes.
        public var storage: String
        /// Connections open on the native port.
        public var nativeConnections: Int
        /// Native sessions live.
        public var sessions: Int
        /// Native matches running.
        public var nativeMatches: Int
        /// Connections open on the Cat Race port.
        public var catraceConnections: Int
        /// Races running on the Cat Race port.
        public var catraceMatches: Int

        /// The report of `snapshot` (nil: not serving).
        public init(_ snapshot: ServerSnapshot?) {
            self.status = snapshot == nil ? "unavailable" : "serving"
            self.storage = snapshot?.isStorageFailing == true ? "failing" : "ok"
            self.nativeConnections = snapshot?.nativeConnections ?? 0
            self.sessions = snapshot?.sessions ?? 0
            self.nativeMatches = snapshot?.nativeMatches ?? 0
            self.catraceConnections = snapshot?.catRaceConnections ?? 0
            self.catraceMatches = snapshot?.catRaceMatches ?? 0
        }
    }

    /// The router of every endpoint: the page, `/health`, `/metrics`, `/api/matches`, the bans and the devices.
    /// - Parameters:
    ///   - status: the running server's listeners.
    ///   - registry: where every metric is kept (the one `MetricsSystem` was bootstrapped with).
    ///   - adminKey: the bearer token the actions need (``SecretKeyFile/admin(directory:)``).
    public static func router(status: ServerStatus, registry: PrometheusCollectorRegistry, adminKey: String) -> Router<BasicRequestContext> {
        let gauges = ServerGauges(registry: registry)
        let router = Router()
        router.get("/") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: AdminPage.html)))
        }
        router.get("health") { _, _ -> Response in
            let report = HealthReport(await status.snapshot())
            return try Self.json(report, status: report.status == "serving" ? .ok : .serviceUnavailable)
        }
        router.get("api/matches") { _, _ -> Response in
            guard let (total, matches) = await status.runningMatches(limit: Self.listedMatches) else {
                return try Self.json(MatchList(total: 0, matches: []), status: .serviceUnavailable)
            }
            return try Self.json(MatchList(total: total, matches: matches), status: .ok)
        }
        router.get("metrics") { _, _ -> Response in
            gauges.update(from: await status.snapshot())
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        PlayerBanEndpoints.add(to: router, status: status, adminKey: adminKey)
        PlayerDeviceEndpoints.add(to: router, status: status, adminKey: adminKey)
        PlayerAliasEndpoints.add(to: router, status: status, adminKey: adminKey)
        return router
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    /// How long an admin connection may send nothing before it is closed, by default
    /// (`--admin-idle-timeout`): a request is a few hundred bytes, and a scraper that keeps its
    /// connection asks every few seconds.
    public static let defaultIdleTimeout: TimeAmount = .seconds(30)

    /// The admin HTTP server on `host`:`port` (0 picks a free port), to run in the server's
    /// service group; its actions need `adminKey` as a bearer token. `onListening` gets the address it bound. If it cannot bind, its `run`
    /// throws `PortBindError`. A connection silent for `idleTimeout` (within a request too) is
    /// closed: a client that stalls holds no connection for good, nor the server's graceful
    /// shutdown, which waits for the requests under way. With `tls`, the endpoints speak HTTPS
    /// only, with the certificate `tls` serves at each connection's start (``AdminTLSChannel``).
    public static func application(
        host: String, port: Int, status: ServerStatus, registry: PrometheusCollectorRegistry, adminKey: String, logger: Logger,
        idleTimeout: TimeAmount = Self.defaultIdleTimeout, tls: ServerTLS? = nil, onListening: @escaping @Sendable (SocketAddress) -> Void
    ) -> some Service {
        let bound = NIOLockedValueBox(false)
        // Hummingbird says "Server started and listening" at info, which `announce` has said
        // already; its request logs (debug) still show when asked for.
        var applicationLogger = logger
        if applicationLogger.logLevel == .info { applicationLogger.logLevel = .notice }
        let application = Application(
            router: Self.router(status: status, registry: registry, adminKey: adminKey),
            server: HTTPServerBuilder { responder in
                let http = HTTP1Channel(responder: responder, configuration: HTTP1Channel.Configuration(idleTimeout: idleTimeout))
                guard let tls else { return http }
                return AdminTLSChannel(base: http, tls: tls)
            },
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "matchhost"),
            onServerRunning: { channel in
                bound.withLockedValue { $0 = true }
                if let address = channel.localAddress { onListening(address) }
            },
            logger: applicationLogger)
        return AdminService(application: application, host: host, port: port, bound: bound)
    }
}

/// Hummingbird's application, with a failure to bind told as a `PortBindError`.
private struct AdminService<Wrapped: Service>: Service {
    let application: Wrapped
    let host: String
    let port: Int
    let bound: NIOLockedValueBox<Bool>

    func run() async throws {
        do {
            try await self.application.run()
        } catch {
            guard !self.bound.withLockedValue({ $0 }) else { throw error }
            throw PortBindError(
                port: "admin", host: self.host, hostFlag: "--admin-host", number: self.port, portFlag: "--admin-port", offFlag: "--no-admin",
                error: error)
        }
    }
}
