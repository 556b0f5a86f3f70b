import MatchHostWire
import NIOCore
import Testing

@Suite struct ReliableOutboxTests {
    private func message(_ size: Int, _ fill: UInt8 = 0x20) -> ByteBuffer {
        ByteBuffer(bytes: Array(repeating: fill, count: size))
    }

    private func unacknowledged(_ outbox: ReliableOutbox) -> [(UInt64, [UInt8])] {
        var out: [(UInt64, [UInt8])] = []
        outbox.forEachUnacknowledged { out.append(($0, Array($1.readableBytesView))) }
        return out
    }

    @Test func numbersMessagesFromOne() throws {
        var outbox = ReliableOutbox(maximumBytes: 1024)
        #expect(outbox.lastSent == 0)
        #expect(outbox.nextSequence == 1)
        #expect(outbox.firstUnacknowledged == 1)
        #expect(outbox.unacknowledgedCount == 0)
        #expect(try outbox.append(self.message(3)) == 1)
        #expect(try outbox.append(self.message(4)) == 2)
        #expect(try outbox.append(self.message(5)) == 3)
        #expect(outbox.lastSent == 3)
        #expect(outbox.nextSequence == 4)
        #expect(outbox.firstUnacknowledged == 1)
        #expect(outbox.unacknowledgedCount == 3)
    }

    @Test func anAcknowledgementDropsEverythingThroughItsNumber() throws {
        var outbox = ReliableOutbox(maximumBytes: 1024)
        for size in 1...5 { _ = try outbox.append(self.message(size)) }
        try outbox.acknowledge(through: 2)
        #expect(outbox.unacknowledgedCount == 3)
        #expect(outbox.firstUnacknowledged == 3)
        #expect(outbox.unacknowledgedBytes == 3 + 4 + 5)
        try outbox.acknowledge(through: 5)
        #expect(outbox.unacknowledgedCount == 0)
        #expect(outbox.firstUnacknowledged == 6)
        #expect(outbox.unacknowledgedBytes == 0)
        // Numbering goes on after everything is acknowledged.
        #expect(try outbox.append(self.message(1)) == 6)
    }

    @Test func oldAcknowledgementsAreIgnored() throws {
        var outbox = ReliableOutbox(maximumBytes: 1024)
        for size in 1...4 { _ = try outbox.append(self.message(size)) }
        try outbox.acknowledge(through: 3)
        for old: UInt64 in [0, 1, 2, 3] {
            try outbox.acknowledge(through: old)
            #expect(outbox.unacknowledgedCount == 1)
            #expect(outbox.firstUnacknowledged == 4)
            #expect(outbox.unacknowledgedBytes == 4)
            #expect(outbox.lastAcknowledged == 3)
        }
        // What was acknowledged outlives the messages (a session that ended).
        outbox.removeAll()
        #expect(outbox.lastAcknowledged == 3 && outbox.unacknowledgedCount == 0)
        // Acknowledging 0 before anything is sent is fine too: nothing has arrived.
        var empty = ReliableOutbox(maximumBytes: 16)
        try empty.acknowledge(through: 0)
        #expect(empty.unacknowledgedCount == 0)
    }

    @Test func anAcknowledgementPastTheLastSentThrowsAndChangesNothing() throws {
        var outbox = ReliableOutbox(maximumBytes: 1024)
        for size in 1...3 { _ = try outbox.append(self.message(size)) }
        #expect(throws: ReliableStreamError.acknowledgedUnsent(ack: 4, lastSent: 3)) { try outbox.acknowledge(through: 4) }
        #expect(throws: ReliableStreamError.acknowledgedUnsent(ack: .max, lastSent: 3)) { try outbox.acknowledge(through: .max) }
        #expect(outbox.unacknowledgedCount == 3)
        #expect(outbox.unacknowledgedBytes == 6)
        var empty = ReliableOutbox(maximumBytes: 16)
        #expect(throws: ReliableStreamError.acknowledgedUnsent(ack: 1, lastSent: 0)) { try empty.acknowledge(through: 1) }
    }

    @Test func eachKeptMessageCountsItsChargeAgainstTheBound() throws {
        var outbox = ReliableOutbox(maximumBytes: 1_000, chargePerMessage: 64)
        for number in 1...10 { #expect(try outbox.append(self.message(30)) == UInt64(number)) }
        // 11 × 30 bytes + 11 × 64: past the bound, though the bytes alone are a third of it.
        #expect(throws: ReliableStreamError.backlogExceeded(bytes: 1_034, limit: 1_000)) { try outbox.append(self.message(30)) }
        #expect(outbox.unacknowledgedBytes == 300)
        // Acknowledged messages give their charges back.
        try outbox.acknowledge(through: 5)
        for _ in 1...5 { _ = try outbox.append(self.message(30)) }
        #expect(outbox.unacknowledgedCount == 10)
        // Empty messages are no longer free: at most 15 of them fit.
        var empty = ReliableOutbox(maximumBytes: 1_000, chargePerMessage: 64)
        for _ in 1...15 { _ = try empty.append(self.message(0)) }
        #expect(throws: ReliableStreamError.backlogExceeded(bytes: 1_024, limit: 1_000)) { try empty.append(self.message(0)) }
    }

    @Test func theBacklogBoundThrowsAndKeepsNothing() throws {
        var outbox = ReliableOutbox(maximumBytes: 10)
        #expect(try outbox.append(self.message(6)) == 1)
        #expect(throws: ReliableStreamError.backlogExceeded(bytes: 11, limit: 10)) { try outbox.append(self.message(5)) }
        #expect(outbox.unacknowledgedCount == 1)
        #expect(outbox.unacknowledgedBytes == 6)
        #expect(outbox.nextSequence == 2)
        #expect(self.unacknowledged(outbox).map(\.0) == [1])
        // Exactly at the bound is allowed, and the refused number was not used up.
        #expect(try outbox.append(self.message(4)) == 2)
        #expect(outbox.unacknowledgedBytes == 10)
        #expect(throws: ReliableStreamError.backlogExceeded(bytes: 11, limit: 10)) { try outbox.append(self.message(1)) }
        // An empty message still fits; an acknowledgement makes room.
        #expect(try outbox.append(self.message(0)) == 3)
        try outbox.acknowledge(through: 1)
        #expect(try outbox.append(self.message(6)) == 4)
        #expect(outbox.unacknowledgedBytes == 10)
        // A single message over the bound never fits.
        var small = ReliableOutbox(maximumBytes: 3)
        #expect(throws: ReliableStreamError.backlogExceeded(bytes: 4, limit: 3)) { try small.append(self.message(4)) }
        #expect(small.unacknowledgedCount == 0)
        #expect(small.unacknowledgedBytes == 0)
        #expect(small.nextSequence == 1)
    }

    @Test func forEachUnacknowledgedGivesOldestFirstWithTheirNumbers() throws {
        var outbox = ReliableOutbox(maximumBytes: 1024)
        for fill: UInt8 in 1...5 { _ = try outbox.append(self.message(2, fill)) }
        try outbox.acknowledge(through: 2)
        let left = self.unacknowledged(outbox)
        #expect(left.map(\.0) == [3, 4, 5])
        #expect(left.map(\.1) == [[3, 3], [4, 4], [5, 5]])
        _ = try outbox.append(self.message(1, 6))
        try outbox.acknowledge(through: 4)
        #expect(self.unacknowledged(outbox).map(\.0) == [5, 6])
        #expect(self.unacknowledged(outbox).map(\.1) == [[5, 5], [6]])
        try outbox.acknowledge(through: 6)
        #expect(self.unacknowledged(outbox).isEmpty)
    }

    @Test func bytesAreCountedAsReadableBytes() throws {
        var outbox = ReliableOutbox(maximumBytes: 100)
        // A slice counts only its readable bytes, not its storage.
        var big = self.message(40)
        let slice = big.readSlice(length: 7)!
        big.moveReaderIndex(forwardBy: 30)
        _ = try outbox.append(slice)
        _ = try outbox.append(big)
        #expect(outbox.unacknowledgedBytes == 7 + 3)
        _ = try outbox.append(self.message(20))
        #expect(outbox.unacknowledgedBytes == 30)
        try outbox.acknowledge(through: 1)
        #expect(outbox.unacknowledgedBytes == 23)
        try outbox.acknowledge(through: 3)
        #expect(outbox.unacknowledgedBytes == 0)
        _ = try outbox.append(self.message(9))
        outbox.removeAll()
        #expect(outbox.unacknowledgedBytes == 0)
        #expect(outbox.unacknowledgedCount == 0)
        // Forgetting the messages does not reuse their numbers.
        #expect(outbox.lastSent == 4)
        #expect(outbox.firstUnacknowledged == 5)
        #expect(self.unacknowledged(outbox).isEmpty)
    }
}

@Suite struct ReliableInboxTests {
    @Test func acceptsInOrder() throws {
        var inbox = ReliableInbox()
        #expect(inbox.lastReceived == 0)
        for sequence: UInt64 in 1...3 { #expect(try inbox.accept(sequence)) }
        #expect(inbox.lastReceived == 3)
        #expect(inbox.unacknowledgedCount == 3)
    }

    @Test func duplicatesAreNotNew() throws {
        var inbox = ReliableInbox()
        for sequence: UInt64 in 1...3 { _ = try inbox.accept(sequence) }
        for duplicate: UInt64 in [0, 1, 2, 3] { #expect(try inbox.accept(duplicate) == false) }
        #expect(inbox.lastReceived == 3)
        #expect(try inbox.accept(4))
    }

    @Test func aGapThrowsAndChangesNothing() throws {
        var inbox = ReliableInbox()
        #expect(throws: ReliableStreamError.sequenceGap(expected: 1, received: 2)) { try inbox.accept(2) }
        for sequence: UInt64 in 1...3 { _ = try inbox.accept(sequence) }
        #expect(throws: ReliableStreamError.sequenceGap(expected: 4, received: 5)) { try inbox.accept(5) }
        #expect(throws: ReliableStreamError.sequenceGap(expected: 4, received: .max)) { try inbox.accept(.max) }
        #expect(inbox.lastReceived == 3)
        #expect(try inbox.accept(4))
    }

    @Test func takeAcknowledgementOnlyWhenSomethingNewArrived() throws {
        var inbox = ReliableInbox()
        #expect(inbox.takeAcknowledgement() == nil)
        _ = try inbox.accept(1)
        _ = try inbox.accept(2)
        #expect(inbox.takeAcknowledgement() == 2)
        #expect(inbox.lastAcknowledged == 2)
        #expect(inbox.unacknowledgedCount == 0)
        #expect(inbox.takeAcknowledgement() == nil)
        // A duplicate is nothing new.
        #expect(try inbox.accept(2) == false)
        #expect(inbox.takeAcknowledgement() == nil)
        _ = try inbox.accept(3)
        #expect(inbox.unacknowledgedCount == 1)
        #expect(inbox.takeAcknowledgement() == 3)
    }

    @Test func aPiggybackedAcknowledgementCounts() throws {
        var inbox = ReliableInbox()
        _ = try inbox.accept(1)
        _ = try inbox.accept(2)
        inbox.acknowledgedByPiggyback()
        #expect(inbox.lastAcknowledged == 2)
        #expect(inbox.unacknowledgedCount == 0)
        #expect(inbox.takeAcknowledgement() == nil)
        _ = try inbox.accept(3)
        #expect(inbox.takeAcknowledgement() == 3)
        // With nothing new, a piggyback changes nothing.
        inbox.acknowledgedByPiggyback()
        #expect(inbox.lastAcknowledged == 3)
        #expect(inbox.takeAcknowledgement() == nil)
    }

    @Test func aResumedStreamLosesNothingAndRepeatsNothing() throws {
        // The sender sends 1...5 in RELIABLE frames; the connection drops after 3 arrive and
        // 2 is acknowledged. After the resume the sender resends everything after 2; the
        // receiver drops 3 and takes 4 and 5.
        var outbox = ReliableOutbox(maximumBytes: 1024)
        var inbox = ReliableInbox()
        var wire = ByteBuffer()
        for index: UInt8 in 1...5 {
            let message = ByteBuffer(bytes: [0x43, index])
            let sequence = try outbox.append(message)
            if index <= 3 { wire.writeReliableFrame(sequence: sequence, ack: 0, message: message) }
        }
        var delivered: [UInt8] = []
        func receive(_ wire: inout ByteBuffer) throws {
            var accumulator = FrameAccumulator()
            accumulator.append(&wire)
            while let body = try accumulator.nextFrame() {
                guard case .reliable(let sequence, _, let message) = try NativeFrame(frameBody: body) else {
                    Issue.record("not a RELIABLE frame")
                    continue
                }
                if try inbox.accept(sequence) { delivered.append(message.getInteger(at: message.readerIndex + 1)!) }
            }
        }
        try receive(&wire)
        _ = inbox.takeAcknowledgement()
        try outbox.acknowledge(through: 2)  // the ACK of 3 was lost with the connection
        var resent = ByteBuffer()
        outbox.forEachUnacknowledged { resent.writeReliableFrame(sequence: $0, ack: 0, message: $1) }
        try receive(&resent)
        #expect(delivered == [1, 2, 3, 4, 5])
        let acknowledgement = inbox.takeAcknowledgement()
        try outbox.acknowledge(through: try #require(acknowledgement))
        #expect(outbox.unacknowledgedCount == 0)
        #expect(outbox.unacknowledgedBytes == 0)
    }
}
