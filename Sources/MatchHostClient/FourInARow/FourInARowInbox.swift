import MatchHostWire
import NIOCore

/// The events of one ``FourInARowClient`` waiting to be read, its readers waiting for them,
/// and the number of the next move on the board as read so far. Confined to the client's
/// event loop.
final class FourInARowInbox {
    private struct Waiter {
        let promise: EventLoopPromise<FourInARowEvent?>
        var timeout: Scheduled<Void>?
    }

    private let eventLoop: any EventLoop
    private var events = CircularBuffer<FourInARowEvent>()
    private var waiters = CircularBuffer<Waiter>()
    /// How the events ended: `.some(nil)` normally, `.some(error)` on an error.
    private var ending: (any Error)??
    /// The number the next MOVE carries: from the STATE and MOVED messages handed to the
    /// reader, so that a move is meant for the board the player has seen.
    private(set) var nextMoveNumber: UInt16 = 1

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func deliver(_ event: FourInARowEvent) {
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

    func next(promise: EventLoopPromise<FourInARowEvent?>, timeout: TimeAmount?) {
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
            waiter.timeout = self.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
                self.failWaiter(promise, with: FourInARowClientError.timedOut)
            }
        }
        self.waiters.append(waiter)
    }

    /// Fails the waiter holding `promise`, if it is still waiting (a timeout or a cancelled task).
    func failWaiter(_ promise: EventLoopPromise<FourInARowEvent?>, with error: any Error) {
        guard let index = self.waiters.firstIndex(where: { $0.promise.futureResult === promise.futureResult }) else {
            return
        }
        let waiter = self.waiters.remove(at: index)
        waiter.timeout?.cancel()
        waiter.promise.fail(error)
    }

    private func handOut(_ event: FourInARowEvent, to promise: EventLoopPromise<FourInARowEvent?>) {
        switch event {
        case .message(.state(let snapshot)):
            self.nextMoveNumber = snapshot.moveNumber
        case .message(.moved(let moved)) where moved.moveNumber >= self.nextMoveNumber:
            self.nextMoveNumber = moved.moveNumber &+ 1
        default:
            break
        }
        promise.succeed(event)
    }
}
