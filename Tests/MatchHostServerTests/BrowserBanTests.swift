import Foundation
import MatchHostProcessTesting
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A player banned while its page is open: the page says why and stops, instead of signing in
/// again and again.
@Suite struct BrowserBanTests {
    @Test(.enabled(if: HeadlessBrowser.path != nil || HeadlessBrowser.isRequired, "needs chromium (apt install chromium)"))
    func aBannedPlayersPageSaysWhyAndDoesNotReconnect() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-browser-ban-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300"])
        defer { server.stopBlocking(with: SIGKILL) }
        let web = try #require(server.webPort)
        let admin = try #require(server.adminPort)
        let page = try await DevToolsPage.open("http://127.0.0.1:\(web)/fourinarow", group: MultiThreadedEventLoopGroup.singleton)
        #expect(try await page.waitFor("document.getElementById('connection').textContent", toBe: "connected") == "connected")
        // The page shows the start of its player's id, as `matchhost ban` takes it.
        let shown = try await page.evaluate("document.querySelector('#player .you').textContent")
        #expect(shown.count == 8)

        let banned = try await runMatchHostToExit(["ban", shown, "--reason", "griefing", "--data", data.path, "--admin-port", "\(admin)"])
        #expect(banned.status == 0, "\(banned.stderr)")
        #expect(
            try await page.waitFor("document.getElementById('note').textContent", toBe: "this player is banned: griefing")
                == "this player is banned: griefing")
        // "disconnected", not "reconnecting…": the page has given up, as it should.
        #expect(try await page.waitFor("document.getElementById('connection').textContent", toBe: "disconnected") == "disconnected")
        await page.close()
    }
}
