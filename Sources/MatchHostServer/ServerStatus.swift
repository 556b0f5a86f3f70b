import Synchronization

/// What a running server holds right now, for the admin endpoints (health, metrics): counted
/// on each listener's loop when asked, so that nothing on the hot path keeps these numbers.
///
/// ``MatchHostService`` attaches its listeners once they are bound and detaches them when it
/// starts shutting down; until then and after, ``snapshot()`` says the server is not serving.
public final class ServerStatus: Sendable {
    private let listeners = Mutex<(native: NativeListener, catRace: CatRaceListener)?>(nil)

    /// Creates a status with nothing attached.
    public init() {}

    func attach(native: NativeListener, catRace: CatRaceListener) {
        self.listeners.withLock { $0 = (native, catRace) }
    }

    func detach() {
        self.listeners.withLock { $0 = nil }
    }

    /// The counts now, or nil while the server is not serving (starting or shutting down).
    public func snapshot() async -> ServerSnapshot? {
        guard let (native, catRace) = self.listeners.withLock({ $0 }) else { return nil }
        // A listener closing meanwhile cannot answer: the server is no longer serving.
        guard let nativeCounts = try? await native.counts(), let catRaceCounts = try? await catRace.counts() else { return nil }
        return ServerSnapshot(
            nativeConnections: nativeCounts.connections, sessions: nativeCounts.sessions, nativeMatches: nativeCounts.matches,
            catRaceConnections: catRaceCounts.connections, catRacePlayers: catRaceCounts.players, catRaceMatches: catRaceCounts.matches,
            isStorageFailing: native.isStorageFailing)
    }
}

/// The counts of a serving server at one moment (``ServerStatus/snapshot()``).
public struct ServerSnapshot: Sendable, Hashable {
    /// Connections open on the native port (handshaking ones included).
    public var nativeConnections: Int
    /// Native sessions live, connected or waiting for a resume.
    public var sessions: Int
    /// Native matches running (every mode: relays, Disks, Four in a Row, native Cat Race).
    public var nativeMatches: Int
    /// Connections open on the Cat Race port.
    public var catRaceConnections: Int
    /// Tutorial clients identified on the Cat Race port.
    public var catRacePlayers: Int
    /// Races running on the Cat Race port.
    public var catRaceMatches: Int
    /// Whether the database is failing writes now (`matchhost_storage_failing`).
    public var isStorageFailing: Bool

    /// Creates a snapshot.
    public init(
        nativeConnections: Int, sessions: Int, nativeMatches: Int, catRaceConnections: Int, catRacePlayers: Int, catRaceMatches: Int,
        isStorageFailing: Bool
    ) {
        self.nativeConnections = nativeConnections
        self.sessions = sessions
        self.nativeMatches = nativeMatches
        self.catRaceConnections = catRaceConnections
        self.catRacePlayers = catRacePlayers
        self.catRaceMatches = catRaceMatches
        self.isStorageFailing = isStorageFailing
    }
}
