import Foundation
import Logging

/// Keeps every logged line, for checking what the server said (about a connection it closed,
/// a store that fails).
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) { self.lock.withLock { self.lines.append(line) } }
    var all: [String] { self.lock.withLock { self.lines } }

    var logger: Logger {
        Logger(label: "test", factory: { _ in RecordingLogHandler(lines: self) })
    }
}

/// Writes each event into ``LogLines`` as "level message [key=value, …]".
struct RecordingLogHandler: LogHandler {
    let lines: LogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let metadata = self.metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        self.lines.append("\(event.level) \(event.message) [\(fields.joined(separator: ", "))]")
    }
}
