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

    @Test func aCodeLinksOneDeviceUntilItExpires() {
        var book = DeviceLinkCodes(lifetime: .seconds(600))
        let codes = Codes()
        let (code, expiresAt) = book.issue(for: "alice", now: 1_000, code: codes.make)
        #expect(code == "AAAA0001")
        #expect(expiresAt == 601_000)

        // Any case; the device that claimed it may present it again, another may not.
        #expect(book.claim("aaaa0001", by: "tablet", now: 2_000) == .success("alice"))
        #expect(book.claim("AAAA0001", by: "tablet", now: 3_000) == .success("alice"))
        #expect(book.claim("AAAA0001", by: "thief", now: 3_000) == .failure(.claimed))
        #expect(book.claim("AAAA0001", by: "tablet", now: 601_000) == .failure(.expired))
        #expect(book.claim("AAAA9999", by: "tablet", now: 2_000) == .failure(.unknown))
    }

    @Test func aNewCodeReplacesThePlayersLastAndRevokingForgetsIt() {
        var book = DeviceLinkCodes(lifetime: .seconds(60))
        let codes = Codes()
        let first = book.issue(for: "alice", now: 0, code: codes.make).code
        let second = book.issue(for: "alice", now: 10, code: codes.make).code
        let bobs = book.issue(for: "bob", now: 10, code: codes.make).code
        #expect(book.count == 2)
        #expect(book.claim(first, by: "tablet", now: 20) == .failure(.unknown))
        #expect(book.claim(second, by: "tablet", now: 20) == .success("alice"))
        book.revoke(for: "alice")
        #expect(book.claim(second, by: "tablet", now: 20) == .failure(.unknown))
        #expect(book.claim(bobs, by: "laptop", now: 20) == .success("bob"))
    }

    @Test func aCodeThatIsHeldIsNotIssuedTwice() {
        var book = DeviceLinkCodes(lifetime: .seconds(60))
        var made = ["SAMECODE", "SAMECODE", "SAMECODE", "OTHERONE"].makeIterator()
        #expect(book.issue(for: "alice", now: 0) { made.next()! }.code == "SAMECODE")
        #expect(book.issue(for: "bob", now: 0) { made.next()! }.code == "OTHERONE")
    }

    @Test func expiredCodesAreSweptAsCodesAreIssued() {
        var book = DeviceLinkCodes(lifetime: .seconds(1))
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
