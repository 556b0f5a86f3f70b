#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
@testable import MatchHostClient
import MatchHostServer
import MatchHostWire
import NIOCore
import NIOPosix
import Testing

/// A condition was not met in time.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(self.what)" }
}

/// Runs `body`, failing with ``TimedOut`` after `seconds`.
func withTimeout<Result: Sendable>(
    _ seconds: Double = 10, _ what: String = "a result", _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw TimedOut(what: what)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// Collects what an async sequence produces, so that a test can wait for elements matching a
/// condition (with a timeout) from any task, in any order.
actor Recorder<Element: Sendable> {
    private typealias Waiter = (predicate: @Sendable (Element) -> Bool, continuation: CheckedContinuation<Element, any Error>)
    private var buffer: [Element] = []
    private var finished: (any Error)?? = nil
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0

    /// Records `sequence` from a task of its own.
    init<Sequence: AsyncSequence & Sendable>(_ sequence: Sequence) where Sequence.Element == Element {
        Task {
            do {
                for try await element in sequence { await self.append(element) }
                await self.finish(nil)
            } catch {
                await self.finish(error)
            }
        }
    }

    private func append(_ element: Element) {
        for id in self.waiters.keys.sorted() where self.waiters[id]!.predicate(element) {
            self.waiters.removeValue(forKey: id)!.continuation.resume(returning: element)
            return
        }
        self.buffer.append(element)
    }

    private func finish(_ error: (any Error)?) {
        self.finished = .some(error)
        let waiters = self.waiters
        self.waiters.removeAll()
        for waiter in waiters.values {
            waiter.continuation.resume(throwing: error ?? TimedOut(what: "an element (the sequence finished)"))
        }
    }

    /// How the sequence ended, if it has: `.some(nil)` normally, `.some(error)` by throwing.
    var ending: (any Error)?? { self.finished }

    /// Removes and returns every recorded element not yet taken.
    func takeAll() -> [Element] {
        defer { self.buffer.removeAll() }
        return self.buffer
    }

    /// Removes and returns the first element (recorded or to come) matching `predicate`.
    func next(
        _ what: String = "an element", timeout seconds: Double = 10,
        where predicate: @escaping @Sendable (Element) -> Bool = { _ in true }
    ) async throws -> Element {
        if let index = self.buffer.firstIndex(where: predicate) {
            return self.buffer.remove(at: index)
        }
        if case .some(let error) = self.finished {
            throw error ?? TimedOut(what: "\(what) (the sequence finished)")
        }
        let id = self.nextWaiter
        self.nextWaiter += 1
        let timer = Task {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            self.expire(id, what)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            self.waiters[id] = (predicate, continuation)
        }
    }

    private func expire(_ id: Int, _ what: String) {
        self.waiters.removeValue(forKey: id)?.continuation.resume(throwing: TimedOut(what: what))
    }
}

/// A native server on 127.0.0.1 with a free port, for one test.
struct TestServer {
    let listener: NativeListener
    let configuration: ServerConfiguration
    var port: Int { self.listener.localAddress.port! }

    static func start(logger: Logger? = nil, _ adjust: (inout ServerConfiguration) -> Void = { _ in }) async throws -> TestServer {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.catRacePort = 0
        // The tests send hundreds of messages as fast as they can.
        configuration.maxMessageRate = 1_000_000
        adjust(&configuration)
        let logger = logger ?? {
            var logger = Logger(label: "test.server")
            logger.logLevel = .error
            return logger
        }()
        let listener = try await NativeListener.bind(
            configuration: configuration, group: MultiThreadedEventLoopGroup.singleton, logger: logger)
        return TestServer(listener: listener, configuration: configuration)
    }

    func stop() async {
        await self.listener.close()
    }
}

/// A fresh device id.
func newDeviceID() -> String {
    "device-" + (0..<16).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
}

/// Makes a request of `client` from a new task and returns that task once the client holds the
/// request (waiting for its answer). A task may start late on a loaded machine; a test that means
/// "asked while the server is away" must not find the request made after the server is back.
func requestMadeNow<Result: Sendable>(
    of client: MatchHostClient, _ request: @escaping @Sendable () async throws -> Result
) async throws -> Task<Result, any Error> {
    let before = await client.waitingRequestCount
    let ended = RequestEnding()
    let task = Task {
        do {
            let result = try await request()
            await ended.record(nil)
            return result
        } catch {
            await ended.record(error)
            throw error
        }
    }
    try await withTimeout(10, "the request to reach the client") {
        while await client.waitingRequestCount <= before {
            // Answered or refused at once (the client closed, say): not what the test means.
            if case .some(let error) = await ended.ending {
                throw RequestNotHeld(error: error)
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
    return task
}

/// How a request made by ``requestMadeNow(of:_:)`` ended, once it has.
private actor RequestEnding {
    private(set) var ending: (any Error)?? = nil
    func record(_ error: (any Error)?) { self.ending = .some(error) }
}

/// A request ended before the client held it waiting for an answer.
struct RequestNotHeld: Error, CustomStringConvertible {
    let error: (any Error)?
    var description: String { "the request ended before the client held it: \(self.error.map { "\($0)" } ?? "answered")" }
}

/// A client of `port` with test-friendly timing.
func makeClient(
    port: Int, credentials: NativeCredentials = .device(id: newDeviceID(), secret: ""), gameID: String = "matchhost",
    logger: Logger? = nil, _ adjust: (inout MatchHostClient.Configuration) -> Void = { _ in }
) -> MatchHostClient {
    var configuration = MatchHostClient.Configuration(host: "127.0.0.1", port: port, gameID: gameID, credentials: credentials)
    configuration.reconnectPolicy = .init(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(100))
    configuration.requestTimeout = .seconds(10)
    adjust(&configuration)
    let logger = logger ?? {
        var logger = Logger(label: "test.client")
        logger.logLevel = .error
        return logger
    }()
    return MatchHostClient(configuration: configuration, logger: logger)
}

/// Expects `body` to throw a ``NativeError`` with `code`.
func expectNativeError(
    _ code: NativeErrorCode, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as NativeError {
        #expect(error.code == code, sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

extension MatchHostClient.Event {
    /// The payload of a `matchData` event.
    var payload: ByteBuffer? {
        if case .matchData(_, _, let payload, _) = self { return payload }
        return nil
    }

    /// Whether this is presence `change` of `player`.
    func isPresence(_ change: NativePresenceChange, of player: String) -> Bool {
        if case .presence(_, player, change, _) = self { return true }
        return false
    }

    /// Whether this is match data.
    var isMatchData: Bool { self.payload != nil }
}

/// A numbered payload: a 4-byte number and filler bytes.
func numbered(_ number: Int, filler: Int = 0) -> ByteBuffer {
    var buffer = ByteBuffer()
    buffer.writeInteger(UInt32(number), endianness: .big)
    buffer.writeRepeatingByte(0x5A, count: filler)
    return buffer
}

/// The number of a ``numbered(_:filler:)`` payload.
func number(of payload: ByteBuffer) -> Int? {
    payload.getInteger(at: payload.readerIndex, endianness: .big, as: UInt32.self).map(Int.init)
}

/// A raw TCP connection to a native server, for what the client library will not send.
enum RawNativeConnection {
    /// Sends `frames`, then reads frames until the server closes (or `timeout`), and returns them.
    static func exchange(port: Int, sending frames: [NativeFrame], timeout: Double = 10) async throws -> [NativeFrame] {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await withTimeout(timeout, "the server to close the raw connection") {
            try await channel.executeThenClose { inbound, outbound in
                for frame in frames {
                    try await outbound.write(frame.encodedFrame())
                }
                var accumulator = FrameAccumulator()
                var received: [NativeFrame] = []
                for try await var bytes in inbound {
                    accumulator.append(&bytes)
                    while let body = try accumulator.nextFrame() {
                        received.append(try NativeFrame(frameBody: body))
                    }
                }
                return received
            }
        }
    }
}

/// Reads `events` in arrival order, skipping what comes before the first element matching
/// `predicate`, and returns that element.
func nextInOrder(
    _ events: Recorder<MatchHostClient.Event>, _ what: String, timeout: Double = 20,
    where predicate: @escaping @Sendable (MatchHostClient.Event) -> Bool
) async throws -> MatchHostClient.Event {
    for _ in 0..<1000 {
        let event = try await events.next(what, timeout: timeout)
        if predicate(event) { return event }
    }
    throw TimedOut(what: "\(what) within 1000 events")
}

extension MatchHostClient.Event {
    /// Whether this is PRESENCE, which may come between a session's other events.
    var isPresenceEvent: Bool {
        if case .presence = self { return true }
        return false
    }

    /// Whether this is a game's MATCH_EVENT (a move, a tick), which may still be arriving
    /// when something else happens.
    var isMatchEvent: Bool {
        if case .matchEvent = self { return true }
        return false
    }
}

/// A loopback TCP port bound by a socket that never listens: a connection to it is refused
/// at once, for as long as the socket is open.
struct RefusingPort {
    let port: Int
    private let descriptor: Int32

    init() throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw TestSocketError(call: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(fd, generic, length) == 0 && getsockname(fd, generic, &length) == 0
            }
        }
        guard bound else {
            _ = closeDescriptor(fd)
            throw TestSocketError(call: "bind")
        }
        self.descriptor = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func release() { _ = closeDescriptor(self.descriptor) }
}

/// The C library's close(2), which ``RefusingPort``'s own members would shadow.
private func closeDescriptor(_ descriptor: Int32) -> Int32 { close(descriptor) }

struct TestSocketError: Error {
    var call: String
}
