import MatchHostServer
import Prometheus

/// Gauges of what the server holds (connections, sessions, matches), set from a
/// ``ServerStatus`` snapshot each time they are scraped rather than kept up to date on the
/// hot path: a scrape every few seconds costs one hop to each world's loop.
///
/// Their names (`matchhost_serving`, `matchhost_connections`, `matchhost_sessions`,
/// `matchhost_matches`, `matchhost_catrace_players`) are taken: the Prometheus registry stops
/// the process if a swift-metrics metric of another type or labels is made under one of them.
public struct ServerGauges: Sendable {
    private let serving: Gauge
    private let nativeConnections: Gauge
    private let catRaceConnections: Gauge
    private let sessions: Gauge
    private let nativeMatches: Gauge
    private let catRaceMatches: Gauge
    private let catRacePlayers: Gauge

    /// Registers the gauges in `registry`.
    public init(registry: PrometheusCollectorRegistry) {
        func named(_ name: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "matchhost", metricName: name, unitName: "", helpText: help)
        }
        self.serving = registry.makeGauge(descriptor: named("serving", "1 while the server accepts players, 0 while it starts or stops"))
        let connections = named("connections", "Connections open on a port")
        self.nativeConnections = registry.makeGauge(descriptor: connections, labels: [("port", "native")])
        self.catRaceConnections = registry.makeGauge(descriptor: connections, labels: [("port", "catrace")])
        self.sessions = registry.makeGauge(descriptor: named("sessions", "Native sessions live, connected or waiting for a resume"))
        let matches = named("matches", "Matches running, by the port whose players started them")
        self.nativeMatches = registry.makeGauge(descriptor: matches, labels: [("port", "native")])
        self.catRaceMatches = registry.makeGauge(descriptor: matches, labels: [("port", "catrace")])
        self.catRacePlayers = registry.makeGauge(descriptor: named("catrace_players", "Tutorial clients identified on the Cat Race port"))
    }

    /// Sets every gauge from `snapshot`; nil (not serving) sets them all to 0.
    public func update(from snapshot: ServerSnapshot?) {
        self.serving.set(Int64(snapshot == nil ? 0 : 1))
        self.nativeConnections.set(Int64(snapshot?.nativeConnections ?? 0))
        self.catRaceConnections.set(Int64(snapshot?.catRaceConnections ?? 0))
        self.sessions.set(Int64(snapshot?.sessions ?? 0))
        self.nativeMatches.set(Int64(snapshot?.nativeMatches ?? 0))
        self.catRaceMatches.set(Int64(snapshot?.catRaceMatches ?? 0))
        self.catRacePlayers.set(Int64(snapshot?.catRacePlayers ?? 0))
    }
}
