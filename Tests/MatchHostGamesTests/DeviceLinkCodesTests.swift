import MatchHostCore
import Testing

/// The link-code book's rules on a clock the test sets (no sockets, no waiting).
@Suite struct DeviceLinkCodesTests {
    /// Hands out the codes `AAAA0001`, `AAAA0002`, ... in order.
    private final class Codes {
        var next = 0
        func make() -> String {
            self.next += 1
            let digits = String(self.next)
            return "AAAA" + String(repeating: "0", count: 4 - digits.count) + digits
        }
    }

    /// Stands in for the server's keyed digest: what matters is that codes are held by it.
    private static let digest: @Sendable (String) -> [UInt8] = { Array(("key:" + $0).utf8) }

    private static func claimed(_ player: PlayerID, _ code: String) -> Result<DeviceLinkCodes.Claim, DeviceLinkCodes.Refusal> {
        .success(DeviceLinkCodes.Claim(playerID: player, digest: Self.digest(code)))
    }

    @Test func aCodeLinksOneDeviceUntilItExpires() {
        var book = DeviceLinkCodes(lifetime: .seconds(600), digest: Self.digest)
        let codes = Codes()
        let (code, stored) = book.issue(for: "alice", now: 1_000, code: codes.make)
        #expect(code == "AAAA0001")
        #expect(stored == LinkCodeRecord(playerID: "alice", digest: Self.digest("AAAA0001"), expiresAt: 601_000))

        // Any case; the device that claimed it may present it again, another may not.
        #expect(book.claim("aaaa0001", by: "tablet", now: 2_000) == Self.claimed("alice", "AAAA0001"))
        #expect(book.claim("AAAA0001", by: "tablet", now: 3_000) == Self.claimed("alice", "AAAA0001"))
        #expect(book.claim("AAAA0001", by: "thief", now: 3_000) == .failure(.claimed))
        #expect(book.claim("AAAA0001", by: "tablet", now: 601_000) == .failure(.expired))
        #expect(book.claim("AAAA9999", by: "tablet", now: 2_000) == .failure(.unknown))
    }

    @Test func aNewCodeReplacesThePlayersLastAndRevokingForgetsIt() {
        var book = DeviceLinkCodes(lifetime: .seconds(60), digest: Self.digest)
        let codes = Codes()
        let first = book.issue(for: "alice", now: 0, code: codes.make).code
        let second = book.issue(for: "alice", now: 10, code: codes.make).code
        let bobs = book.issue(for: "bob", now: 10, code: codes.make).code
        #expect(book.count == 2)
        #expect(book.claim(first, by: "tablet", now: 20) == .failure(.unknown))
        #expect(book.claim(second, by: "tablet", now: 20) == Self.claimed("alice", second))
        book.revoke(for: "alice")
        #expect(book.claim(second, by: "tablet", now: 20) == .failure(.unknown))
        #expect(book.claim(bobs, by: "laptop", now: 20) == Self.claimed("bob", bobs))
    }

    @Test func theCodesStoredLinkAsBeforeAfterARestartClaimedOnesByTheirDeviceOnly() {
        var book = DeviceLinkCodes(lifetime: .seconds(60), digest: Self.digest)
        let codes = Codes()
        let (alices, alicesStored) = book.issue(for: "alice", now: 0, code: codes.make)
        let (bobs, bobsStored) = book.issue(for: "bob", now: 0, code: codes.make)
        let (_, carolsStored) = book.issue(for: "carol", now: 0, code: codes.make)
        var claimed = bobsStored
        claimed.claimedBy = "bob-tablet"
        var expired = carolsStored
        expired.expiresAt = 5_000

        var restarted = DeviceLinkCodes(lifetime: .seconds(60), digest: Self.digest)
        restarted.restore([alicesStored, claimed, expired], now: 10_000)
        #expect(restarted.count == 2, "the expired one is not taken")
        #expect(restarted.claim(bobs, by: "thief", now: 10_000) == .failure(.claimed))
        #expect(restarted.claim(bobs, by: "bob-tablet", now: 10_000) == Self.claimed("bob", bobs))
        #expect(restarted.claim(alices.lowercased(), by: "alice-tablet", now: 10_000) == Self.claimed("alice", alices))
        #expect(restarted.claim(alices, by: "alice-tablet", now: 60_000) == .failure(.expired))

        // Under another key (a new secret key file), the stored codes find nothing.
        var rekeyed = DeviceLinkCodes(lifetime: .seconds(60)) { Array(("other:" + $0).utf8) }
        rekeyed.restore([alicesStored], now: 10_000)
        #expect(rekeyed.claim(alices, by: "alice-tablet", now: 10_000) == .failure(.unknown))
    }

    @Test func aCodeThatIsNotStoredIsForgottenIfItIsStillThePlayers() {
        var book = DeviceLinkCodes(lifetime: .seconds(60), digest: Self.digest)
        let codes = Codes()
        let (first, firstStored) = book.issue(for: "alice", now: 0, code: codes.make)
        let (second, _) = book.issue(for: "alice", now: 0, code: codes.make)
        // The first code's store failed after the second replaced it: the second stays.
        book.revoke(firstStored.digest, of: "alice")
        #expect(book.holdsCode(for: "alice"))
        #expect(book.claim(second, by: "tablet", now: 1) == Self.claimed("alice", second))
        #expect(book.claim(first, by: "tablet", now: 1) == .failure(.unknown))
        let (third, thirdStored) = book.issue(for: "alice", now: 2, code: codes.make)
        book.revoke(thirdStored.digest, of: "alice")
        #expect(!book.holdsCode(for: "alice"))
        #expect(book.claim(third, by: "laptop", now: 3) == .failure(.unknown))
    }

    @Test func aCodeThatIsHeldIsNotIssuedTwice() {
        var book = DeviceLinkCodes(lifetime: .seconds(60), digest: Self.digest)
        var made = ["SAMECODE", "SAMECODE", "SAMECODE", "OTHERONE"].makeIterator()
        #expect(book.issue(for: "alice", now: 0) { made.next()! }.code == "SAMECODE")
        #expect(book.issue(for: "bob", now: 0) { made.next()! }.code == "OTHERONE")
    }

    @Test func expiredCodesAreSweptAsCodesAreIssued() {
        var book = DeviceLinkCodes(lifetime: .seconds(1), digest: Self.digest)
        let codes = Codes()
        // A thousand players ask once each, a second apart: each code has expired before the
        // next few are issued, so the book never holds many more than the sweep's threshold.
        var largest = 0
        for player in 0..<1_000 {
            _ = book.issue(for: "p\(player)", now: UnixMillis(milliseconds: Int64(player) * 1_000), code: codes.make)
            largest = max(largest, book.count)
        }
        #expect(largest <= 64)
        book.sweep(now: 1_000_000)
        #expect(book.count == 0)
    }
}
