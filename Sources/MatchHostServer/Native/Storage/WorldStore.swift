import Foundation
import Logging
import MatchHostCore
import NIOCore

/// The native world's way to its ``GameStore``: every call runs off the event loop (in a task
/// of its own, or, for a store call that reports through a completion, on the store's own
/// thread) and its result comes back on the loop, so no store call ever blocks the loop.
///
/// Loop-confined (create and call it on ``eventLoop``). Writes go through a queue
/// (``write(in:_:then:)``): one per match (a turn-based game's creation before its first move,
/// a match's players before its result) and one per player (its values), each run one after
/// another in the order they were made. ``readAfterQueuedWrites(_:then:)`` waits for every
/// write queued before it (a player asking for its stats right after MATCH_ENDED sees that
/// match counted); ``read(_:then:)`` and ``write(_:then:)`` are not ordered at all. Every call is
/// tracked until its result is back, so that shutting down can wait for what is in flight
/// (``inFlight``).
///
/// Every outcome also goes to the store's ``StorageOutageMonitor``: when the store fails (a full
/// disk, an I/O error), the log says so once, then at most every
/// ``StorageOutage/reportInterval``, then once when a write succeeds again, however many calls
/// fail meanwhile.
final class WorldStore {
    /// What a queue of writes is for.
    enum Queue: Hashable {
        case match(MatchID)
        case player(PlayerID)
    }

    /// The store.
    let store: any GameStore
    /// The loop results come back on: the world's.
    let eventLoop: any EventLoop
    /// The wall clock storage records times with.
    let now: () -> UnixMillis
    /// Where failed writes nobody waits for are reported.
    let logger: Logger
    /// Where every outcome goes, for the store's outages.
    let outages: StorageOutageMonitor

    /// The world's clock, which retries run on.
    let clock: any MatchClock
    /// How many match endings may wait to be written again (``retryUnstoredEndings()``).
    let maximumUnstoredEndings: Int
    /// How many calls may be waiting for the database at once (``ServerConfiguration/maxStoreBacklog``).
    let maximumBacklog: Int
    /// The wait before the first retry of endings the database failed.
    static let firstEndingRetryDelay: TimeAmount = .seconds(1)
    /// The longest wait between two retries, while the database keeps failing them.
    static let longestEndingRetryDelay: TimeAmount = .seconds(60)
    /// Endings the database failed to store, in the order they ended.
    var unstoredEndings: [UnstoredEnding] = []
    /// Real-time matches whose start the database failed: nothing else of theirs can be
    /// recorded (until their ending, which forgets them).
    var matchesNotRecorded: Set<MatchID> = []
    /// Endings dropped past ``maximumUnstoredEndings`` since the log last said so.
    var endingsGivenUp = 0
    var endingRetry: MatchTimer?
    var endingRetryDelay = WorldStore.firstEndingRetryDelay
    var endingRetriesStopped = false
    var isRetryingEndings = false

    /// The last write of each queue, and how many of its writes are still running.
    private var queues: [Queue: (tail: EventLoopFuture<Void>, count: Int)] = [:]
    /// Every call whose result has not come back yet, by number.
    private var running: [Int: EventLoopFuture<Void>] = [:]
    private var nextCallNumber = 0

    /// - Parameters:
    ///   - clock: the world's clock (its timers run on `eventLoop`).
    ///   - outages: the store's monitor, shared by every world writing to it; by default one of
    ///     this world's own.
    ///   - maximumUnstoredEndings: see ``ServerConfiguration/maxUnstoredResults``.
    ///   - maximumBacklog: see ``ServerConfiguration/maxStoreBacklog``.
    init(
        store: any GameStore, eventLoop: any EventLoop, clock: any MatchClock, logger: Logger, outages: StorageOutageMonitor? = nil,
        maximumUnstoredEndings: Int = 10_000, maximumBacklog: Int = 50_000, now: @escaping () -> UnixMillis = UnixMillis.now
    ) {
        self.maximumUnstoredEndings = maximumUnstoredEndings
        self.maximumBacklog = maximumBacklog
        self.store = store
        self.clock = clock
        self.eventLoop = eventLoop
        self.logger = logger
        self.outages = outages ?? StorageOutageMonitor(logger: logger)
        self.now = now
    }

    /// A completion that logs a failure as `what` (a write nobody waits for): at `warning`, or
    /// at `debug` when the database failed (the outage report already says so once for all),
    /// or the match's start was not recorded because it did (what follows then fails too).
    func logFailure<Value>(_ what: String, match: MatchID? = nil) -> (Result<Value, any Error>) -> Void {
        { [weak self] result in
            guard case .failure(let error) = result, let self else { return }
            var metadata: Logger.Metadata = ["error": "\(error)"]
            if let match { metadata["match"] = "\(match)" }
            let expected = GameStoreError.isStorageFailure(error) || match.map(self.matchesNotRecorded.contains) == true
            self.logger.log(level: expected ? .debug : .warning, "\(what)", metadata: metadata)
        }
    }

    /// Every call whose result has not come back yet: each succeeds once its result is back.
    var inFlight: [EventLoopFuture<Void>] { Array(self.running.values) }

    /// How many calls of `queue` are running or waiting their turn.
    func callsQueued(in queue: Queue) -> Int {
        self.queues[queue]?.count ?? 0
    }

    /// Runs `call`, which only reads, off the loop; `completion` gets its result on the loop.
    func read<Value: Sendable>(
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void
    ) {
        self.start(after: [], .awaited(call), .read, then: completion) { _ in }
    }

    /// Runs `call`, which writes, off the loop, in no queue; `completion` gets its result on the loop.
    func write<Value: Sendable>(
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void = { _ in }
    ) {
        self.start(after: [], .awaited(call), .write, then: completion) { _ in }
    }

    /// Runs `call` off the loop once every write queued so far has finished; `completion` gets
    /// its result on the loop.
    func readAfterQueuedWrites<Value: Sendable>(
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void
    ) {
        self.start(after: self.queues.values.map(\.tail), .awaited(call), .read, then: completion) { _ in }
    }

    /// Runs `call` off the loop after every earlier write of `queue` has finished (whether it
    /// succeeded or not); `completion` gets its result on the loop.
    func write<Value: Sendable>(
        in queue: Queue,
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void = { _ in }
    ) {
        self.enqueue(in: queue, .awaited(call), .write, then: completion)
    }

    /// ``write(in:_:then:)`` for a call that only reads: a read that must see the queue's
    /// writes before it, and that later writes must wait for.
    func read<Value: Sendable>(
        in queue: Queue,
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void
    ) {
        self.enqueue(in: queue, .awaited(call), .read, then: completion)
    }

    /// ``write(in:_:then:)`` in the queue of `matchID`.
    func write<Value: Sendable>(
        for matchID: MatchID,
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void = { _ in }
    ) {
        self.write(in: .match(matchID), call, then: completion)
    }

    /// ``write(in:_:then:)`` for a store call that reports through a completion (such as
    /// ``GameStore/appendMove(matchID:moveNumber:move:state:at:completion:)``): made straight from
    /// the loop, without a task, when nothing of its queue is still running, which is the usual
    /// case for a game's next move (the one before it was acknowledged before this one could be
    /// played).
    func write<Value: Sendable>(
        for matchID: MatchID,
        reporting call: @escaping @Sendable (any GameStore, @escaping @Sendable (Result<Value, any Error>) -> Void) -> Void,
        then completion: @escaping (Result<Value, any Error>) -> Void
    ) {
        self.enqueue(in: .match(matchID), .reporting(call), .write, then: completion)
    }

    /// Whether a call writes: only a write that succeeds ends an outage.
    private enum Kind {
        case read
        case write
    }

    /// How a store call gives its result.
    private enum Call<Value: Sendable> {
        case awaited(@Sendable (any GameStore) async throws -> Value)
        case reporting(@Sendable (any GameStore, @escaping @Sendable (Result<Value, any Error>) -> Void) -> Void)

        /// Makes the call and waits for its result.
        func result(from store: any GameStore) async -> Result<Value, any Error> {
            switch self {
            case .awaited(let call):
                do {
                    return .success(try await call(store))
                } catch {
                    return .failure(error)
                }
            case .reporting(let call):
                return await withCheckedContinuation { continuation in call(store) { continuation.resume(returning: $0) } }
            }
        }
    }

    private func enqueue<Value: Sendable>(
        in queue: Queue, _ call: Call<Value>, _ kind: Kind, then completion: @escaping (Result<Value, any Error>) -> Void
    ) {
        // Refused before it joins the queue, whose next call then waits for the one before.
        guard !self.refusesOverBacklog(completion) else { return }
        let previous = self.queues[queue]
        let done = self.start(after: previous.map { [$0.tail] } ?? [], call, kind, then: completion) { store in
            guard let entry = store.queues[queue] else { return }
            store.queues[queue] = entry.count > 1 ? (entry.tail, entry.count - 1) : nil
        }
        self.queues[queue] = (done, (previous?.count ?? 0) + 1)
    }

    /// A database that falls behind (a stalled disk) must not make the server hold a call, a
    /// task and a completion for every request that keeps coming: past ``maximumBacklog``
    /// calls waiting, a new one fails at once, as a failure of the database does (the caller
    /// refuses or keeps it as it would then, and the outage is reported). Returns whether it
    /// refused; `completion` then gets the failure on a later turn of the loop, as it would
    /// from the store.
    private func refusesOverBacklog<Value>(_ completion: @escaping (Result<Value, any Error>) -> Void) -> Bool {
        guard self.running.count >= self.maximumBacklog else { return false }
        let error = GameStoreError.storageFailed(
            reason: "\(self.running.count) calls are waiting for the database (--max-store-backlog \(self.maximumBacklog))")
        self.eventLoop.assumeIsolated().execute {
            self.outages.failed(error)
            completion(.failure(error))
        }
        return true
    }

    /// Makes `call` once every future of `previous` has completed; `finished`, then
    /// `completion`, get its result on the loop. Returns a future that succeeds once they have.
    @discardableResult
    private func start<Value: Sendable>(
        after previous: [EventLoopFuture<Void>],
        _ call: Call<Value>,
        _ kind: Kind,
        then completion: @escaping (Result<Value, any Error>) -> Void,
        finished: @escaping (WorldStore) -> Void
    ) -> EventLoopFuture<Void> {
        self.eventLoop.preconditionInEventLoop()
        if self.refusesOverBacklog(completion) { return self.eventLoop.makeSucceededVoidFuture() }
        let number = self.nextCallNumber
        self.nextCallNumber += 1
        let done = self.eventLoop.makePromise(of: Void.self)
        let back = NIOLoopBound((self, completion, finished), eventLoop: self.eventLoop)
        let loop = self.eventLoop
        let deliver: @Sendable (Result<Value, any Error>) -> Void = { result in
            loop.execute {
                let (world, completion, finished) = back.value
                world.running[number] = nil
                switch result {
                case .success:
                    if kind == .write { world.outages.wrote() }
                case .failure(let error): world.outages.failed(error)
                }
                finished(world)
                completion(result)
                done.succeed()
            }
        }
        let store = self.store
        // A queue's entry exists only while one of its writes is running: no `previous`, nothing to wait for.
        if case .reporting(let report) = call, previous.isEmpty {
            report(store, deliver)
        } else {
            // Nobody cancels these tasks: a write whose outcome is acknowledged must run to its end.
            Task {
                for earlier in previous { try? await earlier.get() }
                deliver(await call.result(from: store))
            }
        }
        self.running[number] = done.futureResult
        return done.futureResult
    }
}

extension UnixMillis {
    /// The system's wall-clock time now.
    public static func now() -> UnixMillis {
        WallClock.system.now()
    }
}
