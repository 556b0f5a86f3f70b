import MatchHostWire
import NIOCore
import Testing

@Suite struct CatRaceMessageTests {
    private func bytes(_ message: some CatRaceMessage) -> [UInt8] {
        Array(message.encodedFrame().readableBytesView)
    }

    private func body(of frame: [UInt8]) -> ByteBuffer {
        ByteBuffer(bytes: frame.dropFirst(4))
    }

    @Test func notInMatchIsTheFiveBytesOfTheTutorialLog() {
        // Part 1's server log: "Read 5 bytes".
        #expect(self.bytes(NotInMatch()) == [0, 0, 0, 1, 1])
    }

    @Test func playerConnectedIsThe32BytesOfTheTutorialLog() throws {
        // Part 1's client log "Amt to write: 32/32": a Game Center id and a 4-letter alias,
        // each counted and sent with its NUL, then the continueMatch byte.
        let message = PlayerConnected(playerID: "G:1036727375", alias: "Riba", continueMatch: true)
        let frame = self.bytes(message)
        #expect(frame.count == 32)
        #expect(
            frame == [0, 0, 0, 28, 0, 0, 0, 0, 13] + Array("G:1036727375".utf8) + [0, 0, 0, 0, 5]
                + Array("Riba".utf8) + [0, 1])
        #expect(try CatRaceClientMessage(frameBody: self.body(of: frame)) == .playerConnected(message))
    }

    @Test func stringsAreReadWithOrWithoutTheirNUL() throws {
        let withNUL: [UInt8] = [0, 0, 0, 0, 4] + Array("G:1".utf8) + [0, 0, 0, 0, 2] + Array("A".utf8) + [0, 0]
        let withoutNUL: [UInt8] = [0, 0, 0, 0, 3] + Array("G:1".utf8) + [0, 0, 0, 1] + Array("A".utf8) + [1]
        #expect(
            try CatRaceClientMessage(frameBody: ByteBuffer(bytes: withNUL))
                == .playerConnected(PlayerConnected(playerID: "G:1", alias: "A", continueMatch: false)))
        #expect(
            try CatRaceClientMessage(frameBody: ByteBuffer(bytes: withoutNUL))
                == .playerConnected(PlayerConnected(playerID: "G:1", alias: "A", continueMatch: true)))
    }

    @Test func serverMessagesHaveTheSpecLayouts() throws {
        let started = MatchStarted(
            state: .active,
            racers: [.init(playerID: "G:1", alias: "Ann", posX: 25), .init(playerID: "G:2", alias: "Bo", posX: 35)])
        let expected: [UInt8] =
            [3, 0, 2]
            + [0, 0, 0, 4] + Array("G:1".utf8) + [0] + [0, 0, 0, 4] + Array("Ann".utf8) + [0] + [0, 0, 0, 25]
            + [0, 0, 0, 4] + Array("G:2".utf8) + [0] + [0, 0, 0, 3] + Array("Bo".utf8) + [0] + [0, 0, 0, 35]
        #expect(self.bytes(started) == [0, 0, 0, UInt8(expected.count)] + expected)
        #expect(self.bytes(PlayerMoved(playerIndex: 1, posX: 445)) == [0, 0, 0, 6, 5, 1, 0, 0, 0x01, 0xBD])
        #expect(self.bytes(GameOver(winnerIndex: 0)) == [0, 0, 0, 2, 6, 0])
        #expect(self.bytes(NotifyReady(playerID: "G:2")) == [0, 0, 0, 9, 8, 0, 0, 0, 4] + Array("G:2".utf8) + [0])
        for message: CatRaceServerMessage in [
            .notInMatch, .matchStarted(started), .playerMoved(PlayerMoved(playerIndex: 3, posX: 99)),
            .gameOver(GameOver(winnerIndex: 2)), .notifyReady(NotifyReady(playerID: "x")),
        ] {
            var frame = ByteBuffer()
            message.encodeFrame(into: &frame)
            #expect(try CatRaceServerMessage(frameBody: frame.getSlice(at: 4, length: frame.readableBytes - 4)!) == message)
        }
    }

    @Test func clientMessagesHaveTheSpecLayouts() throws {
        let start = StartMatch(playerIDs: ["G:1", "G:2"])
        #expect(
            self.bytes(start)
                == [0, 0, 0, 18, 2, 2] + [0, 0, 0, 4] + Array("G:1".utf8) + [0] + [0, 0, 0, 4] + Array("G:2".utf8) + [0])
        #expect(self.bytes(MovedSelf(posX: 35)) == [0, 0, 0, 5, 4, 0, 0, 0, 35])
        #expect(self.bytes(RestartMatch()) == [0, 0, 0, 1, 7])
        for message: CatRaceClientMessage in [
            .playerConnected(PlayerConnected(playerID: "a", alias: "b", continueMatch: true)), .startMatch(start),
            .movedSelf(MovedSelf(posX: 35)), .restartMatch, .notifyReady(NotifyReady(playerID: "G:9")),
        ] {
            var frame = ByteBuffer()
            message.encodeFrame(into: &frame)
            #expect(try CatRaceClientMessage(frameBody: frame.getSlice(at: 4, length: frame.readableBytes - 4)!) == message)
        }
    }

    @Test func stringsOfExactly255BytesAreAccepted() throws {
        let id = String(repeating: "x", count: 255)
        let frame = self.bytes(NotifyReady(playerID: id))
        #expect(try CatRaceClientMessage(frameBody: self.body(of: frame)) == .notifyReady(NotifyReady(playerID: id)))
    }

    @Test func bytesAfterTheLastFieldAreIgnored() throws {
        #expect(try CatRaceClientMessage(frameBody: ByteBuffer(bytes: [4, 0, 0, 0, 35, 9, 9])) == .movedSelf(MovedSelf(posX: 35)))
    }

    @Test func badBodiesGiveTypedErrors() {
        #expect(throws: WireError.emptyFrame) { try CatRaceClientMessage(frameBody: ByteBuffer()) }
        #expect(throws: WireError.unknownMessageType(42)) { try CatRaceClientMessage(frameBody: ByteBuffer(bytes: [42])) }
        for serverType: UInt8 in [1, 3, 5, 6] {
            #expect(throws: WireError.wrongDirection(messageType: serverType)) {
                try CatRaceClientMessage(frameBody: ByteBuffer(bytes: [serverType]))
            }
        }
        #expect(throws: WireError.truncated(field: "posX", needed: 4, available: 2)) {
            try CatRaceClientMessage(frameBody: ByteBuffer(bytes: [4, 0, 0]))
        }
        // A string announcing 10 bytes with only 3 present.
        #expect(throws: WireError.truncated(field: "playerId", needed: 10, available: 3)) {
            try CatRaceClientMessage(frameBody: ByteBuffer(bytes: [0, 0, 0, 0, 10, 65, 66, 67]))
        }
        // A string length far beyond the limit is refused without reading further.
        #expect(throws: WireError.stringTooLong(field: "playerId", length: 0x7FFF_FFFF, maximum: 255)) {
            try CatRaceClientMessage(frameBody: ByteBuffer(bytes: [0, 0x7F, 0xFF, 0xFF, 0xFF]))
        }
        // 256 bytes plus a NUL: one over the limit (the counted length, NUL included, is reported).
        #expect(throws: WireError.stringTooLong(field: "playerId", length: 257, maximum: 255)) {
            try CatRaceClientMessage(frameBody: ByteBuffer(bytes: [0, 0, 0, 1, 1] + Array(repeating: 65, count: 256) + [0]))
        }
        // 256 bytes and no NUL: also one over.
        #expect(throws: WireError.stringTooLong(field: "playerId", length: 256, maximum: 255)) {
            try CatRaceClientMessage(frameBody: ByteBuffer(bytes: [0, 0, 0, 1, 0] + Array(repeating: 65, count: 256)))
        }
        #expect(throws: WireError.invalidUTF8(field: "playerId")) {
            try CatRaceClientMessage(frameBody: ByteBuffer(bytes: [0, 0, 0, 0, 2, 0xC3, 0x28]))
        }
        // A control character (a newline forging a log line, ESC starting a terminal escape),
        // also a NUL that is not the one trailing.
        for control: [UInt8] in [[0x0A], [0x1B], [0x00, 0x41], [0xC2, 0x9B]] {
            #expect(throws: WireError.controlCharacter(field: "playerId")) {
                try CatRaceClientMessage(frameBody: ByteBuffer(bytes: [0, 0, 0, 0, UInt8(1 + control.count), 0x41] + control))
            }
        }
        #expect(throws: WireError.truncated(field: "continueMatch", needed: 1, available: 0)) {
            try CatRaceClientMessage(frameBody: ByteBuffer(bytes: [0, 0, 0, 0, 1, 65, 0, 0, 0, 1, 66]))
        }
    }
}
