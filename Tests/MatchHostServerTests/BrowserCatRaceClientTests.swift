import Foundation
import MatchHostCore
import MatchHostProcessTesting
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

@Suite struct BrowserCatRaceClientTests {
    /// The page at `/catrace`, in a real browser, played as a player would: it joins a race from
    /// the live lobby, seats the tutorial's client (on the Cat Race port) by the player id that
    /// client sends, and races it and a native player; its cat is moved by real clicks on the
    /// Tap button and the track and by the space bar, one step a tap, and it wins. Then it races
    /// again, comes back into the race after a reload, and leaves, which ends the race for all.
    @Test(.enabled(if: HeadlessBrowser.path != nil || HeadlessBrowser.isRequired, "needs chromium (apt install chromium)"))
    func theBrowserClientRacesTheTutorialsClientAndWinsByClicksAndKeys() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-browser-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        // The host answers no PING: the idle timeout must outlast the wait for the browser to start.
        let server = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300"])
        let web = try #require(server.webPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (host, hostLogin) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "race-host")
        let page = try await DevToolsPage.open("http://127.0.0.1:\(web)/catrace", group: group)
        #expect(try await page.waitFor("document.getElementById('lobby').dataset.live", toBe: "true") == "true")

        // The race opened after the page follows the lobby is listed; the page joins it from the list.
        let derby = try #require(try await host.ask(.createMatch(mode: "catrace", maxPlayers: 3, label: "derby")).joined)
        let lobby = "JSON.stringify([...document.querySelectorAll('#lobby li')].map((item) => item.textContent))"
        #expect(try await page.waitFor(lobby, toBe: #"["derby 1 of 3 Join"]"#) == #"["derby 1 of 3 Join"]"#)
        _ = try await page.evaluate("document.querySelector('#lobby li button').click(), 'clicked'")
        let pair = try await host.nextLineUp(in: derby.matchID) { $0.racers.count == 2 }
        let browserPlayer = pair.racers[1].playerID
        let racers = "JSON.stringify([...document.querySelectorAll('#racers li')].map((item) => item.textContent + '@' + item.dataset.x))"
        let host8 = String(hostLogin.playerID.prefix(8)), browser8 = String(browserPlayer.prefix(8))
        #expect(try await page.waitFor(racers, toBe: #"["\#(host8)@25","\#(browser8) (you)@25"]"#) == #"["\#(host8)@25","\#(browser8) (you)@25"]"#)
        #expect(try await page.evaluate("document.getElementById('matchName').textContent") == "Race \(derby.matchID) · derby")

        // The tutorial's client, connected to its own port, gets the third seat by its id.
        let tutorial = try await TestCatRaceClient.connect(port: server.catRacePort, group: group, id: "G:1036727375", alias: "Riba")
        #expect(try await tutorial.next() == .notInMatch)
        _ = try await page.evaluate(
            "document.getElementById('appPlayer').value = 'G:1036727375', document.getElementById('appInvite').click(), 'clicked'")
        guard case .matchStarted(let three) = try await tutorial.next() else { throw TestClientError.unexpected("no MATCH_STARTED") }
        #expect(three.state == .active)
        #expect(three.racers.map(\.playerID) == [hostLogin.playerID, browserPlayer, "G:1036727375"])
        #expect(three.racers.map(\.alias) == [host8, browser8, "Riba"])
        try await tutorial.send(.movedSelf(MovedSelf(posX: 35)))
        let withRiba = #"["\#(host8)@25","\#(browser8) (you)@25","Riba@35"]"#
        #expect(try await page.waitFor(racers, toBe: withRiba) == withRiba)
        _ = try await host.nextCatRaceEvent(in: derby.matchID, "Riba's step") { $0 == .playerMoved(PlayerMoved(playerIndex: 2, posX: 35)) }

        // 42 taps of 10 from 25 reach the line at 445: 20 clicks on the button, 10 on the track,
        // 12 presses of the space bar. Each is one step, sent as it is made (the host and the
        // tutorial's client see every position in turn); taps are spaced more than the page's
        // 60 ms, which drops taps closer together (a held key's repeats).
        let button = try await page.centre(of: "tap"), track = try await page.centre(of: "track")
        for step in 1...42 {
            if step <= 20 {
                try await page.click(x: button.x, y: button.y)
            } else if step <= 30 {
                try await page.click(x: track.x, y: track.y)
            } else {
                try await page.pressSpace()
            }
            let moved = try await host.nextCatRaceEvent(in: derby.matchID, "PLAYER_MOVED \(step)") { if case .playerMoved = $0 { true } else { false } }
            #expect(moved == .playerMoved(PlayerMoved(playerIndex: 1, posX: 25 + 10 * UInt32(step))), "tap \(step)")
            #expect(try await tutorial.next() == .playerMoved(PlayerMoved(playerIndex: 1, posX: 25 + 10 * UInt32(step))), "tap \(step)")
            try await Task.sleep(for: .milliseconds(80))
        }
        #expect(try await host.nextCatRaceEvent(in: derby.matchID, "GAME_OVER") { _ in true } == .gameOver(GameOver(winnerIndex: 1)))
        #expect(try await tutorial.next() == .gameOver(GameOver(winnerIndex: 1)))
        let won = """
            JSON.stringify([document.getElementById('status').textContent, document.getElementById('track').dataset.phase,
              document.getElementById('tap').disabled, document.getElementById('again').hidden])
            """
        #expect(try await page.waitFor(won, toBe: #"["You won! Race again?","finished",true,false]"#) == #"["You won! Race again?","finished",true,false]"#)
        #expect(try await page.evaluate(racers) == #"["\#(host8)@25","\#(browser8) (you) won@445","Riba@35"]"#)

        // Race again: everyone back at the start.
        let again = try await page.centre(of: "again")
        try await page.click(x: again.x, y: again.y)
        guard case .matchStarted(let restarted) = try await tutorial.next() else { throw TestClientError.unexpected("no MATCH_STARTED") }
        #expect(restarted.state == .active && restarted.racers.map(\.posX) == [25, 25, 25])
        let atTheStart = #"["\#(host8)@25","\#(browser8) (you)@25","Riba@25"]"#
        #expect(try await page.waitFor(racers, toBe: atTheStart) == atTheStart)
        #expect(try await page.evaluate("String(document.getElementById('tap').disabled)") == "false")

        // A reload is the same player, back in its seat, shown the race as it is.
        try await tutorial.send(.movedSelf(MovedSelf(posX: 45)))
        _ = try await host.nextCatRaceEvent(in: derby.matchID, "Riba's step") { $0 == .playerMoved(PlayerMoved(playerIndex: 2, posX: 45)) }
        _ = try await page.evaluate("location.reload(), 'reloading'")
        _ = try await host.nextMessage(matching: "PRESENCE reconnected") {
            if case .presence(derby.matchID, browserPlayer, .reconnected, _) = $0 { true } else { false }
        }
        let back = #"["\#(host8)@25","\#(browser8) (you)@25","Riba@45"]"#
        #expect(try await page.waitFor(racers, toBe: back) == back)

        // Leaving ends the race for everyone.
        _ = try await page.evaluate("document.getElementById('leave').click(), 'clicked'")
        #expect(try await tutorial.next() == .notInMatch)
        _ = try await host.nextMessage(matching: "MATCH_ENDED") { if case .matchEnded(derby.matchID, _) = $0 { true } else { false } }
        let lobbyShown = "String(document.getElementById('gameView').hidden && !document.getElementById('lobbyView').hidden)"
        #expect(try await page.waitFor(lobbyShown, toBe: "true") == "true")

        // The race its leaving ended is on the leaderboard the lobby shows: one race won, by the browser.
        let standings = try await host.standingsLines("catrace", viewer: browserPlayer)
        #expect(standings.hasPrefix("1. \(browser8) (you) · ") && standings.contains("Riba"), "\(standings)")
        #expect(try await page.waitFor(DevToolsPage.standings, toBe: standings) == standings)

        #expect(page.problems.isEmpty, "\(page.problems)")
        await page.close()
        await tutorial.close()
        await host.close()
        await server.stop(with: SIGTERM)
        try await group.shutdownGracefully()
    }

    /// Under a `--max-tap-rate` below the default, the page spaces its taps for it: taps made
    /// faster than the server takes them are dropped on the page, so the cat the other racers
    /// see is where the page shows it, and none of its taps is refused.
    @Test(.enabled(if: HeadlessBrowser.path != nil || HeadlessBrowser.isRequired, "needs chromium (apt install chromium)"))
    func thePageSpacesItsTapsForTheServersTapRate() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-browser-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300", "--max-tap-rate", "4"])
        let web = try #require(server.webPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let script = try await httpGet("/catrace.js", port: web, group: group)
        #expect(script.body.contains("const TAP_INTERVAL = 260;"), "a tap each 250 ms, and 10 ms to spare")
        let (host, _) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "slow-host")
        let page = try await DevToolsPage.open("http://127.0.0.1:\(web)/catrace", group: group)
        #expect(try await page.waitFor("document.getElementById('lobby').dataset.live", toBe: "true") == "true")
        let race = try #require(try await host.ask(.createMatch(mode: "catrace", maxPlayers: 2, label: "slow")).joined)
        #expect(try await page.waitFor("String(document.querySelectorAll('#lobby li button').length)", toBe: "1") == "1")
        _ = try await page.evaluate("document.querySelector('#lobby li button').click(), 'clicked'")
        _ = try await host.nextLineUp(in: race.matchID) { $0.racers.count == 2 }
        #expect(try await page.waitFor("String(document.getElementById('tap').disabled)", toBe: "false") == "false")

        // Sixteen presses of the space bar, over the 60 ms a page at the default rate would
        // take, and faster than 4 a second.
        for _ in 0..<16 {
            try await page.pressSpace()
            try await Task.sleep(for: .milliseconds(70))
        }
        let shown = try await page.evaluate("document.querySelectorAll('#racers li')[1].dataset.x")
        let x = try #require(UInt32(shown), "the page's cat at \(shown)")
        #expect(x > 25, "the first press is a tap")
        // The host sees the browser's cat reach the same place: the server took every tap sent.
        var seen: UInt32 = 25
        while seen < x {
            let moved = try await host.nextCatRaceEvent(in: race.matchID, "the browser's cat reaching \(x) (at \(seen))") {
                if case .playerMoved(let moved) = $0 { moved.playerIndex == 1 } else { false }
            }
            if case .playerMoved(let moved) = moved { seen = moved.posX }
        }
        #expect(seen == x)

        #expect(page.problems.isEmpty, "\(page.problems)")
        await page.close()
        await host.close()
        await server.stop(with: SIGTERM)
        try await group.shutdownGracefully()
    }
}

extension TestNativeConnection {
    /// The next Cat Race event of `matchID` satisfying `predicate`.
    func nextCatRaceEvent(
        in matchID: MatchIdentifier, _ what: String, where predicate: (CatRaceServerMessage) -> Bool
    ) async throws -> CatRaceServerMessage {
        try await self.nextMatchEvent(in: matchID, what, decode: { try CatRaceServerMessage(frameBody: $0) }, where: predicate)
    }

    /// The next Cat Race MATCH_STARTED of `matchID` satisfying `predicate`.
    func nextLineUp(in matchID: MatchIdentifier, where predicate: (MatchStarted) -> Bool) async throws -> MatchStarted {
        let event = try await self.nextCatRaceEvent(in: matchID, "MATCH_STARTED") {
            if case .matchStarted(let started) = $0 { predicate(started) } else { false }
        }
        guard case .matchStarted(let started) = event else { throw TestClientError.unexpected("\(event)") }
        return started
    }
}
