import Foundation
import Logging
import MatchHostCore
import NIOCore

/// The native world's way to its ``GameStore``: every call runs in a task of its own, off the
/// event loop, and its result comes back on the loop, so no store call ever blocks the loop.
///
/// Loop-confined (create and call it on ``eventLoop``). Writes go through a queue
/// (``write(in:_:then:)``): one per match (a turn-based game's creation before its first move,
/// a match's players before its result) and one per player (its values), each run one after
/// another in the order they were made. ``readAfterQueuedWrites(_:then:)`` waits for every
/// write queued before it (a player asking for its stats right after MATCH_ENDED sees that
/// match counted); ``run(_:then:)`` is not ordered at all. Every call is tracked until its result
/// is back, so that shutting down can wait for what is in flight (``inFlight``).
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

    /// The last write of each queue, and how many of its writes are still running.
    private var queues: [Queue: (tail: Task<Void, Never>, count: Int)] = [:]
    private var running: [Int: Task<Void, Never>] = [:]
    private var nextCallNumber = 0

    init(store: any GameStore, eventLoop: any EventLoop, logger: Logger, now: @escaping () -> UnixMillis = UnixMillis.now) {
        self.store = store
        self.eventLoop = eventLoop
        self.logger = logger
        self.now = now
    }

    /// A completion that logs a failure as `what` (a write nobody waits for).
    func logFailure<Value>(_ what: String, match: MatchID? = nil) -> (Result<Value, any Error>) -> Void {
        let logger = self.logger
        return { result in
            guard case .failure(let error) = result else { return }
            var metadata: Logger.Metadata = ["error": "\(error)"]
            if let match { metadata["match"] = "\(match)" }
            logger.warning("\(what)", metadata: metadata)
        }
    }

    /// Every call whose result has not come back yet.
    var inFlight: [Task<Void, Never>] { Array(self.running.values) }

    /// Runs `call` off the loop; `completion` gets its result on the loop.
    func run<Value: Sendable>(
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void = { _ in }
    ) {
        self.start(after: [], call, then: completion) { _ in }
    }

    /// Runs `call` off the loop once every write queued so far has finished; `completion` gets
    /// its result on the loop.
    func readAfterQueuedWrites<Value: Sendable>(
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void
    ) {
        self.start(after: self.queues.values.map(\.tail), call, then: completion) { _ in }
    }

    /// Runs `call` off the loop after every earlier write of `queue` has finished (whether it
    /// succeeded or not); `completion` gets its result on the loop.
    func write<Value: Sendable>(
        in queue: Queue,
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void = { _ in }
    ) {
        let previous = self.queues[queue]
        let task = self.start(after: previous.map { [$0.tail] } ?? [], call, then: completion) { store in
            guard let entry = store.queues[queue] else { return }
            store.queues[queue] = entry.count > 1 ? (entry.tail, entry.count - 1) : nil
        }
        self.queues[queue] = (task, (previous?.count ?? 0) + 1)
    }

    /// ``write(in:_:then:)`` in the queue of `matchID`.
    func write<Value: Sendable>(
        for matchID: MatchID,
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void = { _ in }
    ) {
        self.write(in: .match(matchID), call, then: completion)
    }

    @discardableResult
    private func start<Value: Sendable>(
        after previous: [Task<Void, Never>],
        _ call: @escaping @Sendable (any GameStore) async throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void,
        finished: @escaping (WorldStore) -> Void
    ) -> Task<Void, Never> {
        self.eventLoop.preconditionInEventLoop()
        let number = self.nextCallNumber
        self.nextCallNumber += 1
        let back = NIOLoopBound((self, completion, finished), eventLoop: self.eventLoop)
        let store = self.store
        let loop = self.eventLoop
        // Nobody cancels these tasks: a write whose outcome is acknowledged must run to its end.
        let task = Task {
            for earlier in previous { await earlier.value }
            let result: Result<Value, any Error>
            do {
                result = .success(try await call(store))
            } catch {
                result = .failure(error)
            }
            loop.execute {
                let (world, completion, finished) = back.value
                world.running[number] = nil
                finished(world)
                completion(result)
            }
        }
        self.running[number] = task
        return task
    }
}

extension UnixMillis {
    /// The wall-clock time now.
    static func now() -> UnixMillis {
        UnixMillis(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }
}
