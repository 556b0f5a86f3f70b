import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A port of the server could not be bound: it is taken, or `--host` is not this machine's.
/// `matchhost serve` prints its description as its one line and exits 2.
public struct PortBindError: Error, CustomStringConvertible {
    /// The port's name, as the log and the "listening on" line say it: `catrace`, `native`,
    /// `web` or `admin`.
    public var port: String
    /// The address it was to listen on.
    public var host: String
    /// The port number asked for.
    public var number: Int
    /// What to do about it: the flag that moves the port, and the one that turns it off if any.
    public var remedy: String
    /// What binding said.
    public var reason: String

    /// Creates the error for `error`, thrown by binding `port` on `host`:`number`.
    public init(port: String, host: String, number: Int, remedy: String, error: any Error) {
        self.port = port
        self.host = host
        self.number = number
        self.remedy = remedy
        self.reason = Self.reason(of: error)
    }

    /// The one line `serve` prints.
    public var description: String {
        "cannot serve the \(self.port) port on \(self.host):\(self.number) (\(self.reason)); \(self.remedy)"
    }

    /// The system's words for an `IOError` ("Address already in use"), which its own
    /// description buries in the name of the call; any other error as it describes itself.
    static func reason(of error: any Error) -> String {
        guard let error = error as? IOError else { return "\(error)" }
        return "\(String(cString: strerror(error.errnoCode))), errno \(error.errnoCode)"
    }
}
