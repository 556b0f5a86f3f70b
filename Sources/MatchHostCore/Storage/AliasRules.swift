import MatchHostWire

/// What a player may call itself (native SET_ALIAS). An alias shows in other players'
/// profiles and leaderboards, so nothing in it may break the line it is shown in, hide, or
/// make it read as something else: no control characters or line breaks, no invisible
/// characters (direction overrides, zero-width spaces, fillers) but those that join emoji, no
/// spaces at either end, no combining mark to start.
public struct AliasRules: Sendable, Hashable {
    /// The largest ``maximumLength``: that many scalars of up to 4 bytes of UTF-8 each fit in
    /// SET_ALIAS's field (``NativeLimits/identifier`` bytes).
    public static let largestMaximumLength = NativeLimits.identifier / 4

    /// The most Unicode scalars an alias holds, 1 to ``largestMaximumLength``.
    public let maximumLength: Int

    /// Rules allowing aliases of 1 to `maximumLength` Unicode scalars (default 32; clamped to
    /// 1 ... ``largestMaximumLength``).
    public init(maximumLength: Int = 32) {
        self.maximumLength = min(max(maximumLength, 1), Self.largestMaximumLength)
    }

    /// Why `alias` may not be a player's alias (for the player to read), or nil when it may.
    public func refusal(of alias: String) -> String? {
        let scalars = Array(alias.unicodeScalars)
        guard let first = scalars.first else { return "an alias may not be empty" }
        guard scalars.count <= self.maximumLength else {
            return "an alias is at most \(self.maximumLength) characters (Unicode scalars); this one has \(scalars.count)"
        }
        for (index, scalar) in scalars.enumerated() {
            let code = "U+" + String(scalar.value, radix: 16, uppercase: true)
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator, .surrogate:
                return "an alias may not hold control or line-break characters (it holds \(code))"
            case .format:
                break
            default:
                guard scalar.properties.isDefaultIgnorableCodePoint else { continue }
            }
            let previous = index > 0 ? scalars[index - 1] : nil
            let next = index + 1 < scalars.count ? scalars[index + 1] : nil
            guard Self.joinsEmoji(scalar, after: previous, before: next) else {
                return "an alias may not hold invisible characters, but those that join emoji (it holds \(code))"
            }
        }
        // Trailing variation selectors and tags belong to the scalar before them.
        let last = scalars.last { !$0.properties.isDefaultIgnorableCodePoint } ?? first
        guard !Self.isBlank(first), !Self.isBlank(last) else { return "an alias may not begin or end with a space" }
        switch first.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark:
            return "an alias may not begin with a combining mark"
        default:
            return nil
        }
    }

    /// Whether an invisible scalar is one emoji need where it stands: the zero-width joiner
    /// between two emoji (a family), a variation selector after a visible scalar, a tag after
    /// an emoji or a tag (a subdivision flag).
    private static func joinsEmoji(_ scalar: Unicode.Scalar, after previous: Unicode.Scalar?, before next: Unicode.Scalar?) -> Bool {
        guard let previous else { return false }
        switch scalar.value {
        case 0x200D:
            let joinsAfter = previous.properties.isEmoji || previous.value == 0xFE0F
            return joinsAfter && next?.properties.isEmoji == true
        case 0xFE00...0xFE0F, 0xE0100...0xE01EF:
            return !previous.properties.isDefaultIgnorableCodePoint && !Self.isBlank(previous)
        case 0xE0020...0xE007F:
            return previous.properties.isEmoji || (0xE0020...0xE007F).contains(previous.value)
        default:
            return false
        }
    }

    /// A space, or a character that shows as one (the Braille blank).
    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar.value == 0x2800
    }
}
