import MatchHostCore
import MatchHostWire

extension NativeWorld {
    /// ERROR `PLAYER_BANNED` for a banned player, nil for any other: checked as each
    /// authentication is answered (``NativeAuthenticator``), from memory (a token login reads
    /// no database), before the player is marked seen.
    func banRefusal(of playerID: PlayerID) -> NativeError? {
        self.bans[playerID].map(Self.bannedError)
    }

    /// What a banned player is told, with the operator's reason.
    static func bannedError(_ ban: PlayerBan) -> NativeError {
        NativeError(.playerBanned, ban.reason.isEmpty ? "this player is banned" : "this player is banned: \(ban.reason)")
    }

    /// Bans `playerID` (`ban`), or lifts its ban (nil). The ban is committed first; then the
    /// world refuses the player's sign-ins, and ends its session (ERROR `PLAYER_BANNED`; its
    /// matches see it leave, as after GOODBYE). `completion` runs on the loop once that is done,
    /// with the store's error if it refused (an unknown player) or failed.
    func setBan(_ ban: PlayerBan?, of playerID: PlayerID, completion: @escaping (Result<Void, any Error>) -> Void) {
        // The player's queue: two changes to one player's ban are applied in the order made.
        self.storage.write(in: .player(playerID), { store in try await store.setBan(playerID: playerID, ban: ban) }) { result in
            if case .success = result {
                if let ban {
                    self.bans[playerID] = ban
                    self.logger.notice("player banned", metadata: ["player": "\(playerID)", "reason": "\(ban.reason)"])
                    if let session = self.sessions.session(of: playerID) {
                        self.sessions.end(session, error: Self.bannedError(ban))
                    }
                } else if self.bans.removeValue(forKey: playerID) != nil {
                    self.logger.notice("player's ban lifted", metadata: ["player": "\(playerID)"])
                }
            }
            completion(result)
        }
    }
}
