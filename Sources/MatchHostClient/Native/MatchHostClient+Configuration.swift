import MatchHostWire
import NIOCore

extension MatchHostClient {
    /// Everything a ``MatchHostClient`` needs to know before it connects.
    ///
    /// Only ``host`` and ``credentials`` have no default:
    ///
    /// ```swift
    /// var configuration = MatchHostClient.Configuration(
    ///     host: "games.example.com", credentials: .device(id: deviceID, secret: storedSecret))
    /// configuration.gameID = "my-game"
    /// ```
    public struct Configuration: Sendable, Hashable {
        /// The server's host name or IP address.
        public var host: String
        /// The server's native-protocol port (the server's `--port`, default 7355).
        public var port: Int
        /// Whether the client speaks TLS, and how (``MatchHostClient/TLS``); nil (the default)
        /// speaks plaintext. Must match the server: one started with `--tls-certificate` takes
        /// TLS only on its native port (a plaintext client gets ERROR `TLS_REQUIRED`).
        public var tls: MatchHostClient.TLS?
        /// The application's identity on the server; must be one of the server's `--game-id`s.
        public var gameID: String
        /// How the player authenticates when ``MatchHostClient/connect()`` opens a new session.
        public var credentials: NativeCredentials
        /// How the client reconnects (and resumes its session) after its connection drops.
        public var reconnectPolicy: ReconnectPolicy
        /// The most bytes of reliable messages (requests and reliable sends) that may be queued
        /// or waiting for the server's acknowledgement at once. When a send would pass it, the
        /// send throws ``MatchHostClientError/sendQueueFull(bytes:limit:)``; nothing is dropped.
        public var maximumSendQueueBytes: Int
        /// How long ``MatchHostClient/request(_:timeout:)`` waits for its answer unless told otherwise.
        public var requestTimeout: TimeAmount
        /// How often the client pings the server to measure the round-trip time (and to show the
        /// server it is alive); `nil` never pings (the client still answers the server's pings).
        public var heartbeatInterval: TimeAmount?
        /// How long an acknowledgement of received messages may wait for one of this client's
        /// own RELIABLE frames to carry it before it goes alone as an `ACK` (zero: at once).
        /// Waiting saves a write per received message; the server keeps what is unacknowledged.
        public var acknowledgementDelay: TimeAmount = .milliseconds(200)
        /// How long opening a connection may take, TCP connect and handshake together, before
        /// the attempt counts as failed.
        public var connectTimeout: TimeAmount
        /// The largest frame body accepted from the server until its `WELCOME` states its own
        /// limit, and the limit on frames sent before it. After the WELCOME the largest of this,
        /// the server's `maxFrameBytes` + 64 and 1 MiB applies (PROTOCOL.md, "Frame sizes").
        public var maximumFrameBytes: Int
        /// Whether the client authenticates again, in a new session, when the server refuses to
        /// resume its session with `SESSION_NOT_FOUND` (the server restarted, or the session's
        /// grace period ran out): first with the session token it holds, then, if that is refused
        /// (`TOKEN_EXPIRED`, say), with ``credentials`` (with the device secret the server issued,
        /// if it issued one). It then reports ``MatchHostClient/Event/sessionRestarted(_:)`` and
        /// goes on. The same when the server ends the session with `SESSION_REVOKED` (the
        /// operator unlinked a device of the player): the revoked token is refused, and the
        /// credentials sign in again, unless they are the unlinked device's (`DEVICE_UNLINKED`
        /// closes the client). Off: either error closes the client, as any other refusal does.
        public var reauthenticatesAfterSessionLoss: Bool = true
        /// Whether the client rides through a graceful server stop (ERROR `SHUTTING_DOWN`, sent on
        /// SIGTERM, as in a deploy or a rolling restart) as it does through a crash: it reports
        /// ``MatchHostClient/Event/serverShuttingDown(_:)``, keeps its state and reconnects
        /// following ``reconnectPolicy`` (the default one tries without end, at most 5 s apart,
        /// so any restart is ridden through and the client is back within 5 s of the server);
        /// once the server answers, its resume is refused with `SESSION_NOT_FOUND` and, with
        /// ``reauthenticatesAfterSessionLoss``, it authenticates again and reports
        /// ``MatchHostClient/Event/sessionRestarted(_:)``. If the server is not back within the
        /// policy's ``ReconnectPolicy/maximumAttempts``, the client closes with
        /// ``MatchHostClient/CloseReason/reconnectAttemptsExhausted(attempts:)``. Off:
        /// `SHUTTING_DOWN` closes the client with ``MatchHostClient/CloseReason/serverError(_:)``.
        public var reconnectsAfterServerShutdown: Bool = true

        /// A configuration with the documented defaults: port 7355, game id `matchhost`, the
        /// default reconnect policy, a 1 MiB send queue, 10 s request and connect timeouts, a
        /// 5 s heartbeat and 64 KiB frames.
        public init(
            host: String,
            port: Int = 7355,
            gameID: String = "matchhost",
            credentials: NativeCredentials,
            reconnectPolicy: ReconnectPolicy = .default,
            maximumSendQueueBytes: Int = 1 << 20,
            requestTimeout: TimeAmount = .seconds(10),
            heartbeatInterval: TimeAmount? = .seconds(5),
            connectTimeout: TimeAmount = .seconds(10),
            maximumFrameBytes: Int = 64 * 1024
        ) {
            self.host = host
            self.port = port
            self.gameID = gameID
            self.credentials = credentials
            self.reconnectPolicy = reconnectPolicy
            self.maximumSendQueueBytes = maximumSendQueueBytes
            self.requestTimeout = requestTimeout
            self.heartbeatInterval = heartbeatInterval
            self.connectTimeout = connectTimeout
            self.maximumFrameBytes = maximumFrameBytes
        }
    }

    /// When to try again after a connection drops: exponential backoff with jitter.
    ///
    /// Attempt `n` (from 1) waits `min(maximumDelay, initialDelay × multiplier^(n-1))`, of which
    /// a random fraction of up to ``jitter`` is taken away, so that many clients dropped at once
    /// do not all come back at the same instant.
    public struct ReconnectPolicy: Sendable, Hashable {
        /// The wait before the first attempt (before jitter).
        public var initialDelay: TimeAmount
        /// The longest wait between attempts (before jitter).
        public var maximumDelay: TimeAmount
        /// How much each wait grows over the one before; at least 1.
        public var multiplier: Double
        /// The largest fraction of a wait that is randomly taken away, from 0 (none) to 1.
        public var jitter: Double
        /// How many attempts in a row may fail before the client gives up and closes; `nil`
        /// tries until the server answers (a resume after a server restart or the session's grace
        /// period is then refused with `SESSION_NOT_FOUND`, and the client starts a new session or,
        /// without ``Configuration/reauthenticatesAfterSessionLoss``, closes). A limit should leave
        /// room for a server restart (``Configuration/reconnectsAfterServerShutdown``): with the
        /// default delays, 10 attempts span 13 to 26 s, 15 attempts 26 to 51 s.
        public var maximumAttempts: Int?

        /// Creates a policy; the defaults are those of ``default``.
        public init(
            initialDelay: TimeAmount = .milliseconds(100),
            maximumDelay: TimeAmount = .seconds(5),
            multiplier: Double = 2,
            jitter: Double = 0.5,
            maximumAttempts: Int? = nil
        ) {
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
            self.multiplier = multiplier
            self.jitter = jitter
            self.maximumAttempts = maximumAttempts
        }

        /// 100 ms, doubling up to 5 s, up to half of each wait taken away at random, unlimited attempts.
        public static let `default` = ReconnectPolicy()

        /// Never reconnect: a dropped connection closes the client.
        public static let never = ReconnectPolicy(maximumAttempts: 0)

        /// The wait before attempt `attempt` (from 1), with jitter from the system's random source.
        public func delay(beforeAttempt attempt: Int) -> TimeAmount {
            var generator = SystemRandomNumberGenerator()
            return self.delay(beforeAttempt: attempt, using: &generator)
        }

        /// The wait before attempt `attempt` (from 1), with jitter from `generator`.
        public func delay<Generator: RandomNumberGenerator>(
            beforeAttempt attempt: Int, using generator: inout Generator
        ) -> TimeAmount {
            let initial = Double(max(0, self.initialDelay.nanoseconds))
            let maximum = Double(max(0, self.maximumDelay.nanoseconds))
            let growth = power(max(1, self.multiplier), Double(max(0, attempt - 1)))
            let base = min(maximum, initial * growth)
            let jitter = min(1, max(0, self.jitter))
            let kept = 1 - jitter * Double.random(in: 0...1, using: &generator)
            return .nanoseconds(Int64(base * kept))
        }
    }
}

/// `Double` power without Foundation.
private func power(_ base: Double, _ exponent: Double) -> Double {
    var result = 1.0
    var remaining = Int(exponent)
    while remaining > 0 && result < 1e18 {
        result *= base
        remaining -= 1
    }
    return result
}
