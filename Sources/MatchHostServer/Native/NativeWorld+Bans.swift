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
        let now = self.storage.now()
        self.storage.write(in: .player(playerID), { store in try await store.setBan(playerID: playerID, ban: ban, at: now) }) { result in
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
                    // Lifted, or replaced by a ban that had ended by the time it was stored.
                    self.logger.notice(ban == nil ? "player's ban lifted" : "player's ban ended", metadata: ["player": "\(playerID)"])
                }
            }
            completion(result)
        }
    }
}

extension UnixMillis {
    /// The next whole second, or this time if it is one.
    var roundedUpToSecond: UnixMillis {
        // `quotientAndRemainder` rounds toward zero: up already for a time before 1970.
        let (seconds, rest) = self.milliseconds.quotientAndRemainder(dividingBy: 1000)
        if rest < 0 { return UnixMillis(milliseconds: seconds * 1000) }
        guard rest > 0, seconds < Int64.max / 1000 else { return self }
        return UnixMillis(milliseconds: (seconds + 1) * 1000)
    }

    /// The time in UTC to the second (rounded down), as `2026-11-29T12:00:00Z` (RFC 3339): how a
    /// ban's end is told to its player, in any client's language. Computed, not formatted by
    /// Foundation: a banned client retrying in a loop makes the server write it each time.
    /// Years outside 0001-9999 are clamped to them, as RFC 3339 has four digits.
    public var iso8601: String {
        // The last second of 9999 and the first of year 1, in seconds since 1970.
        let seconds = min(max(self.milliseconds.flooredQuotient(dividingBy: 1000), -62_135_596_800), 253_402_300_799)
        let days = seconds.flooredQuotient(dividingBy: 86_400)
        let secondOfDay = seconds - days * 86_400
        // Howard Hinnant's civil_from_days: the proleptic Gregorian date of a day count.
        let shifted = days + 719_468
        let era = shifted.flooredQuotient(dividingBy: 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func digits(_ value: Int64, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T\(digits(secondOfDay / 3600, 2)):"
            + "\(digits(secondOfDay / 60 % 60, 2)):\(digits(secondOfDay % 60, 2))Z"
    }
}

extension Int64 {
    /// The quotient rounded toward negative infinity (Swift's `/` rounds toward zero).
    fileprivate func flooredQuotient(dividingBy divisor: Int64) -> Int64 {
        let (quotient, remainder) = self.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }
}
