import Crypto
import Foundation
import Logging
import MatchHostCore
import MatchHostWire

/// Decides who a native client is: device credentials against the device identities in the
/// ``GameStore``, session tokens through the ``SessionTokenSigner``. Loop-confined.
///
/// A device's first contact creates its player and the device identity in one store
/// transaction, keeping only the SHA-256 of the secret it issues (the secret is random, so a
/// slow password hash adds nothing); the answer comes only once that is committed, so no
/// client ever holds a secret the server could forget. A known device's secret is checked
/// against the stored hash in constant time.
final class NativeAuthenticator {
    /// Who a client is: the player, and the device secret just issued (empty unless first contact).
    typealias Outcome = Result<(playerID: String, issuedSecret: String), NativeError>

    private let signer: SessionTokenSigner
    private let tokenLifetimeSeconds: UInt64
    private let now: () -> UInt64
    private var random = SystemRandomNumberGenerator()

    /// - Parameters:
    ///   - signer: signs and verifies session tokens.
    ///   - tokenLifetimeSeconds: how long an issued token stays valid.
    ///   - now: wall-clock seconds since 1970 (the listener's ``WallClock``); tokens are checked against it.
    init(signer: SessionTokenSigner, tokenLifetimeSeconds: UInt64, now: @escaping () -> UInt64) {
        self.signer = signer
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
        self.now = now
    }

    /// Finds the player behind `credentials` and marks it seen. `completion` runs on the
    /// storage's loop, at once for a token, after the store answers for a device.
    /// - Parameters:
    ///   - registrationRefusal: asked (on the storage's loop) before an unknown device's first
    ///     contact creates a player; an error refuses it with that error.
    ///   - banRefusal: asked (on the storage's loop) once the player is known; an error refuses
    ///     it, before it is marked seen: a banned client retrying costs no write.
    func authenticate(
        _ credentials: NativeCredentials, storage: WorldStore, logger: Logger, registrationRefusal: @escaping () -> NativeError?,
        banRefusal: @escaping (PlayerID) -> NativeError?, completion: @escaping (Outcome) -> Void
    ) {
        let touchAndComplete: (Outcome) -> Void = { outcome in
            guard case .success(let (playerID, issuedSecret)) = outcome else { return completion(outcome) }
            if let refusal = banRefusal(playerID) { return completion(.failure(refusal)) }
            if issuedSecret.isEmpty { Self.touch(playerID, storage: storage, logger: logger) }
            completion(outcome)
        }
        switch credentials {
        case .token(let token):
            touchAndComplete(self.signer.verify(token, now: self.now()).map { ($0, "") })
        case .device(let id, let secret):
            self.authenticateDevice(
                id, secret: secret, storage: storage, registrationRefusal: registrationRefusal, completion: touchAndComplete)
        }
    }

    /// A fresh session token for `playerID` and its expiry.
    func issueToken(for playerID: String) -> (token: String, expiresAt: UInt64) {
        let expiresAt = self.now() + self.tokenLifetimeSeconds
        return (self.signer.sign(playerID: playerID, expiresAt: expiresAt), expiresAt)
    }

    private func authenticateDevice(
        _ deviceID: String, secret: String, storage: WorldStore, registrationRefusal: @escaping () -> NativeError?,
        completion: @escaping (Outcome) -> Void
    ) {
        guard !deviceID.isEmpty else {
            return completion(.failure(NativeError(.authenticationFailed, "device id is empty")))
        }
        storage.read({ store in try await store.deviceIdentity(deviceID: deviceID) }) { result in
            switch result {
            case .failure:
                completion(.failure(.databaseFailed(.storageFailed)))
            case .success(let identity?):
                let hash = hexEncoded(SHA256.hash(data: Array(secret.utf8)))
                guard !secret.isEmpty, constantTimeEquals(hash, hexEncoded(identity.secretHash)) else {
                    return completion(.failure(Self.deviceRefused))
                }
                completion(.success((identity.playerID, "")))
            case .success(nil):
                // A client that chose its own secret can retry a first contact whose answer it
                // lost; a weak one would let a guessed secret take the new player.
                guard secret.isEmpty || secret.utf8.count >= Self.minimumChosenSecretBytes else {
                    return completion(.failure(Self.deviceRefused))
                }
                if let refusal = registrationRefusal() { return completion(.failure(refusal)) }
                self.createPlayer(deviceID: deviceID, chosenSecret: secret.isEmpty ? nil : secret, storage: storage, completion: completion)
            }
        }
    }

    /// The refusal of a wrong secret for a known device and of a too-short one for a new
    /// device: one text for both, so that a short secret does not tell whether a device id is
    /// taken. (A first contact with an empty or a long secret still tells, by succeeding: device
    /// ids must be hard to guess.)
    static let deviceRefused = NativeError(
        .authenticationFailed,
        "wrong secret for this device id; a new device's own secret must be at least \(minimumChosenSecretBytes) bytes "
            + "(or empty, for the server to issue one)")

    /// The shortest secret a client may choose for a new device (its first contact with a
    /// secret rather than an empty one).
    static let minimumChosenSecretBytes = 32

    /// Creates a player for a device's first contact: with the secret the client chose, or
    /// with one issued now (which AUTHENTICATED carries).
    private func createPlayer(deviceID: String, chosenSecret: String?, storage: WorldStore, completion: @escaping (Outcome) -> Void) {
        let playerID = self.random.hexString(bytes: 16)
        let secret = chosenSecret ?? self.random.hexString(bytes: 32)
        let secretHash = Array(SHA256.hash(data: Array(secret.utf8)))
        let createdAt = storage.now()
        storage.write({ store in
            try await store.createPlayerWithDevice(
                id: playerID, alias: Self.defaultAlias(of: playerID), deviceID: deviceID, secretHash: secretHash, createdAt: createdAt)
        }) { result in
            switch result {
            case .success:
                completion(.success((playerID, chosenSecret == nil ? secret : "")))
            case .failure(let error):
                guard case .deviceExists? = error as? GameStoreError else {
                    return completion(.failure(.databaseFailed(.storageFailed)))
                }
                guard let chosenSecret else {
                    // Another connection's first contact with the same device id committed first.
                    return completion(
                        .failure(NativeError(.authenticationFailed, "device id \(deviceID) was just registered; authenticate with its secret")))
                }
                // The same first contact made twice at once (a retry): the secret decides, as for any known device.
                self.authenticateDevice(
                    deviceID, secret: chosenSecret, storage: storage,
                    registrationRefusal: { NativeError(.authenticationFailed, "device id \(deviceID) was just registered") },
                    completion: completion)
            }
        }
    }

    /// The alias a new player starts with: the start of its id, as Cat Race shows it.
    static func defaultAlias(of playerID: PlayerID) -> String {
        String(playerID.prefix(8))
    }

    private static func touch(_ playerID: PlayerID, storage: WorldStore, logger: Logger) {
        let at = storage.now()
        storage.write({ store in try await store.touch(playerID: playerID, at: at) }) { result in
            if case .failure(let error) = result {
                // A token of a player the store does not know (a store that was replaced) is still valid.
                logger.debug("last seen not recorded", metadata: ["player": "\(playerID)", "error": "\(error)"])
            }
        }
    }
}
