import Foundation
import Logging
import MatchHostCore
import MatchHostWire

extension NativeWorld {
    /// ERROR `PLAYER_BANNED` for a player banned now, nil for any other: checked as each
    /// authentication is answered (``NativeAuthenticator``), from memory (a token login reads
    /// no database), before the player is marked seen. A ban that has ended is forgotten here
    /// (it stays stored, as the player's record).
    func banRefusal(of playerID: PlayerID) -> NativeError? {
        guard let ban = self.bans[playerID] else { return nil }
        guard ban.isInForce(at: self.storage.now()) else {
            self.bans[playerID] = nil
            self.logger.notice("player's ban ended", metadata: ["player": "\(playerID)"])
            return nil
        }
        return Self.bannedError(ban)
    }

    /// What a banned player is told: until when, for a timed ban, and the operator's reason.
    static func bannedError(_ ban: PlayerBan) -> NativeError {
        var message = "this player is banned"
        if let until = ban.until { message += " until \(until.iso8601)" }
        if !ban.reason.isEmpty { message += ": \(ban.reason)" }
        return NativeError(.playerBanned, message)
    }

    /// Bans `playerID` (`ban`), or lifts its ban (nil). The ban is committed first; then the
    /// world refuses the player's sign-ins, and ends its session (ERROR `PLAYER_BANNED`; its
    /// matches see it leave, as after GOODBYE). `completion` runs on the loop once that is done,
    /// with the store's error if it refused (an unknown player) or failed.
    func setBan(_ ban: PlayerBan?, of playerID: PlayerID, completion: @escaping (Result<Void, any Error>) -> Void) {
        // The player's queue: two changes to one player's ban are applied in the order made.
        self.storage.write(in: .player(playerID), { store in try await store.setBan(playerID: playerID, ban: ban) }) { result in
            if case .success = result {
                if let ban, ban.isInForce(at: self.storage.now()) {
                    self.bans[playerID] = ban
                    var metadata: Logger.Metadata = ["player": "\(playerID)", "reason": "\(ban.reason)"]
                    if let until = ban.until { metadata["until"] = "\(until.iso8601)" }
                    self.logger.notice("player banned", metadata: metadata)
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

extension UnixMillis {
    /// `duration` later, saturating: a duration past the year 292,277,026 is that year.
    func adding(_ duration: Duration) -> UnixMillis {
        let (seconds, attoseconds) = duration.components
        let (fromSeconds, overflowed) = seconds.multipliedReportingOverflow(by: 1000)
        let (sum, overflowedAgain) = self.milliseconds.addingReportingOverflow(fromSeconds + attoseconds / 1_000_000_000_000_000)
        if overflowed || overflowedAgain { return UnixMillis(milliseconds: seconds < 0 ? .min : .max) }
        return UnixMillis(milliseconds: sum)
    }

    /// The time in UTC to the second, as `2026-11-29T12:00:00Z` (RFC 3339): how a ban's end is
    /// told to its player, in any client's language.
    public var iso8601: String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(self.milliseconds) / 1000))
    }
}
