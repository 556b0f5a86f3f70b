import NIOCore
import NIOEmbedded
import Testing

@testable import MatchHostServer

/// Flushes once per pass, and a big fan-out spread over several passes with the loop's polls in
/// between, later passes first.
@Suite struct FlushCoalescerTests {
    /// A connection as the handlers are: it registers on its first unflushed write only.
    final class Connection: CoalescedFlushing {
        let name: String
        let log: FlushLog
        var flushPending = false
        var unflushedWrites = 0
        /// Runs inside the flush, as a handler's close or write-back might.
        var whenFlushed: (() -> Void)?

        init(_ name: String, log: FlushLog) {
            self.name = name
            self.log = log
        }

        func write(through coalescer: FlushCoalescer) {
            self.unflushedWrites += 1
            guard !self.flushPending else { return }
            self.flushPending = true
            coalescer.enqueue(self)
        }

        func flushCoalesced() {
            self.flushPending = false
            self.log.flushes.append("\(self.name):\(self.unflushedWrites)")
            self.unflushedWrites = 0
            self.whenFlushed?()
        }
    }

    final class FlushLog {
        var flushes: [String] = []
    }

    /// Polls recorded instead of made, so a test decides when the loop has read its sockets.
    final class RecordedPolls {
        var waiting: [() -> Void] = []

        func poll() {
            let bodies = self.waiting
            self.waiting = []
            for body in bodies { body() }
        }
    }

    @Test func everyConnectionIsFlushedOncePerPassWithAllItsWrites() {
        let loop = EmbeddedEventLoop()
        let polls = RecordedPolls()
        let coalescer = FlushCoalescer(eventLoop: loop, yieldToIO: { polls.waiting.append($0) })
        let log = FlushLog()
        let a = Connection("a", log: log)
        let b = Connection("b", log: log)
        a.write(through: coalescer)
        b.write(through: coalescer)
        a.write(through: coalescer)
        #expect(log.flushes.isEmpty)
        loop.run()
        #expect(log.flushes == ["a:2", "b:1"])
        #expect(polls.waiting.isEmpty)
        b.write(through: coalescer)
        loop.run()
        #expect(log.flushes == ["a:2", "b:1", "b:1"])
    }

    @Test func withinTheBudgetAThousandConnectionsGoOutInOnePass() {
        // The embedded loop's time stands still, so no pass ever reaches 4 ms.
        let loop = EmbeddedEventLoop()
        let polls = RecordedPolls()
        let coalescer = FlushCoalescer(eventLoop: loop, yieldToIO: { polls.waiting.append($0) })
        let log = FlushLog()
        let connections = (0..<1000).map { Connection("\($0)", log: log) }
        for connection in connections { connection.write(through: coalescer) }
        loop.run()
        #expect(log.flushes.count == 1000)
        #expect(coalescer.backlogCount == 0)
        #expect(polls.waiting.isEmpty)
    }

    @Test func aPassOverItsBudgetLeavesTheRestUntilAfterTheNextPoll() {
        let loop = EmbeddedEventLoop()
        let polls = RecordedPolls()
        // A zero budget: every pass, and every turn of the backlog, flushes one connection.
        let coalescer = FlushCoalescer(eventLoop: loop, budget: .zero, yieldToIO: { polls.waiting.append($0) })
        let log = FlushLog()
        let connections = (0..<4).map { Connection("c\($0)", log: log) }
        for connection in connections { connection.write(through: coalescer) }
        loop.run()
        #expect(log.flushes == ["c0:1"])
        #expect(coalescer.backlogCount == 3)
        #expect(polls.waiting.count == 1)
        // Tasks on the loop do not drain the backlog: only the poll does.
        loop.run()
        #expect(log.flushes == ["c0:1"])
        // A connection waiting in the backlog takes more writes without registering again,
        // and sends them all in its one flush.
        connections[2].write(through: coalescer)
        loop.run()
        #expect(log.flushes == ["c0:1"])
        polls.poll()
        #expect(log.flushes == ["c0:1", "c1:1"])
        #expect(polls.waiting.count == 1)
        polls.poll()
        polls.poll()
        #expect(log.flushes == ["c0:1", "c1:1", "c2:2", "c3:1"])
        #expect(coalescer.backlogCount == 0)
        #expect(polls.waiting.isEmpty)
    }

    @Test func laterPassesGoFirstAndWhatTheyCannotFlushJoinsTheBacklogsEnd() {
        let loop = EmbeddedEventLoop()
        let polls = RecordedPolls()
        let coalescer = FlushCoalescer(eventLoop: loop, budget: .zero, yieldToIO: { polls.waiting.append($0) })
        let log = FlushLog()
        let fanOut = (0..<3).map { Connection("fan\($0)", log: log) }
        for connection in fanOut { connection.write(through: coalescer) }
        loop.run()
        #expect(log.flushes == ["fan0:1"])

        // A tick after the poll: its players are flushed before the fan-out's rest.
        let tick = (0..<2).map { Connection("tick\($0)", log: log) }
        for connection in tick { connection.write(through: coalescer) }
        loop.run()
        #expect(log.flushes == ["fan0:1", "tick0:1"])
        // Still one wait for a poll, however many passes joined the backlog.
        #expect(polls.waiting.count == 1)
        #expect(coalescer.backlogCount == 3)
        for _ in 0..<3 { polls.poll() }
        #expect(log.flushes == ["fan0:1", "tick0:1", "fan1:1", "fan2:1", "tick1:1"])
        #expect(polls.waiting.isEmpty)
    }

    @Test func aConnectionRegisteredByAFlushIsFlushedInALaterPass() {
        let loop = EmbeddedEventLoop()
        let polls = RecordedPolls()
        let coalescer = FlushCoalescer(eventLoop: loop, yieldToIO: { polls.waiting.append($0) })
        let log = FlushLog()
        let a = Connection("a", log: log)
        let b = Connection("b", log: log)
        // a's flush writes to a again and to b (a close that says goodbye, say).
        a.whenFlushed = {
            a.whenFlushed = nil
            a.write(through: coalescer)
            b.write(through: coalescer)
        }
        a.write(through: coalescer)
        loop.run()
        #expect(log.flushes == ["a:1", "a:1", "b:1"])
        #expect(polls.waiting.isEmpty)
    }

    @Test func aBacklogTurnThatRegistersConnectionsLeavesThemToThePass() {
        let loop = EmbeddedEventLoop()
        let polls = RecordedPolls()
        let coalescer = FlushCoalescer(eventLoop: loop, budget: .zero, yieldToIO: { polls.waiting.append($0) })
        let log = FlushLog()
        let first = Connection("first", log: log)
        let waiting = Connection("waiting", log: log)
        let woken = Connection("woken", log: log)
        waiting.whenFlushed = { woken.write(through: coalescer) }
        first.write(through: coalescer)
        waiting.write(through: coalescer)
        loop.run()
        #expect(log.flushes == ["first:1"])
        polls.poll()
        #expect(log.flushes == ["first:1", "waiting:1"])
        #expect(coalescer.backlogCount == 0)
        loop.run()
        #expect(log.flushes == ["first:1", "waiting:1", "woken:1"])
        #expect(polls.waiting.isEmpty)
    }
}
