import Foundation
import Logging

/// Keeps every logged line, for checking what the server said (about a connection it closed,
/// a store that fails), or what a client did before a test failed.
public final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    /// An empty record.
    public init() {}

    /// Keeps `line`.
    public func append(_ line: String) { self.lock.withLock { self.lines.append(line) } }
    /// Every line kept, oldest first.
    public var all: [String] { self.lock.withLock { self.lines } }

    /// A logger whose events (at `info` and above unless its level is changed) are kept here.
    public var logger: Logger {
        Logger(label: "test", factory: { _ in RecordingLogHandler(lines: self) })
    }
}

/// Writes each event into ``LogLines`` as "level message [key=value, …]".
public struct RecordingLogHandler: LogHandler {
    /// Where the lines go.
    public let lines: LogLines
    /// See `LogHandler`.
    public var metadata: Logger.Metadata = [:]
    /// See `LogHandler`.
    public var logLevel: Logger.Level = .info

    /// A handler writing into `lines`.
    public init(lines: LogLines) {
        self.lines = lines
    }

    /// See `LogHandler`.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    /// See `LogHandler`.
    public func log(event: LogEvent) {
        let metadata = self.metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        self.lines.append("\(event.level) \(event.message) [\(fields.joined(separator: ", "))]")
    }
}
