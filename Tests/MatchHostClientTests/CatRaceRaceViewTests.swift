import MatchHostClient
import MatchHostWire
import Testing

/// The race view folds server messages; no sockets.
struct CatRaceRaceViewTests {
    private static func started(_ racers: [(String, String, UInt32)], state: MatchStarted.State = .active)
        -> CatRaceServerMessage
    {
        .matchStarted(MatchStarted(state: state, racers: racers.map { MatchStarted.Racer(playerID: $0.0, alias: $0.1, posX: $0.2) }))
    }

    @Test func aWholeRaceFolds() {
        var view = CatRaceRaceView(myPlayerID: "G:Bo")
        #expect(view.phase == .connecting && !view.canTap && view.tap() == nil)

        view.apply(.notInMatch)
        #expect(view.phase == .notInMatch && !view.raceEnded && view.racers.isEmpty)

        view.apply(Self.started([("G:Ann", "Ann", 25), ("G:Bo", "Bo", 25), ("G:Cy", "", 25)]))
        #expect(view.phase == .racing && view.canTap)
        #expect(view.myIndex == 1 && view.me?.alias == "Bo")
        #expect(view.racers.map(\.isMe) == [false, true, false])
        #expect(view.racers[2].displayName == "G:Cy")

        #expect(view.tap() == MovedSelf(posX: 35))
        #expect(view.tap() == MovedSelf(posX: 45))
        #expect(view.me?.posX == 45)

        view.apply(.playerMoved(PlayerMoved(playerIndex: 0, posX: 105)))
        view.apply(.playerMoved(PlayerMoved(playerIndex: 2, posX: 35)))
        view.apply(.playerMoved(PlayerMoved(playerIndex: 9, posX: 999)))  // no such seat: ignored
        #expect(view.racers.map(\.posX) == [105, 45, 35])

        view.apply(.playerMoved(PlayerMoved(playerIndex: 0, posX: 445)))
        view.apply(.gameOver(GameOver(winnerIndex: 0)))
        #expect(view.phase == .finished && view.winnerIndex == 0 && view.winner?.alias == "Ann")
        #expect(!view.iWon && !view.canTap && view.tap() == nil)

        view.apply(Self.started([("G:Ann", "Ann", 25), ("G:Bo", "Bo", 25), ("G:Cy", "Cy", 25)]))
        #expect(view.phase == .racing && view.winnerIndex == nil && view.me?.posX == 25)
        #expect(view.tap() == MovedSelf(posX: 35))

        view.apply(.notifyReady(NotifyReady(playerID: "G:Dee")))
        #expect(view.readyPlayerIDs == ["G:Dee"])

        // The server ends the race: taps stop, the last race stays on show.
        view.apply(.notInMatch)
        #expect(view.phase == .notInMatch && view.raceEnded && !view.canTap)
        #expect(view.racers.count == 3)
    }

    @Test func myOwnWinIsMine() {
        var view = CatRaceRaceView(myPlayerID: "G:Ann")
        view.apply(Self.started([("G:Ann", "Ann", 435), ("G:Bo", "Bo", 25)]))
        #expect(view.tap() == MovedSelf(posX: 445))
        view.apply(.gameOver(GameOver(winnerIndex: 0)))
        #expect(view.iWon && view.winner?.isMe == true)
    }

    /// The tutorial's server sent the receiver's own index in PLAYER_MOVED; with two racers
    /// the mover is then the other one.
    @Test func playerMovedWithMyOwnIndexMovesTheOtherOfTwo() {
        var two = CatRaceRaceView(myPlayerID: "G:Bo")
        two.apply(Self.started([("G:Ann", "Ann", 25), ("G:Bo", "Bo", 25)]))
        two.apply(.playerMoved(PlayerMoved(playerIndex: 1, posX: 35)))
        #expect(two.racers.map(\.posX) == [35, 25])

        var three = CatRaceRaceView(myPlayerID: "G:Bo")
        three.apply(Self.started([("G:Ann", "Ann", 25), ("G:Bo", "Bo", 25), ("G:Cy", "Cy", 25)]))
        three.apply(.playerMoved(PlayerMoved(playerIndex: 1, posX: 35)))
        #expect(three.racers.map(\.posX) == [25, 25, 25])
    }

    /// After a reconnect the server may report a finished race: the racer past the line won.
    @Test func aGameOverSnapshotNamesTheWinner() {
        var view = CatRaceRaceView(myPlayerID: "G:Bo")
        view.apply(Self.started([("G:Ann", "Ann", 305), ("G:Bo", "Bo", 445)], state: .gameOver))
        #expect(view.phase == .finished && view.iWon && !view.canTap)

        view.apply(.gameOver(GameOver(winnerIndex: 7)))  // no such seat
        #expect(view.winnerIndex == nil)
    }

    @Test func aSpectatorCannotTap() {
        var view = CatRaceRaceView(myPlayerID: "G:Zed")
        view.apply(Self.started([("G:Ann", "Ann", 25), ("G:Bo", "Bo", 25)]))
        #expect(view.phase == .racing && view.myIndex == nil && !view.canTap && view.tap() == nil)
    }

    @Test func gameOverWithoutARaceIsIgnored() {
        var view = CatRaceRaceView(myPlayerID: "G:Ann")
        view.apply(.notInMatch)
        view.apply(.gameOver(GameOver(winnerIndex: 0)))
        #expect(view.phase == .notInMatch && view.winnerIndex == nil)
    }

    @Test func progressIsClamped() {
        #expect(CatRaceRaceView.progress(of: 0) == 0)
        #expect(CatRaceRaceView.progress(of: 25) == 0)
        #expect(CatRaceRaceView.progress(of: 235) == 0.5)
        #expect(CatRaceRaceView.progress(of: 445) == 1)
        #expect(CatRaceRaceView.progress(of: .max) == 1)
    }

    @Test(arguments: [30, 60, 80, 200])
    func lanesFitTheWidthAndPlaceTheCats(width: Int) {
        var view = CatRaceRaceView(myPlayerID: "G:Bo")
        view.apply(Self.started([("G:Ann", "Ann", 25), ("G:Bo", "Bo", 25), ("G:Cy", "A very long alias indeed", 25)]))
        view.apply(.playerMoved(PlayerMoved(playerIndex: 0, posX: 445)))
        view.apply(.playerMoved(PlayerMoved(playerIndex: 2, posX: 235)))
        view.apply(.gameOver(GameOver(winnerIndex: 0)))
        let lanes = view.lanes(width: width)
        #expect(lanes.count == 3)
        #expect(lanes.allSatisfy { $0.count <= width })
        #expect(lanes[1].hasPrefix(width >= 60 ? "> Bo (you) " : "> Bo"))
        #expect(lanes[0].hasPrefix("  Ann"))
        #expect(lanes[0].hasSuffix(" 445 WINNER"))
        #expect(lanes[1].hasSuffix(" 25"))
        // The track is the text between the bars: the winner's cat touches the finish bar,
        // the loser's is at the start, the middle one in between.
        func track(_ line: String) -> Substring {
            let open = line.firstIndex(of: "|")!
            let close = line.lastIndex(of: "|")!
            return line[line.index(after: open)..<close]
        }
        #expect(track(lanes[0]).hasSuffix(CatRaceRaceView.catGlyph))
        #expect(track(lanes[1]).hasPrefix(CatRaceRaceView.catGlyph))
        let middle = track(lanes[2])
        let catAt = middle.distance(from: middle.startIndex, to: middle.range(of: CatRaceRaceView.catGlyph)!.lowerBound)
        let room = middle.count - CatRaceRaceView.catGlyph.count
        #expect(abs(catAt - room / 2) <= 1)
        #expect(Set(lanes.map { track($0).count }).count == 1)
    }

    @Test func noRacersNoLanes() {
        #expect(CatRaceRaceView(myPlayerID: "G:Ann").lanes(width: 80).isEmpty)
    }
}
