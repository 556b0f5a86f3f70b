import Logging
import MatchHostCore
import MatchHostWire
import NIOCore
import Testing

/// A connection stand-in that records what a session writes to it.
final class RecordingTransport: SessionTransport {
    enum Written: Equatable {
        case reliable(sequence: UInt64, ack: UInt64, text: String)
        case unreliable(String)
        case control(NativeFrame)
        case closed(NativeErrorCode)
    }

    private(set) var written: [Written] = []

    func writeReliable(sequence: UInt64, ack: UInt64, message: ByteBuffer) {
        self.written.append(.reliable(sequence: sequence, ack: ack, text: String(buffer: message)))
    }
    func writeUnreliable(message: ByteBuffer) { self.written.append(.unreliable(String(buffer: message))) }
    func writeControl(_ frame: NativeFrame) { self.written.append(.control(frame)) }
    func close(with error: NativeError) { self.written.append(.closed(error.code)) }

    func take() -> [Written] {
        defer { self.written.removeAll() }
        return self.written
    }
}

/// Sessions on a manual clock: grace, resume, backlog and replacement, without sockets or sleeps.
@Suite struct SessionRegistryTests {
    let clock = ManualClock()
    let registry: SessionRegistry

    init() {
        self.registry = SessionRegistry(
            // Four 16-byte messages, each with its charge (Session.backlogChargePerMessage).
            clock: self.clock, gracePeriod: .seconds(30), maximumBacklogBytes: 4 * (16 + Session.backlogChargePerMessage),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    @Test func reliableMessagesAreNumberedAndResentFromWhatTheClientLastReceived() throws {
        let first = RecordingTransport()
        let session = self.registry.open(player: "p1", transport: first)
        for text in ["one", "two", "three"] { session.sendReliable(ByteBuffer(string: text)) }
        #expect(first.take() == [
            .reliable(sequence: 1, ack: 0, text: "one"), .reliable(sequence: 2, ack: 0, text: "two"),
            .reliable(sequence: 3, ack: 0, text: "three"),
        ])
        #expect(try session.receiveReliable(sequence: 1, ack: 1))
        #expect(try !session.receiveReliable(sequence: 1, ack: 1))  // a duplicate
        self.registry.detach(session, from: first)
        session.sendReliable(ByteBuffer(string: "four"))  // kept while away
        session.sendUnreliable(ByteBuffer(string: "lost"))  // not kept

        let second = RecordingTransport()
        let resumed = try self.registry.resume(
            sessionID: session.id, resumeToken: self.registry.resumeToken(of: session), lastReceived: 2, transport: second
        ).get()
        #expect(resumed === session)
        #expect(second.take() == [
            .control(.resumed(lastReceived: 1)),
            .reliable(sequence: 3, ack: 1, text: "three"), .reliable(sequence: 4, ack: 1, text: "four"),
        ])
    }

    @Test func theGracePeriodEndsASessionAtExactlyItsLength() {
        var events: [String] = []
        self.registry.onSessionAway = { events.append("away \($0.playerID)") }
        self.registry.onSessionEnded = { events.append("ended \($0.playerID)") }
        let transport = RecordingTransport()
        let session = self.registry.open(player: "p1", transport: transport)
        self.registry.detach(session, from: transport)
        self.clock.advance(by: .seconds(30) - .nanoseconds(1))
        #expect(events == ["away p1"])
        self.clock.advance(by: .nanoseconds(1))
        #expect(events == ["away p1", "ended p1"])
        #expect(self.registry.count == 0)
        let late = self.registry.resume(
            sessionID: session.id, resumeToken: self.registry.resumeToken(of: session), lastReceived: 0, transport: RecordingTransport())
        #expect(late.failure?.code == .sessionNotFound)
    }

    @Test func aResumeCancelsTheGraceTimerAndTellsTheOwner() throws {
        var events: [String] = []
        self.registry.onSessionBack = { events.append("back \($0.playerID)") }
        self.registry.onSessionEnded = { events.append("ended \($0.playerID)") }
        let transport = RecordingTransport()
        let session = self.registry.open(player: "p1", transport: transport)
        self.registry.detach(session, from: transport)
        self.clock.advance(by: .seconds(29))
        _ = try self.registry.resume(
            sessionID: session.id, resumeToken: self.registry.resumeToken(of: session), lastReceived: 0, transport: RecordingTransport()
        ).get()
        self.clock.advance(by: .seconds(60))
        #expect(events == ["back p1"])
        #expect(!session.isEnded)
    }

    @Test func theWrongResumeTokenIsRefusedAndLeavesTheSessionAlone() {
        let transport = RecordingTransport()
        let session = self.registry.open(player: "p1", transport: transport)
        let token = self.registry.resumeToken(of: session)
        let wrong = String(token.reversed())
        let refused = self.registry.resume(sessionID: session.id, resumeToken: wrong, lastReceived: 0, transport: RecordingTransport())
        #expect(refused.failure?.code == .resumeRefused)
        #expect(session.transport === transport)
        #expect(transport.take() == [])
    }

    @Test func aResumeFromANewConnectionReplacesTheOldOne() throws {
        let old = RecordingTransport()
        let session = self.registry.open(player: "p1", transport: old)
        let new = RecordingTransport()
        _ = try self.registry.resume(
            sessionID: session.id, resumeToken: self.registry.resumeToken(of: session), lastReceived: 0, transport: new
        ).get()
        #expect(old.take() == [.closed(.sessionReplaced)])
        // The old connection's close arrives later and must not detach the session.
        self.registry.detach(session, from: old)
        #expect(session.transport === new)
    }

    @Test func anAcknowledgementOfSomethingNeverSentIsASequenceError() {
        let session = self.registry.open(player: "p1", transport: RecordingTransport())
        session.sendReliable(ByteBuffer(string: "one"))
        let result = self.registry.resume(
            sessionID: session.id, resumeToken: self.registry.resumeToken(of: session), lastReceived: 2, transport: RecordingTransport())
        #expect(result.failure?.code == .sequenceError)
    }

    @Test func passingTheBacklogBoundEndsTheSessionOnTheNextTurn() {
        var ended: [String] = []
        self.registry.onSessionEnded = { ended.append($0.playerID) }
        let transport = RecordingTransport()
        let session = self.registry.open(player: "p1", transport: transport)
        for _ in 0..<4 { session.sendReliable(ByteBuffer(repeating: 0x41, count: 16)) }  // at the bound
        #expect(ended.isEmpty)
        session.sendReliable(ByteBuffer(string: "x"))
        #expect(transport.take().last == .closed(.backlogExceeded))
        #expect(ended.isEmpty)  // not from inside the send
        // The rest of the broadcast finds the session ending: nothing more is kept or resumed.
        for _ in 0..<4 { session.sendReliable(ByteBuffer(repeating: 0x42, count: 16)) }
        #expect(session.outbox.unacknowledgedCount == 0)
        let resume = self.registry.resume(
            sessionID: session.id, resumeToken: self.registry.resumeToken(of: session), lastReceived: 0, transport: RecordingTransport())
        #expect(resume.failure?.code == .sessionNotFound)
        self.clock.advance(by: .zero)
        #expect(ended == ["p1"])
    }

    @Test func authenticatingAgainReplacesThePlayersOlderSession() {
        var events: [String] = []
        self.registry.onSessionEnded = { events.append("ended \($0.id)") }
        self.registry.onSessionReplaced = { old, new in
            events.append("replaced \(old.id) by \(new.id)")
            #expect(old.isEnded && !new.isEnded)
            #expect(self.registry.session(of: "p1") === new, "the newer session is the player's when the owner hears of it")
        }
        let old = RecordingTransport()
        let first = self.registry.open(player: "p1", transport: old)
        let second = self.registry.open(player: "p1", transport: RecordingTransport())
        #expect(events == ["replaced \(first.id) by \(second.id)"])
        #expect(old.take() == [.closed(.sessionReplaced)])
        #expect(self.registry.session(of: "p1") === second)
        #expect(self.registry.count == 1)
        self.registry.end(second, error: nil)
        #expect(events.last == "ended \(second.id)")
        #expect(self.registry.session(of: "p1") == nil)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
