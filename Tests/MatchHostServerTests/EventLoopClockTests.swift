import MatchHostCore
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

@testable import MatchHostServer

/// The production match clock: one timer queue per loop that yields to the loop's sockets.
@Suite struct EventLoopClockTests {
    /// Yields recorded instead of run, so a test decides when "the loop polled".
    final class RecordedYields {
        var waiting: [() -> Void] = []

        func run() {
            let bodies = self.waiting
            self.waiting = []
            for body in bodies { body() }
        }
    }

    @Test func timersFireInDeadlineOrderAndCancelledOnesNever() {
        let loop = EmbeddedEventLoop()
        let clock = EventLoopClock(eventLoop: loop)
        var fired: [String] = []
        let start = clock.now
        _ = clock.schedule(at: start + .milliseconds(30)) { fired.append("c") }
        _ = clock.schedule(at: start + .milliseconds(10)) { fired.append("a1") }
        let cancelled = clock.schedule(at: start + .milliseconds(20)) { fired.append("cancelled") }
        _ = clock.schedule(at: start + .milliseconds(10)) { fired.append("a2") }
        _ = clock.schedule(at: start + .milliseconds(25)) { fired.append("b") }
        cancelled.cancel()
        #expect(clock.pendingCount == 4)

        loop.advanceTime(by: .milliseconds(10))
        #expect(fired == ["a1", "a2"])
        loop.advanceTime(by: .milliseconds(30))
        #expect(fired == ["a1", "a2", "b", "c"])
        #expect(clock.pendingCount == 0)
    }

    @Test func aTimerScheduledEarlierThanTheArmedOneStillFiresOnTime() {
        let loop = EmbeddedEventLoop()
        let clock = EventLoopClock(eventLoop: loop)
        var fired: [Int] = []
        _ = clock.schedule(after: .seconds(10)) { fired.append(10) }
        _ = clock.schedule(after: .seconds(1)) { fired.append(1) }
        loop.advanceTime(by: .seconds(1))
        #expect(fired == [1])
        loop.advanceTime(by: .seconds(9))
        #expect(fired == [1, 10])
    }

    @Test func aBatchStopsAtItsBudgetAndTheRestWaitsForTheSocketsToBePolled() {
        let loop = EmbeddedEventLoop()
        let yields = RecordedYields()
        // A zero budget: every batch runs one timer, then yields.
        let clock = EventLoopClock(eventLoop: loop, batchBudget: .zero, yieldToIO: { yields.waiting.append($0) })
        var fired: [Int] = []
        for index in 0..<3 {
            _ = clock.schedule(after: .milliseconds(5)) { fired.append(index) }
        }
        loop.advanceTime(by: .milliseconds(5))
        #expect(fired == [0])
        #expect(yields.waiting.count == 1)
        // Nothing more runs on the loop's own timers while the clock waits for the poll.
        loop.advanceTime(by: .milliseconds(50))
        #expect(fired == [0])
        yields.run()
        #expect(fired == [0, 1])
        yields.run()
        #expect(fired == [0, 1, 2])
        #expect(yields.waiting.isEmpty)
    }

    @Test func aDueTimerQueuedByABatchWaitsForTheNextPoll() {
        let loop = EmbeddedEventLoop()
        let yields = RecordedYields()
        let clock = EventLoopClock(eventLoop: loop, yieldToIO: { yields.waiting.append($0) })
        var ticks = 0
        // An overdue tick that reschedules itself at once, as an overloaded match would.
        func tick() {
            ticks += 1
            _ = clock.schedule(at: clock.now) { tick() }
        }
        _ = clock.schedule(after: .milliseconds(1)) { tick() }
        loop.advanceTime(by: .milliseconds(1))
        #expect(ticks == 1)
        #expect(yields.waiting.count == 1)
        yields.run()
        #expect(ticks == 2)
        #expect(yields.waiting.count == 1)
    }

    @Test func manyCancelledTimersDoNotOutliveTheirCancellation() {
        let loop = EmbeddedEventLoop()
        let clock = EventLoopClock(eventLoop: loop)
        var fired = 0
        var timers: [MatchTimer] = []
        for index in 0..<1_000 {
            timers.append(clock.schedule(after: .seconds(Int64(30 + index))) { fired += 1 })
        }
        for timer in timers.dropLast(10) { timer.cancel() }
        #expect(clock.pendingCount == 10)
        loop.advanceTime(by: .seconds(2_000))
        #expect(fired == 10)
    }

    /// The fault this clock exists for: matches whose ticks take longer than their interval
    /// must not stop the loop from accepting and reading connections.
    @Test func anOverloadedLoopStillAcceptsAndReadsSockets() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let worldLoop = try await WorldLoop.open(on: loop)
        let overloaded = loop.makePromise(of: Void.self)
        let overload = Overload(overloaded: overloaded)
        let read = loop.makePromise(of: Int.self)
        let server = try await ServerBootstrap(group: loop)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FirstRead(promise: read, overload: overload))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        // 20 "matches" ticking every millisecond, each tick 2 ms of work: 40 times more than fits.
        let clock = worldLoop.clock
        try await loop.submit {
            for _ in 0..<20 { overload.start(on: clock.value) }
        }.get()
        try await overloaded.futureResult.get()
        // A bound, not a timing: a starved loop would never read, and the test must fail, not hang.
        let timeout = clientGroup.next().scheduleTask(in: .seconds(20)) { read.fail(OverloadTestTimeout()) }
        let client = try await ClientBootstrap(group: clientGroup).connect(to: server.localAddress!).get()
        try await client.writeAndFlush(ByteBuffer(string: "hello")).get()

        let ticksBeforeRead = try await read.futureResult.get()
        timeout.cancel()
        let ticksAtEnd = try await loop.submit {
            overload.stop()
            return overload.ticks
        }.get()
        // Ticks ran before the read (the loop was overloaded) and after it (still running):
        // the read did not have to wait for the overload to end.
        #expect(ticksBeforeRead >= Overload.overloadedAfter)
        #expect(ticksAtEnd > ticksBeforeRead)

        try await client.close()
        try await server.close()
        await worldLoop.closeIfLast()
        try await clientGroup.shutdownGracefully()
        try await group.shutdownGracefully()
    }
}

private struct OverloadTestTimeout: Error {}

/// Ticks that each busy-run for 2 ms and are due again 1 ms later.
private final class Overload: @unchecked Sendable {  // used only on its loop
    static let overloadedAfter = 100
    var ticks = 0
    private var running = true
    private let overloaded: EventLoopPromise<Void>

    init(overloaded: EventLoopPromise<Void>) {
        self.overloaded = overloaded
    }

    func start(on clock: EventLoopClock) {
        func tick(at deadline: NIODeadline) {
            guard self.running else { return }
            self.ticks += 1
            if self.ticks == Self.overloadedAfter { self.overloaded.succeed() }
            let end = NIODeadline.now() + .milliseconds(2)
            while NIODeadline.now() < end {}
            var next = deadline + .milliseconds(1)
            while next <= clock.now { next = next + .milliseconds(1) }
            _ = clock.schedule(at: next) { tick(at: next) }
        }
        let first = clock.now + .milliseconds(1)
        _ = clock.schedule(at: first) { tick(at: first) }
    }

    func stop() {
        self.running = false
    }
}

private final class FirstRead: ChannelInboundHandler, @unchecked Sendable {  // on its loop
    typealias InboundIn = ByteBuffer
    private let promise: EventLoopPromise<Int>
    private let overload: Overload

    init(promise: EventLoopPromise<Int>, overload: Overload) {
        self.promise = promise
        self.overload = overload
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.promise.succeed(self.overload.ticks)
    }
}
