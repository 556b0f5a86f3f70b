import NIOCore

/// The events of one match adapter waiting to be read, and its readers waiting for them.
/// Confined to the client's event loop, so delivering an event costs no lock and no task.
///
/// The same machinery as `CatRaceNativeInbox`, for any event type.
final class EventInbox<Event: Sendable> {
    private struct Waiter {
        let promise: EventLoopPromise<Event?>
        var timeout: Scheduled<Void>?
    }

    private let eventLoop: any EventLoop
    private let timeoutError: any Error
    private var events = CircularBuffer<Event>()
    private var waiters = CircularBuffer<Waiter>()
    /// How the events ended: `.some(nil)` normally, `.some(error)` on an error.
    private var ending: (any Error)??

    /// - Parameter timeoutError: what a reader whose timeout passes gets.
    init(eventLoop: any EventLoop, timeoutError: any Error) {
        self.eventLoop = eventLoop
        self.timeoutError = timeoutError
    }

    func deliver(_ event: Event) {
        guard self.ending == nil else { return }
        if let waiter = self.waiters.popFirst() {
            waiter.timeout?.cancel()
            waiter.promise.succeed(event)
        } else {
            self.events.append(event)
        }
    }

    func end(_ error: (any Error)?) {
        guard self.ending == nil else { return }
        self.ending = .some(error)
        let waiters = self.waiters
        self.waiters.removeAll()
        for waiter in waiters {
            waiter.timeout?.cancel()
            if let error {
                waiter.promise.fail(error)
            } else {
                waiter.promise.succeed(nil)
            }
        }
    }

    func next(promise: EventLoopPromise<Event?>, timeout: TimeAmount?) {
        if let event = self.events.popFirst() {
            promise.succeed(event)
            return
        }
        if case .some(let error) = self.ending {
            if let error {
                promise.fail(error)
            } else {
                promise.succeed(nil)
            }
            return
        }
        var waiter = Waiter(promise: promise, timeout: nil)
        if let timeout {
            let error = self.timeoutError
            waiter.timeout = self.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
                self.failWaiter(promise, with: error)
            }
        }
        self.waiters.append(waiter)
    }

    /// Fails the waiter holding `promise`, if it is still waiting (a timeout or a cancelled task).
    func failWaiter(_ promise: EventLoopPromise<Event?>, with error: any Error) {
        guard let index = self.waiters.firstIndex(where: { $0.promise.futureResult === promise.futureResult }) else {
            return
        }
        let waiter = self.waiters.remove(at: index)
        waiter.timeout?.cancel()
        waiter.promise.fail(error)
    }
}
