import MatchHostCore
import NIOConcurrencyHelpers

/// What a running server holds right now, for the admin endpoints (health, metrics): counted
/// on each listener's loop when asked, so that nothing on the hot path keeps these numbers.
///
/// ``MatchHostService`` attaches its listeners once they are bound and detaches them when it
/// starts shutting down; until then and after, ``snapshot()`` says the server is not serving.
public final class ServerStatus: Sendable {
    fileprivate let listeners = NIOLockedValueBox<(native: NativeListener, catRace: CatRaceListener)?>(nil)

    /// Creates a status with nothing attached.
    public init() {}

    func attach(native: NativeListener, catRace: CatRaceListener) {
        self.listeners.withLockedValue { $0 = (native, catRace) }
    }

    func detach() {
        self.listeners.withLockedValue { $0 = nil }
    }

    /// The counts now, or nil while the server is not serving (starting or shutting down).
    public func snapshot() async -> ServerSnapshot? {
        guard let (native, catRace) = self.listeners.withLockedValue({ $0 }) else { return nil }
        // Listeners are detached before they close, and their loops outlive them: a snapshot
        // taken as the shutdown begins may still say serving, never hangs.
        guard let nativeCounts = try? await native.counts(), let catRaceCounts = try? await catRace.counts() else { return nil }
        return ServerSnapshot(
            nativeConnections: nativeCounts.connections, sessions: nativeCounts.sessions, nativeMatches: nativeCounts.matches,
            catRaceConnections: catRaceCounts.connections, catRacePlayers: catRaceCounts.players, catRaceMatches: catRaceCounts.matches,
            isStorageFailing: native.isStorageFailing)
    }
}

/// The server is not serving: it is starting or stopping.
public struct ServerNotServing: Error, CustomStringConvertible {
    /// Creates the error.
    public init() {}

    /// What the admin endpoints answer.
    public var description: String { "the server is not serving (starting or stopping)" }
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
}

/// One running native match as the admin page lists it: no invite code, no player ids.
public struct RunningMatchSummary: Sendable, Hashable, Codable {
    /// The match's id.
    public var id: UInt64
    /// Its game mode.
    public var mode: String
    /// The label its creator or its game set.
    public var label: String
    /// Players seated (connected, away or reserved).
    public var players: Int
    /// Of those, the ones connected now.
    public var connected: Int
    /// The most players it holds.
    public var capacity: Int
    /// Whether it is joined by invite code only.
    public var isPrivate: Bool
}

extension ServerStatus {
    /// Bans a player, or lifts its ban (``NativeListener/setBan(reason:lasting:of:)``): the
    /// operator's action, for the admin endpoints.
    /// - Throws: ``ServerNotServing`` while the server starts or stops, or what
    ///   ``NativeListener/setBan(reason:lasting:of:)`` throws.
    @discardableResult
    public func setBan(reason: String?, lasting: Duration? = nil, of playerID: PlayerID) async throws -> PlayerBan? {
        try await self.serving().setBan(reason: reason, lasting: lasting, of: playerID)
    }

    /// The operator lifting a ban (``NativeListener/liftBan(of:)``): whether one was in force.
    /// - Throws: ``ServerNotServing`` while the server starts or stops, or the store's failure.
    public func liftBan(of playerID: PlayerID) async throws -> Bool {
        try await self.serving().liftBan(of: playerID)
    }

    /// The bans in force (``NativeListener/bansInForce()``), or with `all` every ban made
    /// (``NativeListener/banRecords(of:limit:)``), of `playerID` (nil: of every player), the
    /// latest made first, at most `limit`.
    /// - Throws: ``ServerNotServing`` while the server starts or stops, or the store's failure.
    public func bans(all: Bool, of playerID: PlayerID?, limit: Int) async throws -> [PlayerBanRecord] {
        let serving = try self.serving()
        guard all else {
            return Array(try await serving.bansInForce().filter { playerID == nil || $0.playerID == playerID }.prefix(limit))
        }
        return try await serving.banRecords(of: playerID, limit: limit)
    }

    /// The operator's unlink of a player's device (``NativeListener/unlinkDevice(_:of:)``).
    /// - Throws: ``ServerNotServing`` while the server starts or stops, or what
    ///   ``NativeListener/unlinkDevice(_:of:)`` throws.
    public func unlinkDevice(_ deviceID: String, of playerID: PlayerID) async throws {
        try await self.serving().unlinkDevice(deviceID, of: playerID)
    }

    /// A link code the operator makes for a player (``NativeListener/createLinkCode(for:)``).
    /// - Throws: ``ServerNotServing`` while the server starts or stops, or what
    ///   ``NativeListener/createLinkCode(for:)`` throws.
    public func createLinkCode(for playerID: PlayerID) async throws -> (code: String, expiresAt: UnixMillis) {
        try await self.serving().createLinkCode(for: playerID)
    }

    /// The operator's recovery of a player's account (``NativeListener/recoverAccount(of:)``).
    /// - Throws: ``ServerNotServing`` while the server starts or stops, or what
    ///   ``NativeListener/recoverAccount(of:)`` throws.
    public func recoverAccount(of playerID: PlayerID) async throws -> (removed: [String], code: String, expiresAt: UnixMillis) {
        try await self.serving().recoverAccount(of: playerID)
    }

    /// The operator's rename or alias lock of a player (``NativeListener/changeAlias(of:_:)``).
    /// - Throws: ``ServerNotServing`` while the server starts or stops, or what
    ///   ``NativeListener/changeAlias(of:_:)`` throws.
    public func changeAlias(of playerID: PlayerID, _ change: OperatorAliasChange) async throws -> PlayerRecord {
        try await self.serving().changeAlias(of: playerID, change)
    }

    private func serving() throws -> NativeListener {
        guard let native = self.listeners.withLockedValue({ $0?.native }) else { throw ServerNotServing() }
        return native
    }

    /// The running native matches, lowest id first, at most `limit` of them, and how many run
    /// in all; nil while the server is not serving.
    public func runningMatches(limit: Int) async -> (total: Int, matches: [RunningMatchSummary])? {
        guard let native = self.listeners.withLockedValue({ $0?.native }) else { return nil }
        return try? await native.runningMatches(limit: limit)
    }
}
