/// A slowloris: sends one zero byte every 100 ms through `send`, at most `limit` bytes, until a
/// send fails or the task is cancelled. Its value is how many it sent, so that a test can tell
/// a connection closed while the client was still trickling from one closed after it gave up.
func trickleBytes(limit: Int = 60, through send: @escaping @Sendable ([UInt8]) async throws -> Void) -> Task<Int, Never> {
    Task {
        var sent = 0
        while sent < limit {
            do {
                try await Task.sleep(for: .milliseconds(100))
                try await send([0])
            } catch { break }
            sent += 1
        }
        return sent
    }
}
