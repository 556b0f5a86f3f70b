import NIOCore
import NIOEmbedded
import Testing

@testable import MatchHostServer

/// Flushes once per pass, and a big fan-out spread over several passes with the loop's polls in
/// between, later passes first.
@Suite struct FlushCoalescerTests {
    /// A connection as the handlers are: it registers on its first unflushed write only, and
    /// again once told its flush waits in the backlog; a flush with nothing written does nothing.
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
            guard self.unflushedWrites > 0 else { return }
            self.log.flushes.append("\(self.name):\(self.unflushedWrites)")
            self.unflushedWrites = 0
            self.whenFlushed?()
        }

        func flushDeferred() {
            self.flushPending = false
        }
    }

    final class FlushLog {
        var flushes: [String] = []
    }

    /// A coalescer on an embedded loop whose polls the test makes (``EventLoopClockTests/RecordedYields``).
    struct Fixture {
        let loop = EmbeddedEventLoop()
        let polls = EventLoopClockTests.RecordedYields()
        let log = FlushLog()
        let coalescer: FlushCoalescer

        /// - Parameter budget: zero flushes one connection a pass, and one a turn of the backlog.
        init(budget: TimeAmount = .milliseconds(4)) {
            let polls = self.polls
            self.coalescer = FlushCoalescer(eventLoop: self.loop, budget: budget, yieldToIO: { polls.waiting.append($0) })
        }

        func connections(_ prefix: String, _ count: Int) -> [Connection] {
            (0..<count).map { Connection("\(prefix)\($0)", log: self.log) }
        }

        func poll() { self.polls.run() }
    }

    @Test func everyConnectionIsFlushedOncePerPassWithAllItsWrites() {
        let fixture = Fixture()
        let (a, b) = (Connection("a", log: fixture.log), Connection("b", log: fixture.log))
        a.write(through: fixture.coalescer)
        b.write(through: fixture.coalescer)
        a.write(through: fixture.coalescer)
        #expect(fixture.log.flushes.isEmpty)
        fixture.loop.run()
        #expect(fixture.log.flushes == ["a:2", "b:1"])
        #expect(fixture.polls.waiting.isEmpty)
        b.write(through: fixture.coalescer)
        fixture.loop.run()
        #expect(fixture.log.flushes == ["a:2", "b:1", "b:1"])
    }

    @Test func withinTheBudgetAThousandConnectionsGoOutInOnePass() {
        // The embedded loop's time stands still, so no pass ever reaches 4 ms.
        let fixture = Fixture()
        for connection in fixture.connections("c", 1000) { connection.write(through: fixture.coalescer) }
        fixture.loop.run()
        #expect(fixture.log.flushes.count == 1000)
        #expect(fixture.coalescer.backlogCount == 0)
        #expect(fixture.polls.waiting.isEmpty)
    }

    @Test func aPassOverItsBudgetLeavesTheRestUntilAfterTheNextPoll() {
        let fixture = Fixture(budget: .zero)
        let connections = fixture.connections("c", 4)
        for connection in connections { connection.write(through: fixture.coalescer) }
        fixture.loop.run()
        #expect(fixture.log.flushes == ["c0:1"])
        #expect(fixture.coalescer.backlogCount == 3)
        #expect(fixture.polls.waiting.count == 1)
        // Tasks on the loop do not drain the backlog: only the poll does.
        fixture.loop.run()
        #expect(fixture.log.flushes == ["c0:1"])
        // A connection waiting in the backlog that is written to (a tick for a lobby
        // subscriber) registers again and goes out, with what waited, in the next pass.
        connections[2].write(through: fixture.coalescer)
        fixture.loop.run()
        #expect(fixture.log.flushes == ["c0:1", "c2:2"])
        #expect(fixture.coalescer.backlogCount == 3)
        fixture.poll()
        #expect(fixture.log.flushes == ["c0:1", "c2:2", "c1:1"])
        #expect(fixture.polls.waiting.count == 1)
        // Its turn in the backlog finds nothing left to write.
        fixture.poll()
        fixture.poll()
        #expect(fixture.log.flushes == ["c0:1", "c2:2", "c1:1", "c3:1"])
        #expect(fixture.coalescer.backlogCount == 0)
        #expect(fixture.polls.waiting.isEmpty)
    }

    @Test func laterPassesGoFirstAndWhatTheyCannotFlushJoinsTheBacklogsEnd() {
        let fixture = Fixture(budget: .zero)
        for connection in fixture.connections("fan", 3) { connection.write(through: fixture.coalescer) }
        fixture.loop.run()
        #expect(fixture.log.flushes == ["fan0:1"])

        // A tick after the poll: its players are flushed before the fan-out's rest.
        for connection in fixture.connections("tick", 2) { connection.write(through: fixture.coalescer) }
        fixture.loop.run()
        #expect(fixture.log.flushes == ["fan0:1", "tick0:1"])
        // Still one wait for a poll, however many passes joined the backlog.
        #expect(fixture.polls.waiting.count == 1)
        #expect(fixture.coalescer.backlogCount == 3)
        for _ in 0..<3 { fixture.poll() }
        #expect(fixture.log.flushes == ["fan0:1", "tick0:1", "fan1:1", "fan2:1", "tick1:1"])
        #expect(fixture.polls.waiting.isEmpty)
    }

    @Test func aConnectionRegisteredByAFlushIsFlushedInALaterPass() {
        let fixture = Fixture()
        let (a, b) = (Connection("a", log: fixture.log), Connection("b", log: fixture.log))
        let coalescer = fixture.coalescer
        // a's flush writes to a again and to b (a close that says goodbye, say).
        a.whenFlushed = {
            a.whenFlushed = nil
            a.write(through: coalescer)
            b.write(through: coalescer)
        }
        a.write(through: coalescer)
        fixture.loop.run()
        #expect(fixture.log.flushes == ["a:1", "a:1", "b:1"])
        #expect(fixture.polls.waiting.isEmpty)
    }

    @Test func aBacklogTurnThatRegistersConnectionsLeavesThemToThePass() {
        let fixture = Fixture(budget: .zero)
        let coalescer = fixture.coalescer
        let first = Connection("first", log: fixture.log)
        let waiting = Connection("waiting", log: fixture.log)
        let woken = Connection("woken", log: fixture.log)
        waiting.whenFlushed = { woken.write(through: coalescer) }
        first.write(through: coalescer)
        waiting.write(through: coalescer)
        fixture.loop.run()
        #expect(fixture.log.flushes == ["first:1"])
        fixture.poll()
        #expect(fixture.log.flushes == ["first:1", "waiting:1"])
        #expect(coalescer.backlogCount == 0)
        fixture.loop.run()
        #expect(fixture.log.flushes == ["first:1", "waiting:1", "woken:1"])
        #expect(fixture.polls.waiting.isEmpty)
    }
}
