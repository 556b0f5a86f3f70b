import Foundation
import MatchHostProcessTesting
import MatchHostWire
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOWebSocket
import Testing

/// A page open in headless Chromium, read through the DevTools protocol (JSON over a
/// WebSocket): the test looks at the page's DOM while it runs, as a player would see it.
final class DevToolsPage: Sendable {
    private let process: ChildProcess
    private let profile: URL
    private let channel: any Channel
    private let replies: AsyncStream<String>
    private let nextID = NIOLockedValueBox(1)

    private init(process: ChildProcess, profile: URL, channel: any Channel, replies: AsyncStream<String>) {
        self.process = process
        self.profile = profile
        self.channel = channel
        self.replies = replies
    }

    /// The DevTools side of the WebSocket: text messages in, as they come.
    private final class Replies: ChannelDuplexHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundIn = String
        typealias OutboundOut = WebSocketFrame
        let continuation: AsyncStream<String>.Continuation
        init(continuation: AsyncStream<String>.Continuation) { self.continuation = continuation }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = Self.unwrapInboundIn(data)
            if frame.opcode == .text { self.continuation.yield(String(buffer: frame.data)) }
        }
        func channelInactive(context: ChannelHandlerContext) { self.continuation.finish() }
        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let text = ByteBuffer(string: Self.unwrapOutboundIn(data))
            context.write(Self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: text)), promise: promise)
        }
    }

    /// Starts a browser of its own (a new profile: no stored identity) on `url`.
    static func open(_ url: String, group: any EventLoopGroup) async throws -> DevToolsPage {
        let browser = try #require(HeadlessBrowser.path, "no chromium")
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-devtools-\(UUID().uuidString)")
        let process = try ChildProcess(
            browser,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=\(profile.path)",
                "--remote-debugging-port=0", url,
            ],
            standardOutput: .discard, standardError: .discard)
        do {
            // Chromium names the port it took in its profile.
            let portFile = profile.appendingPathComponent("DevToolsActivePort")
            let deadline = ContinuousClock.now + .seconds(30)
            var port: Int?
            while port == nil, ContinuousClock.now < deadline {
                port = (try? String(contentsOf: portFile, encoding: .utf8))?.split(separator: "\n").first.flatMap { Int($0) }
                if port == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            let devTools = try #require(port, "Chromium did not open its DevTools port")
            struct Target: Decodable {
                var type: String
                var url: String
                var webSocketDebuggerUrl: String?
            }
            var target: Target?
            while target == nil, ContinuousClock.now < deadline {
                let list = try await httpGet("/json/list", port: devTools, group: group)
                target = (try? JSONDecoder().decode([Target].self, from: Data(list.body.utf8)))?.first { $0.type == "page" && $0.url.hasPrefix(url.prefix(20)) }
                if target == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            let socket = try #require(target?.webSocketDebuggerUrl.flatMap(URL.init(string:)), "no page target")
            let (replies, continuation) = AsyncStream<String>.makeStream()
            let (channel, _) = try await openWebSocket(port: devTools, group: group, path: socket.path, origin: nil) { channel in
                try channel.pipeline.syncOperations.addHandler(Replies(continuation: continuation))
            }
            return DevToolsPage(process: process, profile: profile, channel: channel, replies: replies)
        } catch {
            process.terminate()
            try? FileManager.default.removeItem(at: profile)
            throw error
        }
    }

    /// Evaluates `expression` in the page; returns its value (a string, the expression's
    /// JSON.stringify for anything else).
    func evaluate(_ expression: String) async throws -> String {
        let id = self.nextID.withLockedValue { value in
            defer { value += 1 }
            return value
        }
        let call: [String: Any] = ["id": id, "method": "Runtime.evaluate", "params": ["expression": expression, "returnByValue": true]]
        let text = String(decoding: try JSONSerialization.data(withJSONObject: call), as: UTF8.self)
        try await self.channel.writeAndFlush(text)
        for await reply in self.replies {
            guard let object = try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any], object["id"] as? Int == id else { continue }
            let result = ((object["result"] as? [String: Any])?["result"] as? [String: Any])?["value"]
            return result as? String ?? "\(result ?? "nil")"
        }
        throw TestClientError.unexpected("DevTools closed")
    }

    /// Polls `expression` until it gives `expected` (for at most `timeout`); returns what it gave last.
    func waitFor(_ expression: String, toBe expected: String, timeout: Duration = .seconds(30)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var value = try await self.evaluate(expression)
        while value != expected, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            value = try await self.evaluate(expression)
        }
        return value
    }

    func close() async {
        try? await self.channel.close()
        self.process.terminate()
        await onOwnThread { self.process.waitUntilExit() }
        try? FileManager.default.removeItem(at: self.profile)
    }
}

@Suite struct BrowserClientTests {
    /// The page at the web port's `/` is a whole native client: in a real browser it joins a
    /// game by invite code, plays it against a player on the TCP port, comes back into the
    /// game after a reload (the same player, from the identity it keeps), and shows the end.
    @Test(.enabled(if: HeadlessBrowser.path != nil || HeadlessBrowser.isRequired, "needs chromium (apt install chromium)"))
    func theBrowserClientPlaysAGameOfFourInARowThroughAReload() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-browser-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        // Red answers no PING: the idle timeout must outlast the wait for the browser to start.
        let server = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300"])
        let web = try #require(server.webPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (red, _) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "red-on-tcp")
        let created = try #require(
            try await red.response(to: try await red.request(.createMatch(mode: "fourinarow", maxPlayers: 2, label: "", isPrivate: true))).joined)

        // The page's bot joins by the code and plays the middle column; red plays column 0,
        // moving first, so red's fourth disc wins.
        let page = try await DevToolsPage.open("http://127.0.0.1:\(web)/?join=\(created.inviteCode)&bot=1", group: group)
        var browserPlayer: String?
        var browserColumns: [UInt8] = []
        var reloaded = false
        var result: FourInARowGameOver?
        func move(_ number: UInt16) async throws {
            let input = FourInARowClientMessage.move(FourInARowMove(moveNumber: number, column: 0)).encoded()
            try await red.sendReliable(.matchInput(matchID: created.matchID, input: input))
        }
        while result == nil {
            switch try await red.nextMessage(timeout: .seconds(30)) {
            case .matchEvent(created.matchID, let event):
                switch try FourInARowServerMessage(body: event) {
                case .state(let state) where state.phase == .playing:
                    browserPlayer = state.players.first { $0.seat == 1 }?.playerID
                    if state.seatToMove == 0 { try await move(state.moveNumber) }
                case .moved(let moved) where moved.seat == 1:
                    browserColumns.append(moved.column)
                    if !reloaded {
                        // Reloaded after its first move: the page signs in again as the same
                        // player, which takes its seat back (MATCH_RESUMED, then STATE).
                        reloaded = true
                        _ = try await page.evaluate("location.reload(), 'reloading'")
                        #expect(try await red.nextMessage(timeout: .seconds(30)) == .presence(matchID: created.matchID, playerID: try #require(browserPlayer), change: .disconnected, reason: .none))
                        #expect(try await red.nextMessage(timeout: .seconds(30)) == .presence(matchID: created.matchID, playerID: try #require(browserPlayer), change: .reconnected, reason: .none))
                    }
                    if moved.nextSeat == 0 { try await move(moved.moveNumber + 1) }
                case .gameOver(let over):
                    result = over
                default:
                    break
                }
            case .presence:
                break
            case let other:
                Issue.record("unexpected \(other)")
            }
        }
        #expect(result == FourInARowGameOver(winnerSeat: 0, reason: .fourInARow, winningCells: [0, 7, 14, 21]))
        #expect(browserColumns == [3, 3, 3], "the page's bot played every turn, the one after its reload included")

        // What the player sees.
        let board = """
            JSON.stringify([document.getElementById('board').dataset.phase, document.getElementById('status').textContent,
              document.querySelectorAll('td.seat0').length, document.querySelectorAll('td.seat1').length,
              document.querySelectorAll('td.line').length, document.getElementById('connection').textContent])
            """
        #expect(try await page.waitFor(board, toBe: #"["over","You lost (four in a row)",4,3,4,"connected"]"#) == #"["over","You lost (four in a row)",4,3,4,"connected"]"#)
        await page.close()
        await red.close()
        await server.stop(with: SIGTERM)
        try await group.shutdownGracefully()
    }
}
