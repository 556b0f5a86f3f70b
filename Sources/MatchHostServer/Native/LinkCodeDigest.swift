import Crypto
import MatchHostCore

extension DeviceLinkCodes {
    /// The digest link codes are held and stored by: HMAC-SHA256 of the code under the
    /// server's secret key. A code has about 40 bits, so a plain hash in a copied database
    /// would give its codes away to a brute force in seconds; under the key it does not.
    /// The key also signs session tokens: the `link-code.` prefix keeps the two apart.
    static func keyedDigest(key: [UInt8]) -> @Sendable (String) -> [UInt8] {
        let key = SymmetricKey(data: key)
        return { code in Array(HMAC<SHA256>.authenticationCode(for: Array("link-code.\(code)".utf8), using: key)) }
    }
}
