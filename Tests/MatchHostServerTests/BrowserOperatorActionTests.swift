import Foundation
import MatchHostProcessTesting
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The operator acts on a player whose page is open (a ban, every device unlinked): the page
/// says why and stops, instead of signing in again and again.
@Suite struct BrowserOperatorActionTests {
    /// A running server and a page of it, connected; `shown` is the start of the page's player
    /// id, as the page shows it and the operator's commands take it.
    private static func signedInPage(data: URL) async throws -> (server: ServeProcess, page: DevToolsPage, shown: String, admin: Int) {
        let server = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300"])
        do {
            let web = try #require(server.webPort)
            let admin = try #require(server.adminPort)
            let page = try await DevToolsPage.open("http://127.0.0.1:\(web)/fourinarow", group: MultiThreadedEventLoopGroup.singleton)
            #expect(try await page.waitFor("document.getElementById('connection').textContent", toBe: "connected") == "connected")
            let shown = try await page.evaluate("document.querySelector('#player .you').textContent")
            #expect(shown.count == 8)
            return (server, page, shown, admin)
        } catch {
            server.stopBlocking(with: SIGKILL)
            throw error
        }
    }

    private static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-browser-operator-\(UUID().uuidString)")
    }

    @Test(.enabled(if: HeadlessBrowser.path != nil || HeadlessBrowser.isRequired, "needs chromium (apt install chromium)"))
    func aBannedPlayersPageSaysWhyAndDoesNotReconnect() async throws {
        let data = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let (server, page, shown, admin) = try await Self.signedInPage(data: data)
        defer { server.stopBlocking(with: SIGKILL) }

        let banned = try await runMatchHostToExit(["ban", shown, "--reason", "griefing", "--data", data.path, "--admin-port", "\(admin)"])
        #expect(banned.status == 0, "\(banned.stderr)")
        #expect(
            try await page.waitFor("document.getElementById('note').textContent", toBe: "this player is banned: griefing")
                == "this player is banned: griefing")
        // "disconnected", not "reconnecting…": the page has given up, as it should.
        #expect(try await page.waitFor("document.getElementById('connection').textContent", toBe: "disconnected") == "disconnected")
        await page.close()
    }

    @Test(.enabled(if: HeadlessBrowser.path != nil || HeadlessBrowser.isRequired, "needs chromium (apt install chromium)"))
    func aPageWhoseDeviceWasUnlinkedSaysSoAndDoesNotReconnect() async throws {
        let data = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let (server, page, shown, admin) = try await Self.signedInPage(data: data)
        defer { server.stopBlocking(with: SIGKILL) }

        // Its session revoked, the page signs in again with its device, and is told the device
        // was unlinked.
        let recovered = try await runMatchHostToExit(["recover", shown, "--data", data.path, "--admin-port", "\(admin)"])
        #expect(recovered.status == 0, "\(recovered.stderr)")
        let note = "document.getElementById('note').textContent"
        let told = try await page.waitFor("\(note).includes('was unlinked from its player') ? 'told' : \(note)", toBe: "told")
        #expect(told == "told")
        #expect(try await page.waitFor("document.getElementById('connection').textContent", toBe: "disconnected") == "disconnected")
        await page.close()
    }
}
