import Foundation
import MatchHostWire

/// Decides who a native client is: device credentials through the ``DeviceDirectory``,
/// session tokens through the ``SessionTokenSigner``. Loop-confined, like the directory.
final class NativeAuthenticator {
    private let devices: DeviceDirectory
    private let signer: SessionTokenSigner
    private let tokenLifetimeSeconds: UInt64
    private let now: () -> UInt64

    /// - Parameters:
    ///   - signer: signs and verifies session tokens.
    ///   - tokenLifetimeSeconds: how long an issued token stays valid.
    ///   - now: wall-clock seconds since 1970; tokens are checked against it.
    ///   - maximumDevices: the most device identities kept.
    init(
        signer: SessionTokenSigner, tokenLifetimeSeconds: UInt64, maximumDevices: Int,
        now: @escaping () -> UInt64 = unixTimeNow
    ) {
        self.devices = DeviceDirectory(capacity: maximumDevices)
        self.signer = signer
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
        self.now = now
    }

    /// The player behind `credentials`, and a device secret if one was just issued.
    func authenticate(_ credentials: NativeCredentials) -> Result<(playerID: String, issuedSecret: String), NativeError> {
        switch credentials {
        case .device(let id, let secret):
            return self.devices.authenticate(deviceID: id, secret: secret)
        case .token(let token):
            return self.signer.verify(token, now: self.now()).map { ($0, "") }
        }
    }

    /// A fresh session token for `playerID` and its expiry.
    func issueToken(for playerID: String) -> (token: String, expiresAt: UInt64) {
        let expiresAt = self.now() + self.tokenLifetimeSeconds
        return (self.signer.sign(playerID: playerID, expiresAt: expiresAt), expiresAt)
    }
}

/// Wall-clock seconds since 1970.
func unixTimeNow() -> UInt64 {
    UInt64(Date().timeIntervalSince1970)
}
