import Foundation
import MatchHostCore
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
    private let reported: NIOLockedValueBox<[String]>

    private init(process: ChildProcess, profile: URL, channel: any Channel, replies: AsyncStream<String>, reported: NIOLockedValueBox<[String]>) {
        self.process = process
        self.profile = profile
        self.channel = channel
        self.replies = replies
        self.reported = reported
    }

    /// What went wrong in the page since it was opened: uncaught exceptions, `console.error`,
    /// and errors the browser logged (a script or style the Content-Security-Policy blocked, a
    /// file that failed to load).
    var problems: [String] { self.reported.withLockedValue { $0 } }

    /// The DevTools side of the WebSocket: text messages in, as they come; the page's problems
    /// noted as they are reported.
    private final class Replies: ChannelDuplexHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundIn = String
        typealias OutboundOut = WebSocketFrame
        let continuation: AsyncStream<String>.Continuation
        let reported: NIOLockedValueBox<[String]>
        init(continuation: AsyncStream<String>.Continuation, reported: NIOLockedValueBox<[String]>) {
            self.continuation = continuation
            self.reported = reported
        }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = Self.unwrapInboundIn(data)
            guard frame.opcode == .text else { return }
            let text = String(buffer: frame.data)
            if let problem = Self.problem(in: text) { self.reported.withLockedValue { $0.append(problem) } }
            self.continuation.yield(text)
        }
        private static func problem(in text: String) -> String? {
            guard let event = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                let parameters = event["params"] as? [String: Any]
            else { return nil }
            switch event["method"] as? String {
            case "Runtime.exceptionThrown":
                let details = parameters["exceptionDetails"] as? [String: Any]
                return "exception: \((details?["exception"] as? [String: Any])?["description"] ?? details?["text"] ?? "?")"
            case "Runtime.consoleAPICalled" where parameters["type"] as? String == "error":
                return "console.error: \((parameters["args"] as? [[String: Any]])?.map { "\($0["value"] ?? $0["description"] ?? "")" } ?? [])"
            case "Log.entryAdded":
                guard let entry = parameters["entry"] as? [String: Any], entry["level"] as? String == "error" else { return nil }
                // A browser asks for a favicon of its own accord; the site has none.
                if (entry["url"] as? String)?.hasSuffix("/favicon.ico") == true { return nil }
                return "logged: \(entry["text"] ?? "?") \(entry["url"] ?? "")"
            default:
                return nil
            }
        }
        func channelInactive(context: ChannelHandlerContext) { self.continuation.finish() }
        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let text = ByteBuffer(string: Self.unwrapOutboundIn(data))
            context.write(Self.wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: text)), promise: promise)
        }
    }

    /// Starts a browser of its own (a new profile: no stored identity) on a blank page, starts
    /// noting the page's problems, then goes to `url`.
    /// - Parameter arguments: more of Chromium's flags (a certificate to trust, say).
    static func open(_ url: String, group: any EventLoopGroup, arguments: [String] = []) async throws -> DevToolsPage {
        let browser = try #require(HeadlessBrowser.path, "no chromium")
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-devtools-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        let process = try ChildProcess(
            browser,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=\(profile.path)",
                // Tall enough that a Disks board is wholly in view, where a click can reach it.
                "--window-size=800,1400",
                "--remote-debugging-port=0",
            ] + arguments + ["about:blank"],
            // Its temporary files (a singleton socket's directory each run) go with the profile.
            environment: ["TMPDIR": profile.path], standardOutput: .discard, standardError: .discard)
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
                target = (try? JSONDecoder().decode([Target].self, from: Data(list.body.utf8)))?.first { $0.type == "page" && $0.url == "about:blank" }
                if target == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            let socket = try #require(target?.webSocketDebuggerUrl.flatMap(URL.init(string:)), "no page target")
            let (replies, continuation) = AsyncStream<String>.makeStream()
            let reported = NIOLockedValueBox<[String]>([])
            let (channel, _) = try await openWebSocket(port: devTools, group: group, path: socket.path, origin: nil) { channel in
                try channel.pipeline.syncOperations.addHandler(Replies(continuation: continuation, reported: reported))
            }
            let page = DevToolsPage(process: process, profile: profile, channel: channel, replies: replies, reported: reported)
            for domain in ["Runtime", "Log", "Page"] { _ = try await page.call("\(domain).enable", [:]) }
            _ = try await page.call("Page.navigate", ["url": url])
            return page
        } catch {
            process.terminate()
            try? FileManager.default.removeItem(at: profile)
            throw error
        }
    }

    /// Calls a DevTools `method`; returns its result (within 30 seconds, or throws).
    private func call(_ method: String, _ parameters: [String: Any]) async throws -> [String: Any] {
        let id = self.nextID.withLockedValue { value in
            defer { value += 1 }
            return value
        }
        let call: [String: Any] = ["id": id, "method": method, "params": parameters]
        let text = String(decoding: try JSONSerialization.data(withJSONObject: call), as: UTF8.self)
        try await self.channel.writeAndFlush(text)
        let reply = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                for await reply in self.replies {
                    let object = try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any]
                    if object?["id"] as? Int == id { return reply }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let reply, let object = try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] else {
            throw TestClientError.unexpected("\(method): no answer from DevTools")
        }
        if let error = object["error"] { throw TestClientError.unexpected("\(method): \(error)") }
        return object["result"] as? [String: Any] ?? [:]
    }

    /// Evaluates `expression` in the page; returns its value (a string, the expression's
    /// JSON.stringify for anything else).
    func evaluate(_ expression: String) async throws -> String {
        let result = try await self.call("Runtime.evaluate", ["expression": expression, "returnByValue": true])
        let value = (result["result"] as? [String: Any])?["value"]
        return value as? String ?? "\(value ?? "nil")"
    }

    /// Clicks the mouse's left button at `x`, `y` (CSS pixels from the viewport's top left),
    /// as a player would: the browser makes the pointer and mouse events of a real click.
    func click(x: Double, y: Double) async throws {
        for type in ["mousePressed", "mouseReleased"] {
            _ = try await self.call("Input.dispatchMouseEvent", ["type": type, "x": x, "y": y, "button": "left", "clickCount": 1])
        }
    }

    /// Presses and releases the space bar, as a player would: the page gets `keydown` and `keyup`.
    func pressSpace() async throws {
        for type in ["keyDown", "keyUp"] {
            _ = try await self.call(
                "Input.dispatchKeyEvent", ["type": type, "key": " ", "code": "Space", "windowsVirtualKeyCode": 32, "nativeVirtualKeyCode": 32])
        }
    }

    /// Where the element `id` is on the screen: its centre, in CSS pixels from the viewport's top left.
    func centre(of id: String) async throws -> (x: Double, y: Double) {
        struct Rectangle: Decodable { var x, y, width, height: Double }
        let bounds = try await self.evaluate("JSON.stringify(document.getElementById(\(jsonStringLiteral(id))).getBoundingClientRect())")
        let rectangle = try JSONDecoder().decode(Rectangle.self, from: Data(bounds.utf8))
        return (rectangle.x + rectangle.width / 2, rectangle.y + rectangle.height / 2)
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

    /// A test that failed before ``close()`` leaves no browser running.
    deinit {
        if self.process.isRunning { self.process.terminate() }
    }
}

@Suite struct BrowserClientTests {
    /// The page at the web port's `/fourinarow` is a whole native client: in a real browser it joins a
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
        #expect(try await red.ask(.setAlias("Red Rocket")) == .success(.done))
        let created = try #require(
            try await red.response(to: try await red.request(.createMatch(mode: "fourinarow", maxPlayers: 2, label: "", isPrivate: true))).joined)

        // The page's bot joins by the code and plays the middle column; red plays column 0,
        // moving first, so red's fourth disc wins.
        let page = try await DevToolsPage.open("http://127.0.0.1:\(web)/fourinarow?join=\(created.inviteCode)&bot=1", group: group)
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
        // The leaderboard, as the server keeps it, and the player's record: asked again once the game ended.
        let standings = try await red.standingsLines("fourinarow", viewer: try #require(browserPlayer))
        #expect(standings.hasSuffix("2. \(try #require(browserPlayer).prefix(8)) (you) · 1484 · won 0 of 1"), "\(standings)")
        #expect(try await page.waitFor(DevToolsPage.standings, toBe: standings) == standings)
        let record = "You: played 1, won 0, lost 1, drawn 0 · rating 1484 · rank 2"
        #expect(try await page.waitFor("document.getElementById('record').textContent", toBe: record) == record)

        // The players by their aliases (asked of the server); the page's player names itself.
        let yellow = try #require(browserPlayer)
        let names = "JSON.stringify([document.getElementById('player').textContent, document.getElementById('players').textContent])"
        let before = #"["you are \#(yellow.prefix(8))","red: Red Rocket · yellow: \#(yellow.prefix(8)) (you)"]"#
        #expect(try await page.waitFor(names, toBe: before) == before)
        func setName(_ alias: String) async throws {
            let escaped = alias.unicodeScalars.map { $0.isASCII ? String($0) : String(format: "\\u%04X", $0.value) }.joined()
            _ = try await page.evaluate("document.getElementById('alias').value = \"\(escaped)\", document.getElementById('setAlias').click(), 'sent'")
        }
        try await setName("Yellow\u{200B}Jacket")
        let refusal = "an alias may not hold invisible characters, but those that join emoji (it holds U+200B)"
        #expect(try await page.waitFor("document.getElementById('note').textContent", toBe: refusal) == refusal)
        try await setName("Yellow Jacket")
        let after = #"["you are Yellow Jacket","red: Red Rocket · yellow: Yellow Jacket (you)"]"#
        #expect(try await page.waitFor(names, toBe: after) == after)
        guard case .success(.profile(let shown)) = try await red.ask(.getProfile(playerID: yellow)) else {
            throw TestClientError.unexpected("no profile")
        }
        #expect(shown.alias == "Yellow Jacket", "stored, for every other player to see")

        // The operator renames the page's player and locks it: the page says so, and stops offering the change.
        let locked = try await runMatchHostToExit(["rename", yellow, "Player 2", "--lock", "--data", data.path, "--admin-port", "\(try #require(server.adminPort))"])
        #expect(locked.status == 0, "\(locked.stderr)")
        try await setName("Wasp")
        let lockedNote = "the server's operator fixed your alias; it cannot be changed"
        #expect(try await page.waitFor("document.getElementById('note').textContent", toBe: lockedNote) == lockedNote)
        #expect(try await page.evaluate("String(document.getElementById('aliasForm').hidden)") == "true")
        // The header had the name set on the page; it now shows the operator's.
        let renamedHeader = #"["you are Player 2","red: Red Rocket · yellow: Player 2 (you)"]"#
        #expect(try await page.waitFor(names, toBe: renamedHeader) == renamedHeader)
        guard case .success(.profile(let renamed)) = try await red.ask(.getProfile(playerID: yellow)) else {
            throw TestClientError.unexpected("no profile")
        }
        #expect(renamed.alias == "Player 2")
        #expect(page.problems.isEmpty, "\(page.problems)")
        await page.close()
        await red.close()
        await server.stop(with: SIGTERM)
        try await group.shutdownGracefully()
    }
}

@Suite struct BrowserDisksClientTests {
    /// The page at `/disks`, in a real browser, clicked as a player would: its lobby follows the
    /// open games live (a game opened after it subscribed appears, one that ended goes), it
    /// joins one from the list, its clicks on the board are taps where the disks are, it shows
    /// the score and the win, and its quick match meets a player on the TCP port.
    @Test(.enabled(if: HeadlessBrowser.path != nil || HeadlessBrowser.isRequired, "needs chromium (apt install chromium)"))
    func theBrowserClientFollowsTheLobbyAndWinsAGameOfDisksByClicks() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-browser-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        // The host answers no PING: the idle timeout must outlast the wait for the browser to start.
        let server = try await ServeProcess.start(data: data, arguments: ["--idle-timeout", "300", "--disks-score-limit", "3"])
        let web = try #require(server.webPort)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (host, hostLogin) = try await TestNativeConnection.login(port: server.nativePort, group: group, device: "disks-host")
        let page = try await DevToolsPage.open("http://127.0.0.1:\(web)/disks", group: group)
        #expect(try await page.waitFor("document.getElementById('lobby').dataset.live", toBe: "true") == "true")

        // Two games open after the page follows the lobby; one ends (its only player leaves).
        let lobby = "JSON.stringify([...document.querySelectorAll('#lobby li')].map((item) => item.textContent))"
        let alpha = try #require(try await host.ask(.createMatch(mode: "disks", maxPlayers: 2, label: "alpha")).joined)
        let beta = try #require(try await host.ask(.createMatch(mode: "disks", maxPlayers: 3, label: "beta")).joined)
        #expect(try await page.waitFor(lobby, toBe: #"["alpha 1 of 2 Join","beta 1 of 3 Join"]"#) == #"["alpha 1 of 2 Join","beta 1 of 3 Join"]"#)
        _ = try await host.ask(.leaveMatch(alpha.matchID))
        #expect(try await page.waitFor(lobby, toBe: #"["beta 1 of 3 Join"]"#) == #"["beta 1 of 3 Join"]"#)

        // Join from the list: play starts with two players here.
        _ = try await page.evaluate("document.querySelector('#lobby li button').click(), 'clicked'")
        let playing = try await host.nextDisksState(in: beta.matchID) { $0.phase == .playing }
        let browserPlayer = try #require(playing.scores.first { $0.seat == 1 }?.playerID)
        #expect(try await page.waitFor("document.getElementById('board').dataset.phase", toBe: "playing") == "playing")
        #expect(try await page.evaluate("document.getElementById('matchName').textContent") == "Game \(beta.matchID) · beta")

        // Where a board point is on the screen.
        let bounds = try await page.evaluate("JSON.stringify(document.getElementById('board').getBoundingClientRect())")
        struct Rectangle: Decodable { var x, y, width, height: Double }
        let board = try JSONDecoder().decode(Rectangle.self, from: Data(bounds.utf8))
        func click(_ x: UInt16, _ y: UInt16) async throws {
            try await page.click(x: board.x + Double(x) / 1000 * board.width, y: board.y + Double(y) / 1000 * board.height)
        }
        // No disk can be at a corner (every disk lies wholly on the board).
        try await click(10, 10)
        #expect(try await page.waitFor("document.getElementById('note').textContent", toBe: "Missed: no disk there") == "Missed: no disk there")

        // The host taps nothing; the browser clicks each disk as the host sees it spawn, and
        // each click hits the disk clicked (a click elsewhere could hit another by chance).
        var result: DisksGameOver?
        var clicked: [DisksDisk] = []
        var spawned: [UInt32: DisksDisk] = [:]
        var hit: [UInt32] = []
        while result == nil {
            let message = try await host.nextMessage(matching: "an event of beta") { if case .matchEvent(beta.matchID, _) = $0 { true } else { false } }
            guard case .matchEvent(_, let body) = message else { continue }
            switch try DisksServerMessage(body: body) {
            case .tick(let tick):
                #expect(tick.hits.allSatisfy { $0.seat == 1 }, "only the browser taps")
                hit += tick.hits.map(\.diskID)
                for disk in tick.spawned { spawned[disk.id] = disk }
                if let disk = tick.spawned.last {
                    clicked.append(disk)
                    try await click(disk.x, disk.y)
                }
            case .gameOver(let over):
                result = over
            default:
                break
            }
        }
        #expect(result?.reason == .scoreLimit)
        #expect(result?.winners == [1])
        #expect(result?.scores.map(\.score) == [0, 3])
        // The clicks land where the board shows the disks: each disk hit lies under the point of
        // a click (a click mapped wrongly would hit nothing, or a disk nowhere near it). Not
        // necessarily the disk aimed at, nor in click order: a tap hits the newest disk under it,
        // so on a loaded machine a disk spawned over the one clicked, before the click arrives,
        // takes that click, and the click aimed at it may then take the one below; and taps
        // that reach one tick are settled together.
        let whereClicked = hit.allSatisfy { id in
            guard let disk = spawned[id] else { return false }
            return clicked.contains { aim in
                let (dx, dy) = (Int(aim.x) - Int(disk.x), Int(aim.y) - Int(disk.y))
                return dx * dx + dy * dy <= Int(disk.radius) * Int(disk.radius)
            }
        }
        #expect(
            whereClicked && Set(hit).count == 3 && hit.count == 3,
            "hit \(hit), clicked \(clicked.map(\.id)): each disk hit lay under a click")

        // What the player sees.
        let view = """
            JSON.stringify([document.getElementById('status').textContent, document.getElementById('board').dataset.phase,
              [...document.querySelectorAll('#scores li')].map((item) => item.textContent), document.getElementById('leave').textContent])
            """
        let seen = #"["You won (score limit)","over",["\#(hostLogin.playerID.prefix(8)): 0","\#(browserPlayer.prefix(8)) (you): 3"],"Back to the lobby"]"#
        #expect(try await page.waitFor(view, toBe: seen) == seen)

        // Back in the lobby, a code of another game's match: the seat is taken, and the page
        // says where that game is played instead of showing it as Disks.
        let lobbyShown = "String(document.getElementById('gameView').hidden && !document.getElementById('lobbyView').hidden)"
        _ = try await page.evaluate("document.getElementById('leave').click(), 'clicked'")
        #expect(try await page.waitFor(lobbyShown, toBe: "true") == "true")

        // The lobby shows the game's leaderboard as the server keeps it, the win counted, and
        // the player's own record.
        let standings = try await host.standingsLines("disks", viewer: browserPlayer)
        #expect(standings.hasPrefix("1. \(browserPlayer.prefix(8)) (you) · "), "\(standings)")
        #expect(try await page.waitFor(DevToolsPage.standings, toBe: standings) == standings)
        let record = "document.getElementById('record').textContent"
        #expect(try await page.waitFor(record, toBe: "You: played 1, won 1, lost 0, drawn 0 · rating 1516 · rank 1") == "You: played 1, won 1, lost 0, drawn 0 · rating 1516 · rank 1")
        let fourInARow = try #require(try await host.ask(.createMatch(mode: "fourinarow", maxPlayers: 2, label: "", isPrivate: true)).joined)
        _ = try await page.evaluate(
            "document.getElementById('code').value = \(jsonStringLiteral(fourInARow.inviteCode)), document.getElementById('join').click(), 'clicked'")
        let elsewhere = "JSON.stringify([document.getElementById('note').textContent, document.querySelector('#note a')?.getAttribute('href')])"
        let fourInARowNote = #"["You have a seat in a game of Four in a Row: play it there.","/fourinarow"]"#
        #expect(try await page.waitFor(elsewhere, toBe: fourInARowNote) == fourInARowNote)
        #expect(try await page.evaluate(lobbyShown) == "true")

        // Quick match: queued, only cancelling is possible; cancelled; queued again, it meets the
        // host's ticket.
        let quick = "JSON.stringify([document.getElementById('quick').textContent, document.getElementById('create').disabled])"
        _ = try await page.evaluate("document.getElementById('size').value = '2', document.getElementById('quick').click(), 'clicked'")
        #expect(try await page.waitFor(quick, toBe: #"["Cancel quick match",true]"#) == #"["Cancel quick match",true]"#)
        _ = try await page.evaluate("document.getElementById('quick').click(), 'clicked'")
        #expect(try await page.waitFor(quick, toBe: #"["Quick match",false]"#) == #"["Quick match",false]"#)
        _ = try await page.evaluate("document.getElementById('quick').click(), 'clicked'")
        #expect(try await page.waitFor(quick, toBe: #"["Cancel quick match",true]"#) == #"["Cancel quick match",true]"#)
        _ = try await host.ask(.matchmake(NativeTicketRequest(mode: "disks", minPlayers: 2, maxPlayers: 2)))
        let matched = try await host.nextMessage(matching: "MATCHMAKER_MATCHED") { if case .matchmakerMatched = $0 { true } else { false } }
        guard case .matchmakerMatched(_, let match) = matched else { throw TestClientError.unexpected("\(matched)") }
        #expect(Set(match.players.map(\.playerID)) == [hostLogin.playerID, browserPlayer])
        _ = try await host.nextDisksState(in: match.matchID) { $0.phase == .playing }
        #expect(try await page.waitFor("document.getElementById('board').dataset.phase", toBe: "playing") == "playing")

        // A reload is the same player, back in the game; Leave takes it out, back to the lobby.
        _ = try await page.evaluate("location.reload(), 'reloading'")
        func presence(_ change: NativePresenceChange) async throws -> NativeServerMessage {
            try await host.nextMessage(matching: "PRESENCE \(change)") {
                if case .presence(match.matchID, browserPlayer, change, _) = $0 { true } else { false }
            }
        }
        _ = try await presence(.reconnected)
        #expect(try await page.waitFor("document.getElementById('board').dataset.phase", toBe: "playing") == "playing")
        _ = try await page.evaluate("document.getElementById('leave').click(), 'clicked'")
        #expect(try await presence(.left) == .presence(matchID: match.matchID, playerID: browserPlayer, change: .left, reason: .asked))
        #expect(try await page.waitFor(lobbyShown, toBe: "true") == "true")

        #expect(page.problems.isEmpty, "\(page.problems)")
        await page.close()
        await host.close()
        await server.stop(with: SIGTERM)
        try await group.shutdownGracefully()
    }
}

extension DevToolsPage {
    /// The leaderboard a game page shows, a line an entry.
    static let standings = "[...document.querySelectorAll('#leaders li')].map((item) => item.textContent).join('\\n')"
}

extension TestNativeConnection {
    /// The leaderboard of `game` as a page shows it to `viewer` (``DevToolsPage/standings``),
    /// from the server's own GET_LEADERBOARD.
    func standingsLines(_ game: String, viewer: String) async throws -> String {
        guard case .success(.leaderboard(_, let entries)) = try await self.ask(.getLeaderboard(game: game, around: "", limit: 10)) else {
            throw TestClientError.unexpected("no LEADERBOARD")
        }
        return entries.map { entry in
            let name = entry.alias.isEmpty ? String(entry.playerID.prefix(8)) : entry.alias
            return "\(entry.rank). \(name)\(entry.playerID == viewer ? " (you)" : "") · \(Int(entry.rating.rounded())) · won \(entry.won) of \(entry.played)"
        }.joined(separator: "\n")
    }

    /// The next Disks STATE of `matchID` satisfying `predicate`.
    func nextDisksState(in matchID: MatchIdentifier, where predicate: (DisksState) -> Bool) async throws -> DisksState {
        let event = try await self.nextMatchEvent(in: matchID, "a Disks STATE", decode: { try DisksServerMessage(body: $0) }) {
            if case .state(let state) = $0 { predicate(state) } else { false }
        }
        guard case .state(let state) = event else { throw TestClientError.unexpected("\(event)") }
        return state
    }
}
