import Crypto
import MatchHostCore
import MatchHostWire

/// Issues and checks session tokens: `1.<playerId>.<expiresAt>.<signature>`, where the
/// signature is HMAC-SHA256 under the server's key over everything before the last dot, in
/// lowercase hex. Clients treat tokens as opaque.
///
/// The key lives in the data directory (see `SecretKeyFile`), so tokens outlive a restart;
/// whoever holds it can mint tokens for any player, so it is never logged.
public struct SessionTokenSigner: Sendable {
    private let key: SymmetricKey

    /// Creates a signer. The key should be 32 random bytes.
    public init(key: [UInt8]) {
        precondition(key.count >= 16, "a token signing key needs at least 16 bytes")
        self.key = SymmetricKey(data: key)
    }

    /// A token for `playerID` valid until `expiresAt` (seconds since 1970).
    public func sign(playerID: String, expiresAt: UInt64) -> String {
        let claims = "1.\(playerID).\(expiresAt)"
        return "\(claims).\(self.signature(of: claims))"
    }

    /// The player a token names, if its signature verifies and it has not expired at `now`.
    public func verify(_ token: String, now: UInt64) -> Result<String, NativeError> {
        guard let dot = token.utf8.lastIndex(of: UInt8(ascii: ".")) else {
            return .failure(NativeError(.tokenInvalid, "malformed session token"))
        }
        let claims = String(token[..<dot])
        let signature = String(token[token.index(after: dot)...])
        guard constantTimeEquals(signature, self.signature(of: claims)) else {
            return .failure(NativeError(.tokenInvalid, "session token signature does not verify"))
        }
        let parts = claims.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "1", !parts[1].isEmpty, let expiresAt = UInt64(parts[2]) else {
            return .failure(NativeError(.tokenInvalid, "malformed session token"))
        }
        guard now < expiresAt else {
            return .failure(NativeError(.tokenExpired, "session token expired at \(expiresAt) (now \(now))"))
        }
        return .success(String(parts[1]))
    }

    private func signature(of claims: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(claims.utf8), using: self.key)
        return hexEncoded(mac)
    }
}
