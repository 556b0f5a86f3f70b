import Foundation
import MatchHostCore
import Testing

@testable import MatchHostServer

/// The arithmetic and formatting of a ban's end: pure functions, checked against Foundation.
@Suite struct BanTimeTests {
    @Test func theEndIsWrittenAsFoundationWritesItToTheSecond() {
        let foundation = ISO8601DateFormatter()
        var generator = SystemRandomNumberGenerator()
        // Both sides of 1970, leap days, the turn of centuries, and random times in 1600-9999
        // (before, Foundation's calendar is Julian; this one stays Gregorian, as RFC 3339's is).
        var times: [Int64] = [
            0, -1, 999, 1000, -1000, -1001, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, 1_767_225_599_999,
            -2_208_988_800_000, -11_676_096_000_000, 253_402_300_799_999,
        ]
        for _ in 0..<2000 { times.append(Int64.random(in: -11_676_096_000_000...253_402_300_799_999, using: &generator)) }
        for milliseconds in times {
            let expected = foundation.string(from: Date(timeIntervalSince1970: Double(milliseconds.flooredSeconds)))
            #expect(UnixMillis(milliseconds: milliseconds).iso8601 == expected, "\(milliseconds) ms")
        }
        // Four digits of year at most: clamped.
        #expect(UnixMillis(milliseconds: .max).iso8601 == "9999-12-31T23:59:59Z")
        #expect(UnixMillis(milliseconds: .min).iso8601 == "0001-01-01T00:00:00Z")
        #expect(UnixMillis(milliseconds: -62_135_596_800_000).iso8601 == "0001-01-01T00:00:00Z")
    }

    @Test func addingSaturatesAtBothEndsAndRoundingUpReachesTheNextSecond() {
        let now = UnixMillis(milliseconds: 1_767_225_600_123)
        #expect(now.adding(.seconds(3600)).milliseconds == 1_767_229_200_123)
        #expect(now.adding(.milliseconds(-1500)).milliseconds == 1_767_225_598_623)
        #expect(now.adding(.seconds(Int64.max)) == UnixMillis(milliseconds: .max))
        #expect(now.adding(.seconds(Int64.min)) == UnixMillis(milliseconds: .min))
        #expect(UnixMillis(milliseconds: .max - 5).adding(.milliseconds(10)) == UnixMillis(milliseconds: .max))
        #expect(UnixMillis(milliseconds: .min + 5).adding(.milliseconds(-10)) == UnixMillis(milliseconds: .min))
        #expect(now.roundedUpToSecond.milliseconds == 1_767_225_601_000)
        #expect(UnixMillis(milliseconds: 1_767_225_600_000).roundedUpToSecond.milliseconds == 1_767_225_600_000)
        #expect(UnixMillis(milliseconds: -1500).roundedUpToSecond.milliseconds == -1000)
        #expect(UnixMillis(milliseconds: .max).roundedUpToSecond == UnixMillis(milliseconds: .max))
    }
}

extension Int64 {
    /// Whole seconds, rounded down, of this many milliseconds.
    fileprivate var flooredSeconds: Int64 {
        let (quotient, remainder) = self.quotientAndRemainder(dividingBy: 1000)
        return remainder < 0 ? quotient - 1 : quotient
    }
}
