import NIOCore
import NIOPosix

/// SplitMix64: a small seeded generator, so that a failing run can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A TCP proxy on 127.0.0.1 that forwards bytes both ways between its clients and a server, and
/// on request cuts connections (both sides) after a random number of forwarded bytes, mid-frame
/// as often as not, refuses new connections, or holds them.
final class TestProxy: Sendable {
    /// The port clients connect to.
    let port: Int
    private let eventLoop: any EventLoop
    private let serverChannel: any Channel
    private let state: NIOLoopBoundBox<ProxyState>

    private init(port: Int, eventLoop: any EventLoop, serverChannel: any Channel, state: NIOLoopBoundBox<ProxyState>) {
        self.port = port
        self.eventLoop = eventLoop
        self.serverChannel = serverChannel
        self.state = state
    }

    /// Starts a proxy in front of `127.0.0.1:targetPort`.
    static func start(to targetPort: Int) async throws -> TestProxy {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let state = NIOLoopBoundBox.makeBoxSendingValue(ProxyState(targetPort: targetPort), eventLoop: eventLoop)
        let serverChannel = try await ServerBootstrap(group: eventLoop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { inbound in
                let proxy = state.value
                guard proxy.accepting else {
                    return inbound.close()
                }
                if proxy.holding {
                    proxy.held.append(inbound)
                    return inbound.eventLoop.makeSucceededVoidFuture()
                }
                return proxy.connect(inbound)
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return TestProxy(port: serverChannel.localAddress!.port!, eventLoop: eventLoop, serverChannel: serverChannel, state: state)
    }

    /// From now on, cuts the connections `times` times, each after a number of forwarded bytes
    /// (both directions counted) drawn from `bytesBetweenCuts` with a generator seeded by `seed`.
    func startCutting(times: Int, seed: UInt64, bytesBetweenCuts: ClosedRange<Int>) async throws {
        let state = self.state
        try await self.eventLoop.submit {
            let proxy = state.value
            proxy.generator = SeededGenerator(seed: seed)
            proxy.range = bytesBetweenCuts
            proxy.cutsLeft = times
            proxy.bytesUntilCut = Int.random(in: bytesBetweenCuts, using: &proxy.generator)
        }.get()
    }

    /// How many cuts have been made so far.
    func cutsMade() async throws -> Int {
        let state = self.state
        return try await self.eventLoop.submit { state.value.cutsMade }.get()
    }

    /// Whether new connections are forwarded (true) or closed at once (false).
    func setAccepting(_ accepting: Bool) async throws {
        let state = self.state
        try await self.eventLoop.submit { state.value.accepting = accepting }.get()
    }

    /// Whether new connections are held: accepted, then neither forwarded nor answered, as a
    /// server that hangs would, so that a client's attempt stays under way. Ending the hold
    /// closes the held connections.
    func setHolding(_ holding: Bool) async throws {
        let state = self.state
        try await self.eventLoop.submit {
            let proxy = state.value
            proxy.holding = holding
            if !holding {
                for connection in proxy.held { connection.close(promise: nil) }
                proxy.held.removeAll()
            }
        }.get()
    }

    /// Ends the hold, forwarding the held connections to the server (what their clients sent
    /// meanwhile arrives there now), where ``setHolding(_:)`` closes them.
    func releaseHeld() async throws {
        let state = self.state
        try await self.eventLoop.submit {
            let proxy = state.value
            proxy.holding = false
            for connection in proxy.held { proxy.connect(connection).whenFailure { _ in connection.close(promise: nil) } }
            proxy.held.removeAll()
        }.get()
    }

    /// Sends new connections to `127.0.0.1:port` from now on (open ones stay where they are).
    func retarget(to port: Int) async throws {
        let state = self.state
        try await self.eventLoop.submit { state.value.retarget(to: port) }.get()
    }

    /// Whether the proxy swallows every byte (and every close) instead of forwarding it, as a
    /// network that silently stopped delivering would.
    func setFrozen(_ frozen: Bool) async throws {
        let state = self.state
        try await self.eventLoop.submit { state.value.frozen = frozen }.get()
    }

    /// Stops listening (open connections stay).
    func stop() async {
        try? await self.serverChannel.close()
    }
}

/// What the proxy's handlers share; confined to the proxy's event loop.
private final class ProxyState {
    private(set) var targetPort: Int
    var accepting = true
    var holding = false
    var held: [any Channel] = []
    var frozen = false
    var cutsLeft = 0
    var cutsMade = 0
    var bytesUntilCut = 0
    var range = 1...1
    var generator = SeededGenerator(seed: 0)

    init(targetPort: Int) {
        self.targetPort = targetPort
    }

    /// Where new connections go: a server restarted on another port is the same address to clients.
    func retarget(to port: Int) { self.targetPort = port }

    /// Connects `inbound` (not reading yet) to the server, and forwards both ways once connected.
    func connect(_ inbound: any Channel) -> EventLoopFuture<Void> {
        let inboundHalf = ProxyHalf(proxy: self)
        do {
            try inbound.pipeline.syncOperations.addHandler(inboundHalf)
        } catch {
            return inbound.eventLoop.makeFailedFuture(error)
        }
        let proxy = NIOLoopBound(self, eventLoop: inbound.eventLoop)
        ClientBootstrap(group: inbound.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { outbound in
                outbound.eventLoop.makeCompletedFuture {
                    let half = ProxyHalf(proxy: proxy.value)
                    half.partner = inbound
                    try outbound.pipeline.syncOperations.addHandler(half)
                }
            }
            .connect(host: "127.0.0.1", port: self.targetPort)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let outbound):
                    inboundHalf.partner = outbound
                    inbound.setOption(.autoRead, value: true).whenFailure { _ in inbound.close(promise: nil) }
                case .failure:
                    inbound.close(promise: nil)
                }
            }
        return inbound.eventLoop.makeSucceededVoidFuture()
    }

    /// Forwards `bytes` from `source` to `destination`, or cuts both if the cut point is in them.
    func forward(_ bytes: ByteBuffer, from source: any Channel, to destination: any Channel) {
        if self.frozen { return }
        guard self.cutsLeft > 0, bytes.readableBytes >= self.bytesUntilCut else {
            if self.cutsLeft > 0 { self.bytesUntilCut -= bytes.readableBytes }
            destination.writeAndFlush(bytes, promise: nil)
            return
        }
        var bytes = bytes
        let prefix = bytes.readSlice(length: self.bytesUntilCut)!
        self.cutsLeft -= 1
        self.cutsMade += 1
        self.bytesUntilCut = Int.random(in: self.range, using: &self.generator)
        source.close(promise: nil)
        destination.writeAndFlush(prefix).whenComplete { _ in destination.close(promise: nil) }
    }
}

/// One direction of a proxied connection: what its channel reads goes to its partner.
private final class ProxyHalf: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    var partner: (any Channel)?
    private let proxy: ProxyState

    init(proxy: ProxyState) {
        self.proxy = proxy
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let partner = self.partner else {
            context.close(promise: nil)
            return
        }
        self.proxy.forward(self.unwrapInboundIn(data), from: context.channel, to: partner)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !self.proxy.frozen { self.partner?.close(promise: nil) }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
