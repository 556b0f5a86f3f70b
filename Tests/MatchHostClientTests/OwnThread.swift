import Foundation

/// Runs `body`, which blocks (on a child process, say), on a thread of its own and waits for it
/// without holding a thread of Swift's cooperative pool: the pool has a thread per core (two
/// in CI), and a test blocked on one slows or stalls every other test's tasks, whose timeouts
/// then run out.
func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
