import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs work on an event loop right after the loop's next poll of its sockets.
///
/// NIO has no "after the next poll" hook: a task that is due runs before the loop polls
/// again, however long the loop has been busy. The doorbell is a pipe registered on the loop;
/// ringing it writes a byte, and the byte is read, with every other readable socket, when the
/// loop next polls. That is where the waiting work runs. ``EventLoopClock`` hands it its
/// overdue timers, so that matches whose ticks overload the loop slow down instead of
/// starving every connection's reads.
final class IOPassDoorbell {
    private let eventLoop: any EventLoop
    private var channel: (any Channel)?
    private var waiting: [() -> Void] = []
    private var answering: [() -> Void] = []
    private var isRinging = false

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Opens the pipe on `loop`.
    static func open(on loop: any EventLoop) async throws -> NIOLoopBound<IOPassDoorbell> {
        var descriptors: [CInt] = [0, 0]
        guard pipe(&descriptors) == 0 else {
            throw IOError(errnoCode: errno, reason: "pipe")
        }
        let channel = try await NIOPipeBootstrap(group: loop)
            .takingOwnershipOfDescriptors(input: descriptors[0], output: descriptors[1])
            .get()
        return try await loop.submit {
            let doorbell = IOPassDoorbell(eventLoop: loop)
            doorbell.channel = channel
            try channel.pipeline.syncOperations.addHandler(Answerer(doorbell: doorbell))
            return NIOLoopBound(doorbell, eventLoop: loop)
        }.get()
    }

    /// Runs `body` after the loop's next poll; call on the loop.
    func afterNextPoll(_ body: @escaping () -> Void) {
        self.waiting.append(body)
        guard !self.isRinging else { return }
        self.isRinging = true
        guard let channel = self.channel, channel.isActive else {
            // Closed (the server is stopping): fall back to a short wait.
            return self.answerSoon()
        }
        var byte = channel.allocator.buffer(capacity: 1)
        byte.writeInteger(UInt8(1))
        let written = channel.eventLoop.makePromise(of: Void.self)
        // A byte that could not be written is never read: the wait falls back as when closed.
        written.futureResult.assumeIsolated().whenFailure { _ in self.answerSoon() }
        channel.writeAndFlush(byte, promise: written)
    }

    /// Closes the pipe; a ring whose byte it may never read now is answered after a short wait.
    func close() {
        self.channel?.close(promise: nil)
        self.channel = nil
        if self.isRinging { self.answerSoon() }
    }

    private func answerSoon() {
        self.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(1)) {
            guard self.isRinging else { return }
            self.answer()
        }
    }

    fileprivate func answer() {
        self.isRinging = false
        // Swap so work queued by the answered bodies waits for the following poll.
        swap(&self.waiting, &self.answering)
        for body in self.answering { body() }
        self.answering.removeAll(keepingCapacity: true)
    }

    private final class Answerer: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let doorbell: IOPassDoorbell  // a cycle the pipeline breaks when the pipe closes

        init(doorbell: IOPassDoorbell) {
            self.doorbell = doorbell
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            self.doorbell.answer()
        }
    }
}
