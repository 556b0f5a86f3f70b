import MatchHostWire

/// A ``ClientSession`` authenticating again after the server refused to resume its session
/// (`SESSION_NOT_FOUND`): what was lost, and which credentials are left to try.
///
/// A pure value, so the order of credentials is tested without sockets. It lives from the
/// refusal until a new `AUTHENTICATED`, across as many connections as that takes.
struct Reauthentication {
    /// Why the old session could not be resumed.
    let cause: NativeError
    /// The session the server no longer has.
    let lostSession: NativeAuthenticated
    /// The old session's reliable messages the server never acknowledged, oldest first.
    let unacknowledged: [NativeClientMessage]
    /// The credentials not yet refused, the next to try first.
    private(set) var remainingCredentials: [NativeCredentials]

    /// - Parameters:
    ///   - configured: the client's own credentials (``MatchHostClient/Configuration/credentials``).
    ///   - issuedDeviceSecret: the device secret the server issued on first contact, if it did:
    ///     the configured secret was then empty and would now be refused.
    init(
        cause: NativeError, lostSession: NativeAuthenticated, unacknowledged: [NativeClientMessage],
        configured: NativeCredentials, issuedDeviceSecret: String?
    ) {
        self.cause = cause
        self.lostSession = lostSession
        self.unacknowledged = unacknowledged
        // The session token first: it costs the server no database read and names the same
        // player. The client's own credentials are the way back once it has expired.
        var credentials: [NativeCredentials] = []
        if !lostSession.sessionToken.isEmpty {
            credentials.append(.token(lostSession.sessionToken))
        }
        switch configured {
        case .device(let id, let secret), .link(_, let id, let secret):
            // A linked device is the player's from its first AUTHENTICATED on: it signs in as any device does.
            let issued = issuedDeviceSecret ?? ""
            credentials.append(.device(id: id, secret: issued.isEmpty ? secret : issued))
        case .token(let token):
            if token != lostSession.sessionToken { credentials.append(.token(token)) }
        }
        self.remainingCredentials = credentials
    }

    /// What the next `AUTHENTICATE` carries; nil once every credential was refused.
    var credentials: NativeCredentials? { self.remainingCredentials.first }

    /// Whether the server refusing `error` means "these credentials are no good" (so the next
    /// ones may be), rather than a reason to stop.
    static func isCredentialRefusal(_ error: NativeError) -> Bool {
        switch error.code {
        case .tokenInvalid, .tokenExpired, .authenticationFailed, .deviceUnlinked: return true
        default: return false
        }
    }

    /// Drops the credentials just refused; false when none are left.
    mutating func credentialsRefused() -> Bool {
        if !self.remainingCredentials.isEmpty { self.remainingCredentials.removeFirst() }
        return !self.remainingCredentials.isEmpty
    }
}
