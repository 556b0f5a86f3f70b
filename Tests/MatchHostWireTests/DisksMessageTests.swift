import Foundation
import MatchHostWire
import NIOCore
import Testing

/// The examples of docs/protocol-disks.md's "Byte examples", copied verbatim and in the
/// document's order; `documentHoldsExactlyTheseExamples` fails if the two drift apart.
enum DisksByteExamples {
    static let tap = #"""
        01                                                TAP
        01 f4                                             x 500
        00 fa                                             y 250
        """#
    static let state = #"""
        01                                                STATE
        01                                                phase 1: playing
        00 00 00 1e                                       tick 30
        00 00 00 00 77 35 94 00                           serverTime 2000000000 ns
        00 00 e6 78                                       timeLeftMs 59000
        00 14                                             scoreLimit 20
        03 e8                                             boardWidth 1000
        03 e8                                             boardHeight 1000
        01                                                disks count 1
        00 00 00 07  01 9c  02 da  00 3c  03              disk 7: x 412, y 730, radius 60, color 3
        02                                                scores count 2
        00                                                seat 0
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        00 02                                             score 2
        01                                                seat 1
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        00 01                                             score 1
        """#
    static let emptyTick = #"""
        02                                                TICK
        00 00 00 1f                                       tick 31
        00 00 00 00 79 32 34 55                           serverTime 2033333333 ns
        00 00 e6 57                                       timeLeftMs 58967
        00                                                lists: none
        """#
    static let busyTick = #"""
        02                                                TICK
        00 00 00 30                                       tick 48
        00 00 00 00 9a f8 da 00                           serverTime 2600000000 ns
        00 00 e4 20                                       timeLeftMs 58400
        07                                                lists: spawned, hits, expired
        01                                                spawned count 1
        00 00 00 08  03 6d  00 85  00 3c  00              disk 8: x 877, y 133, radius 60, color 0
        01                                                hits count 1
        00 00 00 07  01  00 02                            disk 7, seat 1, score 2
        01                                                expired count 1
        00 00 00 05                                       disk 5
        """#
    static let gameOver = #"""
        03                                                GAME_OVER
        02                                                reason 2: time limit
        02                                                winners count 2
        00 01                                             seats 0 and 1
        02                                                scores count 2
        00                                                seat 0
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        00 0c                                             score 12
        01                                                seat 1
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        00 0c                                             score 12
        """#
    static let tapMissed = #"""
        04                                                TAP_MISSED
        01 f4                                             x 500
        00 fa                                             y 250
        02                                                reason 2: already hit
        """#
    static let matchInputFrame = #"""
        00 00 00 23  0b                                   length 35, kind RELIABLE
        00 00 00 00 00 00 00 07                           sequence 7
        00 00 00 00 00 00 00 05                           ack 5
        22                                                MATCH_INPUT
        00 00 00 00 00 00 10 92                           matchId 4242
        00 00 00 05                                       input, 5 bytes:
        01  01 f4  00 fa                                  TAP x 500, y 250
        """#
    static let matchEventFrame = #"""
        00 00 00 20  0c                                   length 32, kind UNRELIABLE
        45                                                MATCH_EVENT
        00 00 00 00 00 00 10 92                           matchId 4242
        00 00 00 12                                       event, 18 bytes:
        02                                                TICK
        00 00 00 1f                                       tick 31
        00 00 00 00 79 32 34 55                           serverTime 2033333333 ns
        00 00 e6 57                                       timeLeftMs 58967
        00                                                lists: none
        """#
}

@Suite struct DisksMessageTests {
    static let ann = "f998cf4c0bc77f1ce5982c7ec9d2e555"
    static let bob = "b67b73f107a86cddb52f0520e9a09eba"

    static let tap = DisksClientMessage.tap(DisksTap(x: 500, y: 250))
    static let state = DisksServerMessage.state(
        DisksState(
            phase: .playing, tick: 30, serverTime: 2_000_000_000, timeLeftMilliseconds: 59_000, scoreLimit: 20,
            disks: [DisksDisk(id: 7, x: 412, y: 730, radius: 60, color: 3)],
            scores: [DisksScore(seat: 0, playerID: ann, score: 2), DisksScore(seat: 1, playerID: bob, score: 1)]))
    static let emptyTick = DisksServerMessage.tick(
        DisksTick(tick: 31, serverTime: 2_033_333_333, timeLeftMilliseconds: 58_967))
    static let busyTick = DisksServerMessage.tick(
        DisksTick(
            tick: 48, serverTime: 2_600_000_000, timeLeftMilliseconds: 58_400,
            spawned: [DisksDisk(id: 8, x: 877, y: 133, radius: 60, color: 0)],
            hits: [DisksHit(diskID: 7, seat: 1, score: 2)], expired: [5]))
    static let gameOver = DisksServerMessage.gameOver(
        DisksGameOver(
            reason: .timeLimit, winners: [0, 1],
            scores: [DisksScore(seat: 0, playerID: ann, score: 12), DisksScore(seat: 1, playerID: bob, score: 12)]))
    static let tapMissed = DisksServerMessage.tapMissed(DisksTapMissed(x: 500, y: 250, reason: .alreadyHit))

    /// Every example in document order, as the bytes it shows and the bytes its value encodes to.
    static let examples: [(name: String, text: String, encoded: ByteBuffer)] = [
        ("tap", DisksByteExamples.tap, tap.encoded()),
        ("state", DisksByteExamples.state, state.encoded()),
        ("emptyTick", DisksByteExamples.emptyTick, emptyTick.encoded()),
        ("busyTick", DisksByteExamples.busyTick, busyTick.encoded()),
        ("gameOver", DisksByteExamples.gameOver, gameOver.encoded()),
        ("tapMissed", DisksByteExamples.tapMissed, tapMissed.encoded()),
        (
            "matchInputFrame", DisksByteExamples.matchInputFrame,
            NativeFrame.reliable(
                sequence: 7, ack: 5,
                message: NativeClientMessage.matchInput(matchID: 4242, input: tap.encoded()).encoded()
            ).encodedFrame()
        ),
        (
            "matchEventFrame", DisksByteExamples.matchEventFrame,
            NativeFrame.unreliable(
                message: NativeServerMessage.matchEvent(matchID: 4242, event: emptyTick.encoded()).encoded()
            ).encodedFrame()
        ),
    ]

    @Test func everyExampleEncodesToTheDocumentedBytes() {
        for example in Self.examples {
            #expect(Array(example.encoded.readableBytesView) == hexBytes(example.text), "\(example.name)")
        }
    }

    @Test func theDocumentedBytesDecodeToTheExamples() throws {
        #expect(try DisksClientMessage(body: ByteBuffer(bytes: hexBytes(DisksByteExamples.tap))) == Self.tap)
        let server: [(String, DisksServerMessage)] = [
            (DisksByteExamples.state, Self.state), (DisksByteExamples.emptyTick, Self.emptyTick),
            (DisksByteExamples.busyTick, Self.busyTick), (DisksByteExamples.gameOver, Self.gameOver),
            (DisksByteExamples.tapMissed, Self.tapMissed),
        ]
        for (text, message) in server {
            #expect(try DisksServerMessage(body: ByteBuffer(bytes: hexBytes(text))) == message)
        }
        // The whole frames: the native layers unwrap to the Disks bodies above.
        var input = ByteBuffer(bytes: hexBytes(DisksByteExamples.matchInputFrame))
        input.moveReaderIndex(forwardBy: 4)
        guard case .reliable(7, 5, let inner) = try NativeFrame(frameBody: input),
            case .matchInput(4242, let tapBody) = try NativeClientMessage(message: inner)
        else {
            Issue.record("the MATCH_INPUT example is not a RELIABLE MATCH_INPUT")
            return
        }
        #expect(try DisksClientMessage(body: tapBody) == Self.tap)
        var event = ByteBuffer(bytes: hexBytes(DisksByteExamples.matchEventFrame))
        event.moveReaderIndex(forwardBy: 4)
        guard case .unreliable(let message) = try NativeFrame(frameBody: event),
            case .matchEvent(4242, let tickBody) = try NativeServerMessage(message: message)
        else {
            Issue.record("the MATCH_EVENT example is not an UNRELIABLE MATCH_EVENT")
            return
        }
        #expect(try DisksServerMessage(body: tickBody) == Self.emptyTick)
    }

    @Test func anEmptyTickIs18Bytes() {
        #expect(Self.emptyTick.encoded().readableBytes == 18)
        guard case .tick(let tick) = Self.busyTick else { return }
        #expect(tick.encodedFieldsSize + 1 == Self.busyTick.encoded().readableBytes)
    }

    @Test func everyMessageRoundTrips() throws {
        let clients: [DisksClientMessage] = [.tap(DisksTap(x: 0, y: 0)), .tap(DisksTap(x: .max, y: 1000)), Self.tap]
        for message in clients {
            #expect(try DisksClientMessage(body: message.encoded()) == message)
        }
        let disks = (1...255).map {
            DisksDisk(id: UInt32($0) * 1000, x: UInt16($0), y: 1000 - UInt16($0), radius: 60, color: UInt8($0 % 6))
        }
        let servers: [DisksServerMessage] = [
            Self.state, Self.emptyTick, Self.busyTick, Self.gameOver, Self.tapMissed,
            .state(
                DisksState(
                    phase: .waiting, tick: 0, serverTime: .max, timeLeftMilliseconds: 60_000, scoreLimit: 1,
                    boardWidth: 640,
                    boardHeight: 480, disks: [], scores: [])),
            .state(
                DisksState(
                    phase: .over, tick: .max, serverTime: 1, timeLeftMilliseconds: 0, scoreLimit: .max, disks: disks,
                    scores: (0..<16).map { DisksScore(seat: UInt8($0), playerID: "player-\($0)-é", score: UInt16($0)) })
            ),
            .tick(DisksTick(tick: 1, serverTime: 2, timeLeftMilliseconds: 3, spawned: disks)),
            .tick(
                DisksTick(
                    tick: 1, serverTime: 2, timeLeftMilliseconds: 3, hits: [DisksHit(diskID: 9, seat: 255, score: .max)]
                )),
            .tick(DisksTick(tick: 1, serverTime: 2, timeLeftMilliseconds: 3, expired: [1, 2, .max])),
            .tick(DisksTick(tick: 1, serverTime: 2, timeLeftMilliseconds: 3, spawned: [disks[0]], expired: [4])),
            .gameOver(
                DisksGameOver(reason: .scoreLimit, winners: [3], scores: [DisksScore(seat: 3, playerID: "", score: 20)])
            ),
            .gameOver(DisksGameOver(reason: .opponentsLeft, winners: [], scores: [])),
            .tapMissed(DisksTapMissed(x: 1, y: 2, reason: .noDisk)),
            .tapMissed(DisksTapMissed(x: 1, y: 2, reason: .notPlaying)),
        ]
        for message in servers {
            let encoded = message.encoded()
            #expect(try DisksServerMessage(body: encoded) == message)
            if case .tick(let tick) = message { #expect(encoded.readableBytes == tick.encodedFieldsSize + 1) }
        }
    }

    @Test func trailingBytesAreIgnored() throws {
        var body = Self.tapMissed.encoded()
        body.writeBytes([9, 9, 9])
        #expect(try DisksServerMessage(body: body) == Self.tapMissed)
        var tap = Self.tap.encoded()
        tap.writeInteger(UInt8(1))
        #expect(try DisksClientMessage(body: tap) == Self.tap)
    }

    @Test func everyTruncationOfEveryMessageIsATypedError() {
        let bodies = [Self.state, Self.emptyTick, Self.busyTick, Self.gameOver, Self.tapMissed].map { $0.encoded() }
        for body in bodies {
            for length in 0..<body.readableBytes {
                let cut = body.getSlice(at: body.readerIndex, length: length)!
                #expect(throws: WireError.self) { try DisksServerMessage(body: cut) }
            }
        }
        let tap = Self.tap.encoded()
        for length in 0..<tap.readableBytes {
            #expect(throws: WireError.self) { try DisksClientMessage(body: tap.getSlice(at: 0, length: length)!) }
        }
        #expect(throws: WireError.emptyFrame) { try DisksClientMessage(body: ByteBuffer()) }
        #expect(throws: WireError.truncated(field: "tap y", needed: 2, available: 1)) {
            try DisksClientMessage(body: ByteBuffer(bytes: [1, 0, 5, 0]))
        }
    }

    @Test func garbageIsATypedError() {
        #expect(throws: WireError.unknownMessageType(0)) {
            try DisksClientMessage(body: ByteBuffer(bytes: [0, 1, 2, 3, 4]))
        }
        #expect(throws: WireError.unknownMessageType(2)) {
            try DisksClientMessage(body: ByteBuffer(bytes: [2, 1, 2, 3, 4]))
        }
        #expect(throws: WireError.unknownMessageType(5)) { try DisksServerMessage(body: ByteBuffer(bytes: [5, 0])) }
        #expect(throws: NativeWireError.invalidValue(field: "state phase", value: 3)) {
            try DisksServerMessage(body: ByteBuffer(bytes: [1, 3] + [UInt8](repeating: 0, count: 30)))
        }
        #expect(throws: NativeWireError.invalidValue(field: "gameOver reason", value: 0)) {
            try DisksServerMessage(body: ByteBuffer(bytes: [3, 0, 0, 0]))
        }
        #expect(throws: NativeWireError.invalidValue(field: "tapMissed reason", value: 4)) {
            try DisksServerMessage(body: ByteBuffer(bytes: [4, 0, 1, 0, 1, 4]))
        }
        // A list count larger than what follows.
        #expect(throws: WireError.truncated(field: "disk id", needed: 4, available: 0)) {
            try DisksServerMessage(
                body: ByteBuffer(bytes: [2, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 12) + [1, 200]))
        }
        // A player id that is not UTF-8.
        var score = ByteBuffer(bytes: [3, 1, 0, 1])
        score.writeBytes([0, 0, 2, 0xC3, 0x28, 0, 1])
        #expect(throws: WireError.invalidUTF8(field: "score playerId")) { try DisksServerMessage(body: score) }
        // Random bytes never crash the decoders.
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? DisksServerMessage(body: ByteBuffer(bytes: bytes))
            _ = try? DisksClientMessage(body: ByteBuffer(bytes: bytes))
        }
    }

    @Test func documentHoldsExactlyTheseExamples() throws {
        let blocks = try documentedExamples(in: "docs/protocol-disks.md", under: "## Byte examples")
        #expect(blocks.count == Self.examples.count)
        for (block, example) in zip(blocks, Self.examples) {
            #expect(block == example.text, "\(example.name): docs/protocol-disks.md and DisksByteExamples differ")
        }
    }
}
