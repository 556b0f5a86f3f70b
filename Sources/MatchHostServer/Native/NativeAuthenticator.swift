import Crypto
import Foundation
import Logging
import MatchHostCore
import MatchHostWire

/// What the world decides as a client authenticates, asked on the storage's loop.
struct NativeSignInRules {
    /// Asked before an unknown device's first contact creates a player; an error refuses it.
    var registrationRefusal: () -> NativeError?
    /// Asked once the player is known; an error refuses it, before it is marked seen (a banned
    /// client retrying costs no write) and before a device is linked to it.
    var banRefusal: (PlayerID) -> NativeError?
    /// Claims a link code for a device (``DeviceLinkCodes/claim(_:by:now:)``): the player it
    /// links to and the code's digest (the claim is stored with the link), or the refusal.
    var linkClaim: (_ code: String, _ deviceID: String) -> Result<DeviceLinkCodes.Claim, NativeError>
    /// Asked before a device is linked to a player: an error (the server holds its most
    /// sessions, and the player has none) refuses it.
    var linkRefusal: (PlayerID) -> NativeError?
}

/// Decides who a native client is: device credentials against the device identities in the
/// ``GameStore``, session tokens through the ``SessionTokenSigner``, link codes through the
/// world's ``DeviceLinkCodes``. Loop-confined.
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
    private let maximumDevicesPerPlayer: Int
    private let now: () -> UInt64
    private var random = SystemRandomNumberGenerator()
    /// The token generation of each player whose tokens were ever revoked (the others are at
    /// 0), as the store holds it: read at start, then taken from each unlink the store commits
    /// (``unlinkEnded(_:of:storedGeneration:)``). A token of another generation is refused
    /// without a read.
    private(set) var tokenGenerations: [PlayerID: UInt64] = [:]
    /// The players with an unlink being written, and how many: their tokens are refused
    /// meanwhile, so that none slips in before the new generation is known.
    private var playersUnlinking: [PlayerID: Int] = [:]
    /// The devices being unlinked from their players, and how many times: their secrets are
    /// refused meanwhile. By player too: another player naming the device (a refused unlink)
    /// must not lock it out. A nil device: every device of the player (the operator's recovery).
    private var devicesUnlinking: [PlayerDevice: Int] = [:]
    /// Moves on as each unlink is committed: a device read that began before a commit is made
    /// again, as it may have found the device the commit removed. Refused unlinks leave it, so
    /// that naming made-up devices cannot keep sign-ins reading.
    private var deviceChanges: UInt64 = 0
    /// The most times one sign-in reads its device again before it gives up ("try again").
    static let maximumDeviceRereads = 8

    private struct PlayerDevice: Hashable {
        var playerID: PlayerID
        /// Nil: every device of the player.
        var deviceID: String?
    }

    /// - Parameters:
    ///   - signer: signs and verifies session tokens.
    ///   - tokenLifetimeSeconds: how long an issued token stays valid.
    ///   - maximumDevicesPerPlayer: the most devices a link leaves a player with.
    ///   - now: wall-clock seconds since 1970 (the listener's ``WallClock``); tokens are checked against it.
    init(signer: SessionTokenSigner, tokenLifetimeSeconds: UInt64, maximumDevicesPerPlayer: Int, now: @escaping () -> UInt64) {
        self.signer = signer
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
        self.maximumDevicesPerPlayer = maximumDevicesPerPlayer
        self.now = now
    }

    /// Finds the player behind `credentials` and marks it seen. `completion` runs on the
    /// storage's loop, at once for a token, after the store answers for a device or a link.
    func authenticate(
        _ credentials: NativeCredentials, storage: WorldStore, logger: Logger, rules: NativeSignInRules,
        completion: @escaping (Outcome) -> Void
    ) {
        let touchAndComplete: (Outcome) -> Void = { outcome in
            guard case .success(let (playerID, issuedSecret)) = outcome else { return completion(outcome) }
            if let refusal = rules.banRefusal(playerID) { return completion(.failure(refusal)) }
            if issuedSecret.isEmpty { Self.touch(playerID, storage: storage, logger: logger) }
            completion(outcome)
        }
        switch credentials {
        case .device(let id, _) where id.isEmpty, .link(_, let id, _) where id.isEmpty:
            completion(.failure(NativeError(.authenticationFailed, "device id is empty")))
        case .token(let token):
            touchAndComplete(self.signer.verify(token, now: self.now()).flatMap(self.currentGeneration).map { ($0, "") })
        case .device(let id, let secret):
            self.authenticateDevice(
                id, secret: secret, storage: storage, registrationRefusal: rules.registrationRefusal, completion: touchAndComplete)
        case .link(let code, let deviceID, let secret):
            self.link(deviceID, secret: secret, code: code, storage: storage, rules: rules, logger: logger, completion: touchAndComplete)
        }
    }

    /// The token's player, if the token is of the player's current generation and no unlink of
    /// the player is being written.
    private func currentGeneration(_ claims: (playerID: String, generation: UInt64)) -> Result<String, NativeError> {
        guard self.playersUnlinking[claims.playerID] == nil else {
            return .failure(
                NativeError(.tokenInvalid, "a device of this player is being unlinked, which revokes its tokens; sign in with the device's secret"))
        }
        guard claims.generation == self.tokenGenerations[claims.playerID, default: 0] else {
            return .failure(
                NativeError(.tokenInvalid, "session token revoked (a device of the player was unlinked); sign in with the device's secret"))
        }
        return .success(claims.playerID)
    }

    /// A fresh session token for `playerID` and its expiry.
    func issueToken(for playerID: String) -> (token: String, expiresAt: UInt64) {
        let expiresAt = self.now() + self.tokenLifetimeSeconds
        let generation = self.tokenGenerations[playerID, default: 0]
        return (self.signer.sign(playerID: playerID, generation: generation, expiresAt: expiresAt), expiresAt)
    }

    /// An unlink of `deviceID` (nil: of every device) from `playerID` is about to be written:
    /// until it ends, the player's tokens and the device's secret are refused.
    func unlinkStarted(_ deviceID: String?, of playerID: PlayerID) {
        self.playersUnlinking[playerID, default: 0] += 1
        self.devicesUnlinking[PlayerDevice(playerID: playerID, deviceID: deviceID), default: 0] += 1
    }

    /// Whether an unlink of `playerID` is being written now.
    func isUnlinking(_ playerID: PlayerID) -> Bool {
        self.playersUnlinking[playerID] != nil
    }

    /// The unlink has ended: committed, with the player's new token generation (every token of
    /// an earlier one is refused from now on), or refused or failed (nil: nothing changed).
    func unlinkEnded(_ deviceID: String?, of playerID: PlayerID, storedGeneration: UInt64?) {
        if let storedGeneration {
            self.tokenGenerations[playerID] = max(self.tokenGenerations[playerID, default: 0], storedGeneration)
            self.deviceChanges &+= 1
        }
        Self.release(playerID, in: &self.playersUnlinking)
        Self.release(PlayerDevice(playerID: playerID, deviceID: deviceID), in: &self.devicesUnlinking)
    }

    private static func release<Key: Hashable>(_ key: Key, in counts: inout [Key: Int]) {
        if let count = counts[key], count > 1 { counts[key] = count - 1 } else { counts[key] = nil }
    }

    /// Reads `deviceID`'s identity for a sign-in, and answers with it only if no unlink was
    /// committed meanwhile (else it reads again, a few times at most), and no unlink of the
    /// device from its player is being written.
    private func readDevice(
        _ deviceID: String, storage: WorldStore, rereads: Int = 0,
        completion: @escaping (Result<DeviceIdentityRecord?, NativeError>) -> Void
    ) {
        let changesBefore = self.deviceChanges
        storage.read({ store in try await store.deviceIdentity(deviceID: deviceID) }) { result in
            guard case .success(let identity) = result else { return completion(.failure(.databaseFailed(.storageFailed))) }
            if let identity,
                self.devicesUnlinking[PlayerDevice(playerID: identity.playerID, deviceID: deviceID)] != nil
                    || self.devicesUnlinking[PlayerDevice(playerID: identity.playerID, deviceID: nil)] != nil
            {
                return completion(.failure(NativeError(.authenticationFailed, "this device is being unlinked from its player")))
            }
            guard self.deviceChanges == changesBefore else {
                guard rereads < Self.maximumDeviceRereads else { return completion(.failure(.databaseFailed(.storageFailed))) }
                return self.readDevice(deviceID, storage: storage, rereads: rereads + 1, completion: completion)
            }
            completion(.success(identity))
        }
    }

    /// Takes the store's generations at start (``GameStore/tokenGenerations()``).
    func startTokenGenerations(_ generations: [PlayerID: UInt64]) {
        self.tokenGenerations = generations
    }

    /// Links a new device to the player a link code names (AUTHENTICATE method 3): stores the
    /// device as the player's, with the secret its client chose or one issued now, then signs
    /// it in. The same device presenting the same code again (its answer lost) signs in with
    /// its secret as a known device would.
    private func link(
        _ deviceID: String, secret: String, code: String, storage: WorldStore, rules: NativeSignInRules, logger: Logger,
        completion: @escaping (Outcome) -> Void
    ) {
        let claim: DeviceLinkCodes.Claim
        switch rules.linkClaim(code, deviceID) {
        case .failure(let refusal): return completion(.failure(refusal))
        case .success(let claimed): claim = claimed
        }
        let playerID = claim.playerID
        if let refusal = rules.banRefusal(playerID) ?? rules.linkRefusal(playerID) { return completion(.failure(refusal)) }
        let generationAtClaim = self.tokenGenerations[playerID, default: 0]
        self.readDevice(deviceID, storage: storage) { result in
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let identity?):
                guard identity.playerID == playerID else {
                    return completion(
                        .failure(NativeError(.linkRefused, "device id \(deviceID) signs in as another player; a device belongs to one player")))
                }
                completion(Self.check(secret, against: identity))
            case .success(nil):
                // An unlink of the player begun or committed since the claim revoked the code: a
                // device its thief linked must not stay after the operator took the account back.
                // (A recovery queued after this write removes what it adds.)
                guard !self.isUnlinking(playerID), self.tokenGenerations[playerID, default: 0] == generationAtClaim else {
                    return completion(
                        .failure(NativeError(.linkRefused, "the link code was revoked as a device of its player was unlinked; ask for a new one")))
                }
                guard let newSecret = self.newDeviceSecret(secret) else { return completion(.failure(Self.deviceRefused)) }
                let (linkedAt, maximum) = (storage.now(), self.maximumDevicesPerPlayer)
                storage.write(in: .player(playerID), { store in
                    // The claim first: a device is never stored as linked by a code whose
                    // claim is not, which after a restart could link another device.
                    try await store.claimLinkCode(digest: claim.digest, by: deviceID)
                    try await store.addDeviceIdentity(
                        deviceID: deviceID, secretHash: newSecret.hash, playerID: playerID, linkedAt: linkedAt, maximumDevices: maximum)
                }) { result in
                    if case .failure(GameStoreError.deviceExists) = result, !newSecret.isIssued {
                        // The same link made twice at once (a retry): the secret decides, as for a known device.
                        return self.link(deviceID, secret: secret, code: code, storage: storage, rules: rules, logger: logger, completion: completion)
                    }
                    if case .success = result { logger.notice("device linked", metadata: ["player": "\(playerID)"]) }
                    completion(Self.linkOutcome(result, of: deviceID, to: playerID, secret: newSecret))
                }
            }
        }
    }

    /// What storing a linked device (``GameStore/addDeviceIdentity(deviceID:secretHash:playerID:linkedAt:maximumDevices:)``)
    /// answers the client.
    private static func linkOutcome(
        _ result: Result<Void, any Error>, of deviceID: String, to playerID: PlayerID, secret: NewDeviceSecret
    ) -> Outcome {
        switch result {
        case .success:
            return .success((playerID, secret.issuedSecret))
        case .failure(GameStoreError.tooManyDevices(_, let limit)):
            return .failure(NativeError(.linkRefused, "the player has its most devices (\(limit), --max-devices-per-player); unlink one first"))
        case .failure(GameStoreError.deviceExists):
            return .failure(NativeError(.authenticationFailed, "device id \(deviceID) was just registered; authenticate with its secret"))
        case .failure(GameStoreError.unknownPlayer):
            return .failure(NativeError(.linkRefused, "the player the link code was for no longer exists"))
        case .failure:
            return .failure(.databaseFailed(.storageFailed))
        }
    }

    /// The secret a new device (a first contact, or a link) is stored with.
    private struct NewDeviceSecret {
        let secret: String
        /// What is stored: the secret's SHA-256.
        let hash: [UInt8]
        /// Whether the server made it (the client sent none), so that AUTHENTICATED carries it.
        let isIssued: Bool

        /// What AUTHENTICATED carries: the secret if the server issued it, else nothing.
        var issuedSecret: String { self.isIssued ? self.secret : "" }
    }

    /// The secret a client chose for a new device, or one issued now if it chose none (empty);
    /// nil for a chosen one shorter than ``minimumChosenSecretBytes``. A client that chose its
    /// own can retry a contact whose answer it lost; a weak one would let a guessed secret take
    /// the device.
    private func newDeviceSecret(_ chosen: String) -> NewDeviceSecret? {
        guard chosen.isEmpty || chosen.utf8.count >= Self.minimumChosenSecretBytes else { return nil }
        let secret = chosen.isEmpty ? self.random.hexString(bytes: 32) : chosen
        return NewDeviceSecret(secret: secret, hash: Array(SHA256.hash(data: Array(secret.utf8))), isIssued: chosen.isEmpty)
    }

    /// A known device's sign-in: its player if `secret` is the one whose hash is stored.
    private static func check(_ secret: String, against identity: DeviceIdentityRecord) -> Outcome {
        let hash = hexEncoded(SHA256.hash(data: Array(secret.utf8)))
        guard !secret.isEmpty, constantTimeEquals(hash, hexEncoded(identity.secretHash)) else {
            return .failure(Self.deviceRefused)
        }
        return .success((identity.playerID, ""))
    }

    private func authenticateDevice(
        _ deviceID: String, secret: String, storage: WorldStore, registrationRefusal: @escaping () -> NativeError?,
        completion: @escaping (Outcome) -> Void
    ) {
        self.readDevice(deviceID, storage: storage) { result in
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let identity?):
                completion(Self.check(secret, against: identity))
            case .success(nil):
                guard let newSecret = self.newDeviceSecret(secret) else { return completion(.failure(Self.deviceRefused)) }
                if let refusal = registrationRefusal() { return completion(.failure(refusal)) }
                self.createPlayer(deviceID: deviceID, secret: newSecret, storage: storage, completion: completion)
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
    private func createPlayer(deviceID: String, secret: NewDeviceSecret, storage: WorldStore, completion: @escaping (Outcome) -> Void) {
        let playerID = self.random.hexString(bytes: 16)
        let createdAt = storage.now()
        storage.write({ store in
            try await store.createPlayerWithDevice(
                id: playerID, alias: Self.defaultAlias(of: playerID), deviceID: deviceID, secretHash: secret.hash, createdAt: createdAt)
        }) { result in
            switch result {
            case .success:
                completion(.success((playerID, secret.issuedSecret)))
            case .failure(GameStoreError.deviceUnlinked):
                completion(
                    .failure(
                        NativeError(
                            .deviceUnlinked,
                            "device \(deviceID) was unlinked from its player: link it again with a code from one of the player's devices, or sign in as a new player with a new device id"
                        )))
            case .failure(let error):
                guard case .deviceExists? = error as? GameStoreError else {
                    return completion(.failure(.databaseFailed(.storageFailed)))
                }
                guard !secret.isIssued else {
                    // Another connection's first contact with the same device id committed first.
                    return completion(
                        .failure(NativeError(.authenticationFailed, "device id \(deviceID) was just registered; authenticate with its secret")))
                }
                // The same first contact made twice at once (a retry): the secret decides, as for any known device.
                self.authenticateDevice(
                    deviceID, secret: secret.secret, storage: storage,
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
