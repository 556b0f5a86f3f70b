import MatchHostWire
import NIOCore

/// The events of one match adapter waiting to be read, and its readers waiting for them.
/// Confined to the client's event loop, so delivering an event costs no lock and no task.
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
    /// Sees each event as it goes to a reader (not when it arrives): what the reader has
    /// seen, for state that must follow it (Four in a Row's next move number).
    var onHandOut: ((Event) -> Void)?

    /// - Parameter timeoutError: what a reader whose timeout passes gets.
    init(eventLoop: any EventLoop, timeoutError: any Error) {
        self.eventLoop = eventLoop
        self.timeoutError = timeoutError
    }

    func deliver(_ event: Event) {
        guard self.ending == nil else { return }
        if let waiter = self.waiters.popFirst() {
            waiter.timeout?.cancel()
            self.handOut(event, to: waiter.promise)
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
            self.handOut(event, to: promise)
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

    private func handOut(_ event: Event, to promise: EventLoopPromise<Event?>) {
        self.onHandOut?(event)
        promise.succeed(event)
    }
}

/// The events of one match, read from a ``MatchHostClient``'s events and converted by a game
/// adapter: one task for the client's life feeds an ``EventInbox`` on the client's loop, and
/// readers wait with a timeout. What every game adapter (Cat Race, Disks, Four in a Row) reads through.
final class MatchEventFeed<Event: Sendable>: Sendable {
    private let client: MatchHostClient
    private let inbox: NIOLoopBoundBox<EventInbox<Event>>

    /// Starts reading `client.events`. An event `convert` maps to nil is skipped; an error it
    /// throws (an undecodable game event) ends the feed with that error and closes the client.
    /// - Parameters:
    ///   - timeoutError: what ``next(timeout:)`` throws when its timeout passes.
    ///   - onHandOut: sees each event as a reader gets it, on the client's loop.
    init(
        client: MatchHostClient, matchID: MatchIdentifier, timeoutError: any Error & Sendable,
        onHandOut: @escaping @Sendable (Event) -> Void = { _ in },
        convert: @escaping @Sendable (MatchHostClient.Event, MatchIdentifier) throws -> Event?
    ) {
        self.client = client
        let eventLoop = client.eventLoop
        let events = EventInbox<Event>(eventLoop: eventLoop, timeoutError: timeoutError)
        events.onHandOut = onHandOut
        let inbox = NIOLoopBoundBox.makeBoxSendingValue(events, eventLoop: eventLoop)
        self.inbox = inbox
        // One task for the life of the client; it ends when the client's events finish.
        Task {
            do {
                for try await event in client.events {
                    let converted: Event?
                    do {
                        converted = try convert(event, matchID)
                    } catch {
                        eventLoop.execute { inbox.value.end(error) }
                        await client.close()
                        return
                    }
                    if let converted { eventLoop.execute { inbox.value.deliver(converted) } }
                }
                eventLoop.execute { inbox.value.end(nil) }
            } catch {
                eventLoop.execute { inbox.value.end(error) }
            }
        }
    }

    /// The next event; nil once the events ended normally. Throws the timeout error, the
    /// error the events ended with, or `CancellationError`.
    func next(timeout: Duration?) async throws -> Event? {
        let loop = self.client.eventLoop
        let inbox = self.inbox
        let promise = loop.makePromise(of: Event?.self)
        let amount = timeout.map { CatRaceClient.timeAmount($0) }
        loop.execute { inbox.value.next(promise: promise, timeout: amount) }
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            loop.execute { inbox.value.failWaiter(promise, with: CancellationError()) }
        }
    }
}
