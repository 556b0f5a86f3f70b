import MatchHostWire
import NIOCore

/// The whole pipeline of a ``CatRaceClient`` connection: framing, decoding, a bounded inbox
/// read by `next`, and a bounded queue of sends held while the channel is not writable.
///
/// Loop-confined: every method is called on the channel's event loop.
final class CatRaceClientHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// How the connection ended, once it has.
    private enum Ending {
        case closed
        case failed(CatRaceClientError)
    }

    private struct Waiter {
        var promise: EventLoopPromise<CatRaceServerMessage?>
        var timeout: Scheduled<Void>?
    }

    private struct PendingSend {
        var frame: ByteBuffer
        var promise: EventLoopPromise<Void>
    }

    private let eventLoop: any EventLoop
    private let maxBufferedMessages: Int
    private let maxPendingSends: Int
    private var frames: FrameAccumulator
    private var context: ChannelHandlerContext?

    private var inbox = CircularBuffer<CatRaceServerMessage>()
    private var waiters = CircularBuffer<Waiter>()
    private var ending: Ending?
    /// A `read` held back because the inbox is full; issued once the consumer catches up.
    private var readHeld = false

    private var pendingSends = CircularBuffer<PendingSend>()

    init(eventLoop: any EventLoop, maxFrameBytes: Int, maxBufferedMessages: Int, maxPendingSends: Int) {
        self.eventLoop = eventLoop
        self.frames = FrameAccumulator(maximumBodySize: maxFrameBytes)
        self.maxBufferedMessages = max(1, maxBufferedMessages)
        self.maxPendingSends = max(0, maxPendingSends)
    }

    // MARK: Pipeline events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.end(.closed)
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard self.ending == nil else { return }
        var bytes = Self.unwrapInboundIn(data)
        self.frames.append(&bytes)
        do {
            while let body = try self.frames.nextFrame() {
                self.deliver(try CatRaceServerMessage(frameBody: body))
            }
        } catch let error as WireError {
            self.frames.reset()
            self.end(.failed(.badMessage(error)))
            context.close(promise: nil)
        } catch {
            self.frames.reset()
            self.end(.failed(.io(String(describing: error))))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.end(.closed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.end(.failed(.io(String(describing: error))))
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            self.drainPendingSends()
        }
        context.fireChannelWritabilityChanged()
    }

    /// Inbound backpressure: no more reads from the socket while the inbox is full.
    func read(context: ChannelHandlerContext) {
        if self.inbox.count >= self.maxBufferedMessages {
            self.readHeld = true
        } else {
            context.read()
        }
    }

    // MARK: Receiving

    private func deliver(_ message: CatRaceServerMessage) {
        if let waiter = self.waiters.popFirst() {
            waiter.timeout?.cancel()
            waiter.promise.succeed(message)
        } else {
            self.inbox.append(message)
        }
    }

    /// Registers `promise` for the next message: completed at once if one is buffered, with
    /// `nil` once the connection has closed and everything received was read, or failed with
    /// ``CatRaceClientError/timedOut`` after `timeout`.
    func next(promise: EventLoopPromise<CatRaceServerMessage?>, timeout: TimeAmount?) {
        if let message = self.inbox.popFirst() {
            self.resumeReadingIfDrained()
            promise.succeed(message)
            return
        }
        switch self.ending {
        case .closed?:
            promise.succeed(nil)
            return
        case .failed(let error)?:
            promise.fail(error)
            return
        case nil:
            break
        }
        var waiter = Waiter(promise: promise, timeout: nil)
        if let timeout {
            waiter.timeout = self.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
                self.failWaiter(promise, with: CatRaceClientError.timedOut)
            }
        }
        self.waiters.append(waiter)
    }

    /// Fails the waiter holding `promise`, if it is still waiting (a timeout or a cancelled task).
    func failWaiter(_ promise: EventLoopPromise<CatRaceServerMessage?>, with error: any Error) {
        guard let index = self.waiters.firstIndex(where: { $0.promise.futureResult === promise.futureResult }) else {
            return
        }
        let waiter = self.waiters.remove(at: index)
        waiter.timeout?.cancel()
        waiter.promise.fail(error)
    }

    private func resumeReadingIfDrained() {
        guard self.readHeld, self.inbox.count <= self.maxBufferedMessages / 2, let context = self.context else { return }
        self.readHeld = false
        context.read()
    }

    // MARK: Sending

    /// Queues one encoded frame. It goes to the channel at once if the channel is writable
    /// and nothing is queued before it; otherwise it waits (at most `maxPendingSends` may
    /// wait). `promise` succeeds when the frame has been handed to the channel.
    func send(_ frame: ByteBuffer, promise: EventLoopPromise<Void>) {
        guard self.ending == nil, let context = self.context else {
            promise.fail(self.endingError)
            return
        }
        if self.pendingSends.isEmpty, context.channel.isWritable {
            context.writeAndFlush(Self.wrapOutboundOut(frame), promise: nil)
            promise.succeed()
            return
        }
        guard self.pendingSends.count < self.maxPendingSends else {
            promise.fail(CatRaceClientError.outboundQueueFull(limit: self.maxPendingSends))
            return
        }
        self.pendingSends.append(PendingSend(frame: frame, promise: promise))
    }

    /// Withdraws a send still waiting for writability (its task was cancelled).
    func cancelSend(_ promise: EventLoopPromise<Void>) {
        guard let index = self.pendingSends.firstIndex(where: { $0.promise.futureResult === promise.futureResult }) else {
            return
        }
        self.pendingSends.remove(at: index).promise.fail(CancellationError())
    }

    private func drainPendingSends() {
        guard let context = self.context else { return }
        var wrote = false
        while context.channel.isWritable, let pending = self.pendingSends.popFirst() {
            context.write(Self.wrapOutboundOut(pending.frame), promise: nil)
            wrote = true
            pending.promise.succeed()
        }
        if wrote {
            context.flush()
        }
    }

    // MARK: Ending

    private var endingError: CatRaceClientError {
        if case .failed(let error)? = self.ending { return error }
        return .connectionClosed
    }

    /// Records how the connection ended (the first reason wins) and releases everyone waiting.
    /// Messages already in the inbox can still be read.
    private func end(_ ending: Ending) {
        guard self.ending == nil else { return }
        self.ending = ending
        let waiters = self.waiters
        self.waiters.removeAll()
        for waiter in waiters {
            waiter.timeout?.cancel()
            switch ending {
            case .closed: waiter.promise.succeed(nil)
            case .failed(let error): waiter.promise.fail(error)
            }
        }
        let sends = self.pendingSends
        self.pendingSends.removeAll()
        let error = self.endingError
        for send in sends {
            send.promise.fail(error)
        }
    }
}
