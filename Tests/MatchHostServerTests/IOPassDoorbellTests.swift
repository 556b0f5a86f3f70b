import NIOCore
import NIOPosix
import Testing

@testable import MatchHostServer

/// The doorbell that lets a loop's overdue timers and flush backlog wait for its next poll.
@Suite struct IOPassDoorbellTests {
    struct NeverAnswered: Error {}

    /// Fails `promise` if nothing completed it within 10 s (completing a promise again does
    /// nothing), so a doorbell that never answers fails the test instead of hanging it.
    static func failLater<Value>(_ promise: EventLoopPromise<Value>) {
        promise.futureResult.eventLoop.scheduleTask(in: .seconds(10)) { promise.fail(NeverAnswered()) }
    }

    @Test func workWaitingWhenTheDoorbellClosesIsStillDoneAndSoIsLaterWork() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let doorbell = try await IOPassDoorbell.open(on: loop)
        let waited = loop.makePromise(of: Void.self)
        let later = loop.makePromise(of: Void.self)
        Self.failLater(waited)
        Self.failLater(later)
        try await loop.submit {
            // Rung, and closed in the same turn: its byte is never read.
            doorbell.value.afterNextPoll { waited.succeed() }
            doorbell.value.close()
        }.get()
        try await waited.futureResult.get()
        try await loop.submit { doorbell.value.afterNextPoll { later.succeed() } }.get()
        try await later.futureResult.get()
        try await group.shutdownGracefully()
    }

    @Test func eachRingIsAnsweredAfterAPollAndWorkQueuedByAnAnswerWaitsForTheNext() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let doorbell = try await IOPassDoorbell.open(on: loop)
        let done = loop.makePromise(of: [Int].self)
        Self.failLater(done)
        try await loop.submit {
            var order: [Int] = []
            doorbell.value.afterNextPoll {
                order.append(1)
                doorbell.value.afterNextPoll {
                    order.append(3)
                    done.succeed(order)
                }
            }
            doorbell.value.afterNextPoll { order.append(2) }
        }.get()
        #expect(try await done.futureResult.get() == [1, 2, 3])
        try await loop.submit { doorbell.value.close() }.get()
        try await group.shutdownGracefully()
    }
}
