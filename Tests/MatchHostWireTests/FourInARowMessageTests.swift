import Foundation
import MatchHostWire
import NIOCore
import Testing

/// The examples of docs/protocol-fourinarow.md, copied verbatim (annotations included) and in
/// the document's order. `documentHoldsExactlyTheseExamples` fails if they drift apart.
enum FourInARowByteExamples {
    static let move = #"""
        01                                                MOVE
        00 03                                             moveNumber 3
        04                                                column 4
        """#
    static let state = #"""
        01                                                STATE
        01                                                phase 1: playing
        02                                                count 2
        00                                                seat 0
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        01                                                seat 1
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        00 00 00 01 00 00 00                              row 0: seat 0's disc in column 3
        00 00 00 02 00 00 00                              row 1: seat 1's disc in column 3
        00 00 00 00 00 00 00                              row 2: empty
        00 00 00 00 00 00 00                              row 3: empty
        00 00 00 00 00 00 00                              row 4: empty
        00 00 00 00 00 00 00                              row 5: empty
        00 03                                             moveNumber 3
        00                                                seatToMove 0
        00 00 6b 6c                                       turnTimeLeftMs 27500
        """#
    static let moved = #"""
        02                                                MOVED
        00                                                seat 0
        04                                                column 4
        00                                                row 0
        00 03                                             moveNumber 3
        01                                                nextSeat 1
        00 00 75 30                                       turnTimeMs 30000
        """#
    static let refused = #"""
        03                                                MOVE_REFUSED
        00 04                                             moveNumber 4
        01                                                reason 1: not your turn
        00 13                                             text, 19 bytes:
        69 74 20 69 73 20 73 65 61 74 20 31 27 73 20 74     "it is seat 1's t
        75 72 6e                                             urn"
        """#
    static let gameOver = #"""
        04                                                GAME_OVER
        00                                                winnerSeat 0
        01                                                reason 1: four in a row
        04                                                count 4
        01 02 03 04                                       cells 1 2 3 4: row 0, columns 1 to 4
        """#
    static let draw = #"""
        04                                                GAME_OVER
        ff                                                winnerSeat 255: none
        02                                                reason 2: draw
        00                                                count 0
        """#
    static let matchInput = #"""
        00 00 00 22  0b                                   length 34, kind RELIABLE
        00 00 00 00 00 00 00 07                           sequence 7
        00 00 00 00 00 00 00 05                           ack 5
        22                                                MATCH_INPUT
        00 00 00 00 00 00 10 92                           matchId 4242
        00 00 00 04  01 00 03 04                          input, 4 bytes: MOVE, moveNumber 3, column 4
        """#
    static let matchEvent = #"""
        00 00 00 29  0b                                   length 41, kind RELIABLE
        00 00 00 00 00 00 00 0c                           sequence 12
        00 00 00 00 00 00 00 07                           ack 7
        45                                                MATCH_EVENT
        00 00 00 00 00 00 10 92                           matchId 4242
        00 00 00 0b  02 00 04 00 00 03 01 00 00 75 30     event, 11 bytes: MOVED
        """#
}

@Suite struct FourInARowMessageTests {
    static let alice = "f998cf4c0bc77f1ce5982c7ec9d2e555"
    static let bob = "b67b73f107a86cddb52f0520e9a09eba"

    typealias E = FourInARowByteExamples

    static let stateExample: FourInARowSnapshot = {
        var board = [UInt8](repeating: 0, count: 42)
        board[3] = 1
        board[10] = 2
        return FourInARowSnapshot(
            phase: .playing, players: [.init(seat: 0, playerID: alice), .init(seat: 1, playerID: bob)], board: board,
            moveNumber: 3, seatToMove: 0, turnTimeLeftMilliseconds: 27_500, result: nil)
    }()
    static let movedExample = FourInARowMoved(seat: 0, column: 4, row: 0, moveNumber: 3, nextSeat: 1, turnTimeMilliseconds: 30_000)

    /// The server examples, each with its text, in the document's order.
    static let serverExamples: [(String, FourInARowServerMessage)] = [
        (E.state, .state(stateExample)),
        (E.moved, .moved(movedExample)),
        (E.refused, .moveRefused(FourInARowMoveRefused(moveNumber: 4, reason: .notYourTurn, text: "it is seat 1's turn"))),
        (E.gameOver, .gameOver(FourInARowGameOver(winnerSeat: 0, reason: .fourInARow, winningCells: [1, 2, 3, 4]))),
        (E.draw, .gameOver(FourInARowGameOver(winnerSeat: nil, reason: .draw))),
    ]

    private func bytes(_ buffer: ByteBuffer) -> [UInt8] { Array(buffer.readableBytesView) }

    @Test func moveHasTheDocumentedBytes() throws {
        let move = FourInARowClientMessage.move(FourInARowMove(moveNumber: 3, column: 4))
        #expect(self.bytes(move.encoded()) == hexBytes(E.move))
        #expect(hexBytes(E.move) == [0x01, 0x00, 0x03, 0x04])
        #expect(try FourInARowClientMessage(body: ByteBuffer(bytes: hexBytes(E.move))) == move)
    }

    @Test(arguments: 0..<5) func serverMessagesHaveTheDocumentedBytes(index: Int) throws {
        let (text, message) = Self.serverExamples[index]
        #expect(self.bytes(message.encoded()) == hexBytes(text))
        #expect(try FourInARowServerMessage(body: ByteBuffer(bytes: hexBytes(text))) == message)
    }

    @Test func nativeFramesCarryTheBodies() throws {
        let input = NativeFrame.reliable(
            sequence: 7, ack: 5,
            message: NativeClientMessage.matchInput(
                matchID: 4242, input: FourInARowClientMessage.move(FourInARowMove(moveNumber: 3, column: 4)).encoded()
            ).encoded())
        #expect(self.bytes(input.encodedFrame()) == hexBytes(E.matchInput))
        let event = NativeFrame.reliable(
            sequence: 12, ack: 7,
            message: NativeServerMessage.matchEvent(matchID: 4242, event: FourInARowServerMessage.moved(Self.movedExample).encoded())
                .encoded())
        #expect(self.bytes(event.encodedFrame()) == hexBytes(E.matchEvent))
    }

    @Test func everyMessageRoundTrips() throws {
        var full = [UInt8](repeating: 0, count: 42)
        for index in full.indices { full[index] = UInt8(index % 2 + 1) }
        let over = FourInARowSnapshot(
            phase: .over, players: [.init(seat: 0, playerID: "a"), .init(seat: 1, playerID: "é ünïcødé")], board: full,
            moveNumber: 43, seatToMove: nil, turnTimeLeftMilliseconds: 0,
            result: FourInARowGameOver(winnerSeat: 1, reason: .fourInARow, winningCells: [0, 8, 16, 24, 32]))
        let waiting = FourInARowSnapshot(
            phase: .waiting, players: [.init(seat: 0, playerID: "solo")], board: [UInt8](repeating: 0, count: 42),
            moveNumber: 1, seatToMove: nil, turnTimeLeftMilliseconds: 0, result: nil)
        var messages: [FourInARowServerMessage] = [.state(over), .state(waiting)]
        for reason in FourInARowRefusalReason.allCases {
            messages.append(.moveRefused(FourInARowMoveRefused(moveNumber: UInt16.max, reason: reason, text: "")))
        }
        for reason in FourInARowEndReason.allCases {
            messages.append(.gameOver(FourInARowGameOver(winnerSeat: reason == .draw ? nil : 1, reason: reason)))
        }
        messages.append(.moved(FourInARowMoved(seat: 1, column: 6, row: 5, moveNumber: 42, nextSeat: nil, turnTimeMilliseconds: 0)))
        for message in messages {
            #expect(try FourInARowServerMessage(body: message.encoded()) == message)
        }
        for column in [0, 6, 7, 255] as [UInt8] {
            let move = FourInARowClientMessage.move(FourInARowMove(moveNumber: 65_535, column: column))
            #expect(try FourInARowClientMessage(body: move.encoded()) == move)
        }
    }

    @Test func bytesAfterTheLastFieldAreIgnored() throws {
        #expect(
            try FourInARowClientMessage(body: ByteBuffer(bytes: hexBytes(E.move) + [0xAA, 0xBB]))
                == .move(FourInARowMove(moveNumber: 3, column: 4)))
    }

    @Test func garbageIsATypedError() throws {
        func server(_ bytes: [UInt8]) throws { _ = try FourInARowServerMessage(body: ByteBuffer(bytes: bytes)) }
        func client(_ bytes: [UInt8]) throws { _ = try FourInARowClientMessage(body: ByteBuffer(bytes: bytes)) }

        #expect(throws: WireError.emptyFrame) { try client([]) }
        #expect(throws: WireError.emptyFrame) { try server([]) }
        #expect(throws: WireError.unknownMessageType(2)) { try client([2, 0, 1, 3]) }
        #expect(throws: WireError.unknownMessageType(9)) { try server([9]) }
        #expect(throws: WireError.truncated(field: "column", needed: 1, available: 0)) { try client([1, 0, 1]) }
        #expect(throws: WireError.truncated(field: "moveNumber", needed: 2, available: 1)) { try client([1, 0]) }

        // Every proper prefix of every server example is truncated, never a crash or a value.
        for (text, _) in Self.serverExamples {
            let whole = hexBytes(text)
            for length in 1..<whole.count {
                #expect(throws: WireError.self) { try server(Array(whole.prefix(length))) }
            }
        }

        let moved = hexBytes(E.moved)
        #expect(throws: NativeWireError.invalidValue(field: "seat", value: 2)) { try server(self.with(moved, at: 1, 2)) }
        #expect(throws: NativeWireError.invalidValue(field: "column", value: 7)) { try server(self.with(moved, at: 2, 7)) }
        #expect(throws: NativeWireError.invalidValue(field: "row", value: 6)) { try server(self.with(moved, at: 3, 6)) }
        #expect(throws: NativeWireError.invalidValue(field: "nextSeat", value: 3)) { try server(self.with(moved, at: 6, 3)) }

        let refused = hexBytes(E.refused)
        #expect(throws: NativeWireError.invalidValue(field: "reason", value: 0)) { try server(self.with(refused, at: 3, 0)) }
        #expect(throws: NativeWireError.invalidValue(field: "reason", value: 8)) { try server(self.with(refused, at: 3, 8)) }
        #expect(throws: WireError.invalidUTF8(field: "text")) { try server(self.with(refused, at: 6, 0xFF)) }

        let gameOver = hexBytes(E.gameOver)
        #expect(throws: NativeWireError.invalidValue(field: "winnerSeat", value: 254)) { try server(self.with(gameOver, at: 1, 254)) }
        #expect(throws: NativeWireError.invalidValue(field: "reason", value: 5)) { try server(self.with(gameOver, at: 2, 5)) }
        #expect(throws: NativeWireError.invalidValue(field: "count", value: 43)) { try server(self.with(gameOver, at: 3, 43)) }
        #expect(throws: NativeWireError.invalidValue(field: "cells[3]", value: 42)) { try server(self.with(gameOver, at: 7, 42)) }

        let state = hexBytes(E.state)
        #expect(throws: NativeWireError.invalidValue(field: "phase", value: 3)) { try server(self.with(state, at: 1, 3)) }
        #expect(throws: NativeWireError.invalidValue(field: "count", value: 3)) { try server(self.with(state, at: 2, 3)) }
        #expect(throws: NativeWireError.invalidValue(field: "players[0].seat", value: 2)) { try server(self.with(state, at: 3, 2)) }
        let boardStart = 3 + 2 * (1 + 2 + 32)
        #expect(throws: NativeWireError.invalidValue(field: "board[5]", value: 3)) { try server(self.with(state, at: boardStart + 5, 3)) }
        #expect(throws: NativeWireError.invalidValue(field: "seatToMove", value: 2)) { try server(self.with(state, at: boardStart + 44, 2)) }
        // Phase over without the result fields that then follow.
        #expect(throws: WireError.truncated(field: "winnerSeat", needed: 1, available: 0)) { try server(self.with(state, at: 1, 2)) }
    }

    private func with(_ bytes: [UInt8], at index: Int, _ value: UInt8) -> [UInt8] {
        var copy = bytes
        copy[index] = value
        return copy
    }

    @Test func documentHoldsExactlyTheseExamples() throws {
        let blocks = try documentedExamples(in: "docs/protocol-fourinarow.md", under: "## Byte examples")
        #expect(blocks == [E.move, E.state, E.moved, E.refused, E.gameOver, E.draw, E.matchInput, E.matchEvent])
    }
}
