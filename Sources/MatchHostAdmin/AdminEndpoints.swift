import Foundation
import Hummingbird
import Logging
import MatchHostServer
import NIOCore
import Prometheus
import ServiceLifecycle

/// The admin HTTP endpoints: `GET /health` and `GET /metrics`.
///
/// - `/health`: 200 with a JSON report while the server accepts players, 503 with the same
///   report while it starts or shuts down. The report: `status` ("serving" or "unavailable"),
///   `storage` ("ok" or "failing": the database refuses writes, which players see as
///   STORAGE_FAILED; the server keeps running), and the counts of ``ServerSnapshot``.
/// - `/metrics`: every metric the server records through swift-metrics, and the gauges of
///   ``ServerGauges``, in Prometheus' text format (version 0.0.4).
public enum AdminEndpoints {
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

    /// The router of both endpoints.
    /// - Parameters:
    ///   - status: the running server's listeners.
    ///   - registry: where every metric is kept (the one `MetricsSystem` was bootstrapped with).
    public static func router(status: ServerStatus, registry: PrometheusCollectorRegistry) -> Router<BasicRequestContext> {
        let gauges = ServerGauges(registry: registry)
        let router = Router()
        router.get("health") { _, _ -> Response in
            let report = HealthReport(await status.snapshot())
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let body = try encoder.encode(report)
            return Response(
                status: report.status == "serving" ? .ok : .serviceUnavailable,
                headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.get("metrics") { _, _ -> Response in
            gauges.update(from: await status.snapshot())
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        return router
    }

    /// The admin HTTP server on `host`:`port` (0 picks a free port), to run in the server's
    /// service group. `onListening` gets the address it bound.
    public static func application(
        host: String, port: Int, status: ServerStatus, registry: PrometheusCollectorRegistry, logger: Logger,
        onListening: @escaping @Sendable (SocketAddress) -> Void
    ) -> some Service {
        Application(
            router: Self.router(status: status, registry: registry),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "matchhost"),
            onServerRunning: { channel in
                if let address = channel.localAddress { onListening(address) }
            },
            logger: logger)
    }
}
