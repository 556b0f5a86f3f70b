import Crypto
import MatchHostCore
import MatchHostWire

/// Issues and checks session tokens: `2.<playerId>.<generation>.<expiresAt>.<signature>`, where
/// the signature is HMAC-SHA256 under the server's key over everything before the last dot, in
/// lowercase hex, and the generation is the player's token generation when it was issued
/// (removing a device moves it on, revoking every token of the player). Tokens of the first
/// form, `1.<playerId>.<expiresAt>.<signature>`, issued before generations existed, read as
/// generation 0. Clients treat tokens as opaque.
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

    /// A token for `playerID` in its token `generation`, valid until `expiresAt` (seconds since 1970).
    public func sign(playerID: String, generation: UInt64 = 0, expiresAt: UInt64) -> String {
        let claims = "2.\(playerID).\(generation).\(expiresAt)"
        return "\(claims).\(self.signature(of: claims))"
    }

    /// The player a token names and the generation it was issued in, if its signature verifies
    /// and it has not expired at `now`.
    public func verify(_ token: String, now: UInt64) -> Result<(playerID: String, generation: UInt64), NativeError> {
        guard let dot = token.utf8.lastIndex(of: UInt8(ascii: ".")) else {
            return .failure(NativeError(.tokenInvalid, "malformed session token"))
        }
        let claims = String(token[..<dot])
        let signature = String(token[token.index(after: dot)...])
        guard constantTimeEquals(signature, self.signature(of: claims)) else {
            return .failure(NativeError(.tokenInvalid, "session token signature does not verify"))
        }
        let parts = claims.split(separator: ".", omittingEmptySubsequences: false)
        let generation: UInt64?
        switch (parts.count, parts.first) {
        case (3, "1"): generation = 0
        case (4, "2"): generation = UInt64(parts[2])
        default: generation = nil
        }
        guard let generation, !parts[1].isEmpty, let expiresAt = UInt64(parts[parts.count - 1]) else {
            return .failure(NativeError(.tokenInvalid, "malformed session token"))
        }
        guard now < expiresAt else {
            return .failure(NativeError(.tokenExpired, "session token expired at \(expiresAt) (now \(now))"))
        }
        return .success((String(parts[1]), generation))
    }

    private func signature(of claims: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(claims.utf8), using: self.key)
        return hexEncoded(mac)
    }
}
