import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A port of the server could not be bound: it is taken, the port needs privileges, or the
/// host is not this machine's. `matchhost serve` prints its description as its one line and
/// exits 2.
public struct PortBindError: Error, CustomStringConvertible {
    /// The port's name, as the log and the "listening on" line say it: `catrace`, `native`,
    /// `web` or `admin`.
    public var port: String
    /// The address it was to listen on.
    public var host: String
    /// The port number asked for.
    public var number: Int
    /// What to do about it, for what went wrong: the flag that moves the port (and the one that
    /// turns it off, if any) when the port is taken, the host flag when the host is wrong.
    public var remedy: String
    /// What binding said.
    public var reason: String

    /// Creates the error for `error`, thrown by binding `port` on `host`:`number`.
    /// - Parameters:
    ///   - hostFlag: the flag that set `host` (`--host`, `--admin-host`).
    ///   - portFlag: the flag that sets the port.
    ///   - offFlag: the flag that turns the port off, if it can be.
    public init(port: String, host: String, hostFlag: String, number: Int, portFlag: String, offFlag: String? = nil, error: any Error) {
        self.port = port
        self.host = host
        self.number = number
        self.reason = Self.reason(of: error)
        self.remedy = Self.remedy(for: error, host: host, hostFlag: hostFlag, number: number, portFlag: portFlag, offFlag: offFlag)
    }

    /// The one line `serve` prints.
    public var description: String {
        "cannot serve the \(self.port) port on \(self.host):\(self.number) (\(self.reason)); \(self.remedy)"
    }

    /// The system's words for an `IOError` ("Address already in use"), which its own
    /// description buries in the name of the call; a name that does not resolve as the
    /// resolver says it; any other error as it describes itself.
    static func reason(of error: any Error) -> String {
        if let error = error as? IOError {
            return "\(String(cString: strerror(error.errnoCode))), errno \(error.errnoCode)"
        }
        if let error = error as? SocketAddressError.UnknownHost {
            return "no address for this name: \(error.errorDescription)"
        }
        return "\(error)"
    }

    /// Another port helps only when this one is taken or privileged; a host that is not this
    /// machine's needs another host, whatever the port.
    static func remedy(for error: any Error, host: String, hostFlag: String, number: Int, portFlag: String, offFlag: String?) -> String {
        let anotherPort = "choose another \(portFlag)" + (offFlag.map { ", or pass \($0)" } ?? "")
        if error is SocketAddressError.UnknownHost {
            return "give \(hostFlag) an address or name of this machine (0.0.0.0 for all of its addresses)"
        }
        guard let error = error as? IOError else { return anotherPort }
        switch error.errnoCode {
        case EADDRNOTAVAIL:
            return "\(host) is not an address of this machine: give \(hostFlag) one of its addresses (0.0.0.0 for all of them)"
        case EACCES where (1..<1024).contains(number):
            #if os(Linux)
            return "ports below 1024 need root or CAP_NET_BIND_SERVICE; \(anotherPort)"
            #else
            return "ports below 1024 need root; \(anotherPort)"
            #endif
        default:
            return anotherPort
        }
    }
}
