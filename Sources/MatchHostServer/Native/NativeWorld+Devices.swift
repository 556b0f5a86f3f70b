import MatchHostCore
import MatchHostWire

extension NativeWorld {
    /// What this world decides as a client from `network` authenticates.
    func signInRules(from network: String) -> NativeSignInRules {
        NativeSignInRules(
            registrationRefusal: { [unowned self] in self.registrationRefusal(from: network) },
            banRefusal: { [unowned self] in self.banRefusal(of: $0) },
            linkClaim: { [unowned self] code, deviceID in self.claimLinkCode(code, by: deviceID, from: network) },
            linkRefusal: { [unowned self] playerID in
                // A linked device's first session must fit, as a new player's must.
                self.sessions.session(of: playerID) == nil ? self.sessionLimitRefusal() : nil
            })
    }

    /// AUTHENTICATE method 3's code: the player it links `deviceID` to, or LINK_REFUSED. A code
    /// that does not exist is a wrong guess, counted against the network's
    /// `--max-failed-joins-per-minute` as a wrong invite code is; a network out of guesses is
    /// refused (RATE_LIMITED) before the code is looked up.
    private func claimLinkCode(_ code: String, by deviceID: String, from network: String) -> Result<DeviceLinkCodes.Claim, NativeError> {
        let now = self.clock.now
        guard self.failedJoins.allows(network, now: now) else {
            self.failedJoins.countRefusal()
            return .failure(
                NativeError(
                    .rateLimited,
                    "this network has named too many invite codes, parties or link codes that do not exist this minute (--max-failed-joins-per-minute); try again later"
                ))
        }
        return self.linkCodes.claim(code, by: deviceID, now: self.storage.now()).mapError { refusal in
            if refusal == .unknown { self.failedJoins.charge(network, now: now) }
            return NativeError(.linkRefused, refusal.description)
        }
    }

    /// Answers CREATE_LINK_CODE, LIST_DEVICES and UNLINK_DEVICE, each after the store (in the
    /// player's queue, so a player's device changes are made in the order asked).
    func answerAboutDevices(_ request: NativeRequest, id: UInt32, for session: Session) {
        let playerID = session.playerID
        switch request {
        case .createLinkCode:
            let generation = self.authenticator.tokenGenerations[playerID, default: 0]
            self.askStore(id: id, for: session, in: (.player(playerID), writes: false), { store in try await store.devices(playerID: playerID).count }) {
                count, respond in
                self.issueLinkCode(for: playerID, holding: count, generation: generation) { result in
                    respond(result.map { code, expiresAt in .linkCode(code: code, expiresAt: UInt64(clamping: expiresAt.milliseconds)) })
                }
            }
        case .listDevices:
            self.askStore(id: id, for: session, in: (.player(playerID), writes: false), { store in try await store.devices(playerID: playerID) }) {
                devices in
                .success(.devices(devices.map { NativeDevice(deviceID: $0.deviceID, linkedAt: UInt64(clamping: $0.linkedAt.milliseconds)) }))
            }
        case .unlinkDevice(let deviceID):
            let asked = self.askStore(
                id: id, for: session, in: (.player(playerID), writes: true), self.startUnlinking(deviceID, of: playerID),
                settled: { result in
                    self.authenticator.unlinkEnded(deviceID, of: playerID, storedGeneration: try? result.get())
                }
            ) { _ in
                self.logger.notice("device unlinked; the player's session tokens are revoked", metadata: ["player": "\(playerID)"])
                return .success(.done)
            }
            if !asked { self.authenticator.unlinkEnded(deviceID, of: playerID, storedGeneration: nil) }
        default:
            preconditionFailure("not a request about devices: \(request)")
        }
    }

    /// A new link code for `playerID`, which has `count` devices, replacing its last one:
    /// `completion` gets it (on the loop) once it is stored, so that it links after a restart
    /// as before. Or `tooManyDevices` at the player's most (checked again when the device is
    /// stored: this spares the player a code that cannot work), or LINK_REFUSED if an unlink
    /// of the player has begun or been committed since its token generation was `generation`:
    /// an unlink revokes link codes, and a code asked for before it must not replace the one an
    /// operator's recovery made for the owner. (A code issued here is stored ahead of any
    /// unlink begun later, in the player's queue, and the `forgetLinkCode` that unlink queues
    /// forgets it.)
    private func issueLinkCode(
        for playerID: PlayerID, holding count: Int, generation: UInt64,
        completion: @escaping (Result<(code: String, expiresAt: UnixMillis), any Error>) -> Void
    ) {
        let maximum = self.options.maxDevicesPerPlayer
        guard count < maximum else { return completion(.failure(GameStoreError.tooManyDevices(playerID, limit: maximum))) }
        let unlinkedMeanwhile = { [unowned self] in
            self.authenticator.isUnlinking(playerID) || self.authenticator.tokenGenerations[playerID, default: 0] != generation
        }
        let refusal = NativeError(.linkRefused, "a device of the player was unlinked meanwhile, which revokes link codes; ask again")
        guard !unlinkedMeanwhile() else { return completion(.failure(refusal)) }
        let now = self.storage.now()
        let (code, stored) = self.linkCodes.issue(for: playerID, now: now) { InviteCode.random(using: &self.codeGenerator) }
        self.storage.write(in: .player(playerID), { store in try await store.putLinkCode(stored, at: now) }) { result in
            switch result {
            case .failure(let error):
                self.linkCodes.revoke(stored.digest, of: playerID)
                // The code this one replaced is gone from memory: it must not come back from
                // the store at the next start. (A newer code, issued meanwhile, is stored after
                // this in the player's queue, and replaces it there itself.)
                if !self.linkCodes.holdsCode(for: playerID) { self.forgetStoredLinkCode(of: playerID, "a replaced link code") }
                completion(.failure(error))
            case .success:
                completion(unlinkedMeanwhile() ? .failure(refusal) : .success((code, stored.expiresAt)))
            }
        }
    }

    /// What every unlink does as it starts, and the store call that makes it (of `deviceID`).
    private func startUnlinking(_ deviceID: String, of playerID: PlayerID) -> @Sendable (any GameStore) async throws -> UInt64 {
        let at = self.refuseWhileUnlinking(deviceID, of: playerID)
        return { store in try await store.removeDeviceIdentity(deviceID: deviceID, playerID: playerID, at: at) }
    }

    /// What every unlink does as it starts; returns the time to store it at. The player's tokens
    /// and the device's secret (nil: every device's) are refused from now until the store
    /// answers (the caller then calls `unlinkEnded`), not only from the commit: a stolen device
    /// must not sign in in between. The player's link code goes too, so that the device cannot
    /// link another meanwhile.
    private func refuseWhileUnlinking(_ deviceID: String?, of playerID: PlayerID) -> UnixMillis {
        self.authenticator.unlinkStarted(deviceID, of: playerID)
        self.linkCodes.revoke(for: playerID)
        // Ahead of the unlink's own write in the player's queue: a refused unlink revokes the
        // code too, after a restart as well.
        self.forgetStoredLinkCode(of: playerID, "a revoked link code")
        return self.storage.now()
    }

    /// Queues the store's forgetting of `playerID`'s link code (`what` it is, for the log if
    /// that fails) in the player's queue, after its writes so far.
    private func forgetStoredLinkCode(of playerID: PlayerID, _ what: String) {
        self.storage.write(
            in: .player(playerID), { store in try await store.forgetLinkCode(playerID: playerID) },
            then: self.storage.logFailure("forgetting \(what)"))
    }

    /// The operator's unlink (the admin endpoints): as UNLINK_DEVICE, and then the player's
    /// session ends with ERROR `SESSION_REVOKED`, on whichever device it is. The unlinked device
    /// may be the one signed in (a stolen phone), and a session does not know which device
    /// signed it in; the player's other devices sign in again with their secrets. `completion`
    /// runs on the loop once that is done, with `unknownDevice` or `lastDevice` if the store
    /// refused, or its failure.
    func unlinkByOperator(_ deviceID: String, of playerID: PlayerID, completion: @escaping (Result<Void, any Error>) -> Void) {
        self.storage.write(in: .player(playerID), self.startUnlinking(deviceID, of: playerID)) { result in
            self.authenticator.unlinkEnded(deviceID, of: playerID, storedGeneration: try? result.get())
            if case .success = result {
                self.logger.notice("device unlinked by the operator", metadata: ["player": "\(playerID)"])
                self.revokeSession(of: playerID, "the operator unlinked a device of this player; sign in again with this device's secret")
            }
            completion(result.map { _ in })
        }
    }

    /// The operator takes `playerID`'s account back from whoever holds its devices (the admin
    /// endpoints): every device is removed (its only one too) and every token revoked in one
    /// commit, the player's session ends with `SESSION_REVOKED`, and a link code is made for the
    /// owner's device, after the commit, so that no device of the player's could have asked
    /// for one meanwhile. While the removal is written, every device of the player is refused,
    /// and a link whose code was claimed before it links nothing. `completion` runs on the loop
    /// with the devices removed and the code, or `unknownPlayer`, or the store's failure.
    func recoverByOperator(
        _ playerID: PlayerID, completion: @escaping (Result<(removed: [String], code: String, expiresAt: UnixMillis), any Error>) -> Void
    ) {
        let at = self.refuseWhileUnlinking(nil, of: playerID)
        self.storage.write(in: .player(playerID), { store in try await store.removeAllDeviceIdentities(playerID: playerID, at: at) }) { result in
            self.authenticator.unlinkEnded(nil, of: playerID, storedGeneration: try? result.get().generation)
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let reset):
                self.logger.notice("account recovered by the operator: every device unlinked", metadata: ["player": "\(playerID)"])
                self.revokeSession(of: playerID, "the operator unlinked every device of this player")
                self.issueLinkCode(for: playerID, holding: 0, generation: reset.generation) { issued in
                    if case .failure(let error) = issued {
                        self.logger.warning(
                            "account recovered, but its link code could not be made: make one with link-code",
                            metadata: ["player": "\(playerID)", "error": "\(error)"])
                    }
                    completion(issued.map { (reset.removed, $0.code, $0.expiresAt) })
                }
            }
        }
    }

    /// Ends `playerID`'s session, if it has one, with `SESSION_REVOKED`: after an operator's
    /// unlink, as the session may be an unlinked device's (a session does not record which
    /// device signed it in).
    private func revokeSession(of playerID: PlayerID, _ message: String) {
        guard let session = self.sessions.session(of: playerID) else { return }
        self.sessions.end(session, error: NativeError(.sessionRevoked, message))
    }

    /// A link code the operator makes for `playerID` (the admin endpoints), as CREATE_LINK_CODE
    /// would: how a player whose devices are all lost or taken gets one back. `completion` runs on
    /// the loop with the code and when it expires, or `unknownPlayer`, `tooManyDevices`, or the
    /// store's failure.
    func linkCodeByOperator(for playerID: PlayerID, completion: @escaping (Result<(code: String, expiresAt: UnixMillis), any Error>) -> Void) {
        let generation = self.authenticator.tokenGenerations[playerID, default: 0]
        self.storage.read(in: .player(playerID), { store -> Int? in
            guard try await store.player(id: playerID) != nil else { return nil }
            return try await store.devices(playerID: playerID).count
        }) { result in
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(nil):
                completion(.failure(GameStoreError.unknownPlayer(playerID)))
            case .success(let count?):
                self.issueLinkCode(for: playerID, holding: count, generation: generation) { issued in
                    if case .success = issued { self.logger.notice("link code made by the operator", metadata: ["player": "\(playerID)"]) }
                    completion(issued)
                }
            }
        }
    }
}
