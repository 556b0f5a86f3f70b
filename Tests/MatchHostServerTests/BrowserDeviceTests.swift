import Foundation
import MatchHostProcessTesting
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A page whose device the operator unlinked (`matchhost recover`): its session is revoked,
/// it signs in again, is told its device was unlinked, and stops, instead of signing in again
/// and again.
@Suite struct BrowserDeviceTests {
    @Test(.enabled(if: HeadlessBrowser.path != nil || HeadlessBrowser.isRequired, "needs chromium (apt install chromium)"))
    func aPageWhoseDeviceWasUnlinkedSaysSoAndDoesNotReconnect() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-browser-device-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300"])
        defer { server.stopBlocking(with: SIGKILL) }
        let web = try #require(server.webPort)
        let admin = try #require(server.adminPort)
        let page = try await DevToolsPage.open("http://127.0.0.1:\(web)/fourinarow", group: MultiThreadedEventLoopGroup.singleton)
        #expect(try await page.waitFor("document.getElementById('connection').textContent", toBe: "connected") == "connected")
        let shown = try await page.evaluate("document.querySelector('#player .you').textContent")

        let recovered = try await runMatchHostToExit(["recover", shown, "--data", data.path, "--admin-port", "\(admin)"])
        #expect(recovered.status == 0, "\(recovered.stderr)")
        let note = "document.getElementById('note').textContent"
        let told = try await page.waitFor("\(note).includes('was unlinked from its player') ? 'told' : \(note)", toBe: "told")
        #expect(told == "told")
        #expect(try await page.waitFor("document.getElementById('connection').textContent", toBe: "disconnected") == "disconnected")
        await page.close()
    }
}
