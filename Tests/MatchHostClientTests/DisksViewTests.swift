import MatchHostClient
import MatchHostWire
import Testing

/// ``DisksView`` folding server messages, without sockets.
@Suite struct DisksViewTests {
    static let ann = "f998cf4c0bc77f1ce5982c7ec9d2e555"
    static let bo = "b67b73f107a86cddb52f0520e9a09eba"
    static let millisecond: UInt64 = 1_000_000

    static func state(
        _ phase: DisksPhase, disks: [DisksDisk] = [], scores: [UInt16] = [0, 0], time: UInt64 = 1_000 * millisecond
    ) -> DisksServerMessage {
        let ids = [ann, bo]
        return .state(
            DisksState(
                phase: phase, tick: 30, serverTime: time, timeLeftMilliseconds: 60_000, scoreLimit: 20, disks: disks,
                scores: scores.indices.map { DisksScore(seat: UInt8($0), playerID: ids[$0], score: scores[$0]) }))
    }

    static func tick(
        _ number: UInt32, at time: UInt64, spawned: [DisksDisk] = [], hits: [DisksHit] = [], expired: [UInt32] = []
    ) -> DisksServerMessage {
        .tick(
            DisksTick(
                tick: number, serverTime: time, timeLeftMilliseconds: 60_000 - UInt32(time / millisecond), spawned: spawned,
                hits: hits, expired: expired))
    }

    static func disk(_ id: UInt32, x: UInt16 = 500, y: UInt16 = 500, radius: UInt16 = 60, color: UInt8 = 0) -> DisksDisk {
        DisksDisk(id: id, x: x, y: y, radius: radius, color: color)
    }

    @Test func aGameFromStateToGameOver() {
        var view = DisksView(myPlayerID: Self.ann)
        #expect(view.phase == .joining)
        view.apply(Self.state(.waiting, scores: [0]))
        #expect(view.phase == .waiting)
        #expect(view.players.map(\.playerID) == [Self.ann])
        #expect(view.mySeat == 0)

        view.apply(.presence(playerID: Self.bo, change: .joined, reason: .none))
        #expect(view.players.map(\.playerID) == [Self.ann, Self.bo])
        #expect(view.players[1].isMe == false)

        view.apply(Self.state(.playing))
        #expect(view.phase == .playing)
        #expect(view.scoreLimit == 20)

        view.apply(Self.tick(31, at: 1_033 * Self.millisecond, spawned: [Self.disk(1, x: 100, y: 100), Self.disk(2, x: 800)]))
        #expect(view.liveDisks.map(\.disk.id) == [1, 2])
        #expect(view.liveDisks.map(\.key) == ["a", "b"])
        #expect(view.tick == 31)
        #expect(view.timeLeftMilliseconds == 58_967)

        // Bo hits disk 1, disk 2 expires, disk 3 appears.
        view.apply(
            Self.tick(
                32, at: 1_066 * Self.millisecond, spawned: [Self.disk(3)], hits: [DisksHit(diskID: 1, seat: 1, score: 1)],
                expired: [2]))
        #expect(view.liveDisks.map(\.disk.id) == [3])
        #expect(view.liveDisks.map(\.key) == ["c"])
        #expect(view.hitDisks.map(\.disk.id) == [1])
        #expect(view.hitDisks.first?.seat == 1)
        #expect(view.hitDisks.first?.key == "a")
        #expect(view.hitDisks.first?.hitAt == 1_066 * Self.millisecond)
        #expect(view.players.map(\.score) == [0, 1])
        #expect(view.hitCount == 1)

        // The hit disk spins away for 600 ms of server time.
        view.apply(Self.tick(40, at: 1_366 * Self.millisecond))
        #expect(view.hitDisks.count == 1)
        #expect(view.fadeProgress(of: view.hitDisks[0]) == 0.5)
        view.apply(Self.tick(50, at: 1_666 * Self.millisecond))
        #expect(view.hitDisks.isEmpty)

        // Ann's winning hit; GAME_OVER then clears the board, spinning disks too.
        view.apply(Self.tick(51, at: 1_700 * Self.millisecond, spawned: [Self.disk(9)]))
        view.apply(Self.tick(52, at: 1_733 * Self.millisecond, hits: [DisksHit(diskID: 9, seat: 0, score: 20)]))
        #expect(view.liveDisks.map(\.disk.id) == [3])
        #expect(view.hitDisks.map(\.disk.id) == [9])

        view.apply(.tapMissed(DisksTapMissed(x: 1, y: 2, reason: .alreadyHit)))
        #expect(view.lastMiss == DisksTapMissed(x: 1, y: 2, reason: .alreadyHit))

        view.apply(
            .gameOver(
                DisksGameOver(
                    reason: .scoreLimit, winners: [0],
                    scores: [DisksScore(seat: 0, playerID: Self.ann, score: 20), DisksScore(seat: 1, playerID: Self.bo, score: 7)])))
        #expect(view.phase == .over)
        #expect(view.gameOverReason == .scoreLimit)
        #expect(view.winners == [0])
        #expect(view.iWon)
        #expect(view.winnerPlayers.map(\.playerID) == [Self.ann])
        #expect(view.players.map(\.score) == [20, 7])
        #expect(view.liveDisks.isEmpty && view.hitDisks.isEmpty)

        view.apply(.matchEnded(reason: "game over"))
        #expect(view.matchEndReason == "game over")
    }

    @Test func keysGoRoundAndSkipQ() {
        var view = DisksView(myPlayerID: Self.ann)
        view.apply(Self.state(.playing))
        var time: UInt64 = 2_000 * Self.millisecond
        var keys: [Character] = []
        // 17 disks one after the other, each hit before the next appears: the keys go round
        // a to z without q, and a key freed by a hit is not handed out again at once.
        for id in UInt32(1)...17 {
            time += 33 * Self.millisecond
            view.apply(Self.tick(id, at: time, spawned: [Self.disk(id)]))
            keys.append(view.liveDisks.last!.key!)
            time += 33 * Self.millisecond
            view.apply(Self.tick(id, at: time, hits: [DisksHit(diskID: id, seat: 0, score: UInt16(id))]))
        }
        #expect(String(keys) == "abcdefghijklmnopr")

        // With only a few keys, a key still held by a live disk is skipped.
        var few = DisksView(myPlayerID: Self.ann, keys: ["x", "y"])
        few.apply(Self.state(.playing))
        few.apply(Self.tick(1, at: time, spawned: [Self.disk(1), Self.disk(2)]))
        few.apply(Self.tick(2, at: time, hits: [DisksHit(diskID: 1, seat: 0, score: 1)], expired: []))
        few.apply(Self.tick(3, at: time, spawned: [Self.disk(3), Self.disk(4)]))
        #expect(few.liveDisks.map(\.key) == ["y", "x", nil])
        #expect(few.liveDisk(forKey: "x")?.disk.id == 3)
    }

    @Test func stateKeepsTheKeysOfKnownDisks() {
        var view = DisksView(myPlayerID: Self.ann)
        view.apply(Self.state(.playing))
        view.apply(Self.tick(1, at: 0, spawned: [Self.disk(1), Self.disk(2)]))
        // Back after a reconnect: disk 1 is gone, 2 is still up, 5 is new.
        view.apply(Self.state(.playing, disks: [Self.disk(2), Self.disk(5)], scores: [3, 4]))
        #expect(view.liveDisks.map(\.disk.id) == [2, 5])
        #expect(view.liveDisks.map(\.key) == ["b", "c"])
        #expect(view.players.map(\.score) == [3, 4])
    }

    @Test func seatsHeardOfOnlyThroughHitsAndPresence() {
        var view = DisksView(myPlayerID: Self.bo)
        view.apply(Self.state(.playing, scores: [0]))
        #expect(view.mySeat == nil)
        // Seat 2 scores before this view heard of seats 1 and 2.
        view.apply(Self.tick(1, at: 0, hits: [DisksHit(diskID: 9, seat: 2, score: 5)]))
        #expect(view.players.map(\.playerID) == [Self.ann, "", ""])
        #expect(view.players.map(\.score) == [0, 0, 5])
        #expect(view.players[2].displayName == "seat 3")
        // Presence fills the unknown seats in join order.
        view.apply(.presence(playerID: Self.bo, change: .joined, reason: .none))
        view.apply(.presence(playerID: "carol", change: .joined, reason: .none))
        #expect(view.players.map(\.playerID) == [Self.ann, Self.bo, "carol"])
        #expect(view.mySeat == 1)
        view.apply(.presence(playerID: "carol", change: .disconnected, reason: .none))
        #expect(view.players[2].isAway)
        view.apply(.presence(playerID: "carol", change: .reconnected, reason: .none))
        #expect(!view.players[2].isAway)
        view.apply(.presence(playerID: Self.ann, change: .left, reason: .asked))
        #expect(view.players[0].hasLeft)
        #expect(view.players.map(\.score) == [0, 0, 5])
    }

    @Test func aimPointAvoidsNewerDisks() throws {
        var view = DisksView(myPlayerID: Self.ann)
        view.apply(Self.state(.playing))
        // Disk 2 (newer) covers disk 1's centre; disk 3 sits exactly on disk 2.
        view.apply(
            Self.tick(
                1, at: 0,
                spawned: [Self.disk(1, x: 500, y: 500), Self.disk(2, x: 540, y: 500), Self.disk(4, x: 200, y: 200)]))
        view.apply(Self.tick(2, at: 0, spawned: [Self.disk(3, x: 540, y: 500)]))

        let free = try #require(view.aimPoint(forDisk: 4))
        #expect(free == (200, 200))
        let covered = try #require(view.aimPoint(forDisk: 1))
        let disk1 = Self.disk(1, x: 500, y: 500)
        #expect(DisksView.covers(disk1, x: Int(covered.x), y: Int(covered.y)))
        #expect(!DisksView.covers(Self.disk(2, x: 540, y: 500), x: Int(covered.x), y: Int(covered.y)))
        #expect(view.aimPoint(forDisk: 2) == nil)  // wholly under disk 3
        #expect(view.aimPoint(forDisk: 3).map { [$0.x, $0.y] } == [540, 500])
        #expect(view.aimPoint(forDisk: 99) == nil)
    }

    @Test func theBoardAsText() {
        var view = DisksView(myPlayerID: Self.ann)
        view.apply(Self.state(.playing))
        view.apply(Self.tick(1, at: 0, spawned: [Self.disk(1, x: 500, y: 500, radius: 150, color: 2)]))
        // 10 × 5 cells of 100 × 200 board units: the disk covers cells 3-6 of row 2.
        #expect(
            view.boardLines(columns: 10, rows: 5) == [
                "+----------+",
                "|          |",
                "|          |",
                "|   aaaa   |",
                "|          |",
                "|          |",
                "+----------+",
            ])
        let cells = view.board(columns: 10, rows: 5)
        #expect(cells[2][5] == DisksView.BoardCell(character: "a", kind: .key, color: 2))
        #expect(cells[2][4] == DisksView.BoardCell(character: "a", kind: .disk, color: 2))
        #expect(cells[1][5] == .empty)

        // Bo (seat 1) hits it: it spins, showing Bo's seat number, and shrinks as it fades.
        view.apply(Self.tick(2, at: 0, hits: [DisksHit(diskID: 1, seat: 1, score: 1)]))
        #expect(view.boardLines(columns: 10, rows: 5)[3] == "|   ||2|   |")
        #expect(view.board(columns: 10, rows: 5)[2][5] == DisksView.BoardCell(character: "2", kind: .hitter, color: 2))
        view.apply(Self.tick(3, at: 75 * Self.millisecond))
        #expect(view.boardLines(columns: 10, rows: 5)[3] == "|    /2    |")
        view.apply(Self.tick(20, at: 600 * Self.millisecond))
        #expect(view.boardLines(columns: 10, rows: 5)[3] == "|          |")

        // A disk too small to cover a cell's centre still shows its key.
        view.apply(Self.tick(21, at: 600 * Self.millisecond, spawned: [Self.disk(2, x: 999, y: 0, radius: 1)]))
        #expect(view.boardLines(columns: 10, rows: 5)[1] == "|         b|")
    }

    @Test func scoreLines() {
        var view = DisksView(myPlayerID: Self.bo)
        view.apply(Self.state(.playing, scores: [12, 9]))
        view.apply(.presence(playerID: Self.ann, change: .left, reason: .asked))
        view.apply(
            .gameOver(
                DisksGameOver(
                    reason: .opponentsLeft, winners: [1],
                    scores: [DisksScore(seat: 0, playerID: Self.ann, score: 12), DisksScore(seat: 1, playerID: Self.bo, score: 9)])))
        #expect(
            view.scoreLines() == [
                "  f998cf4c       12  left",
                "> b67b73f1 (you)  9  WINNER",
            ])
        #expect(view.iWon)
    }

    @Test func aliasesShowForSeatsFilledBeforeAndAfterTheyAreKnown() {
        var view = DisksView(myPlayerID: Self.ann)
        view.apply(Self.state(.waiting, scores: [0]))
        // Known after its player is seated.
        view.setAlias("Ann 🐈", of: Self.ann)
        // Known before (the app asked early), and one of a player never seated.
        view.setAlias("Bo", of: Self.bo)
        view.setAlias("Nobody", of: "c0ffee")
        #expect(view.players.map(\.displayName) == ["Ann 🐈"])
        view.apply(.presence(playerID: Self.bo, change: .joined, reason: .none))
        view.apply(Self.state(.playing, scores: [3, 12]))
        #expect(view.players.map(\.displayName) == ["Ann 🐈", "Bo"])
        #expect(view.scoreLines() == ["> Ann 🐈 (you)  3", "  Bo          12"])
    }
}
