/// What a player may call itself (native SET_ALIAS). An alias shows in other players'
/// profiles, leaderboards and game screens, so nothing in it may break the line it is shown
/// in or make it read as something else: no control characters or line breaks, no format
/// characters such as direction overrides, no spaces at either end.
public struct AliasRules: Sendable, Hashable {
    /// The most Unicode scalars an alias holds.
    public var maximumLength: Int

    /// Rules allowing aliases of 1 to `maximumLength` Unicode scalars (default 32).
    public init(maximumLength: Int = 32) {
        precondition(maximumLength > 0, "an alias must be allowed at least one character")
        self.maximumLength = maximumLength
    }

    /// Why `alias` may not be a player's alias (for the player to read), or nil when it may.
    public func refusal(of alias: String) -> String? {
        let scalars = alias.unicodeScalars
        guard let first = scalars.first, let last = scalars.last else { return "an alias may not be empty" }
        let count = scalars.count
        guard count <= self.maximumLength else {
            return "an alias is at most \(self.maximumLength) characters (Unicode scalars); this one has \(count)"
        }
        for scalar in scalars where !Self.isAllowed(scalar) {
            let code = "U+" + String(scalar.value, radix: 16, uppercase: true)
            return "an alias may not hold control, format or line-break characters (it holds \(code))"
        }
        guard !first.properties.isWhitespace, !last.properties.isWhitespace else {
            return "an alias may not begin or end with a space"
        }
        return nil
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .surrogate:
            return false
        case .format:
            // Emoji need the zero-width joiner (family, profession) and tag characters
            // (subdivision flags); every other format character (direction overrides,
            // invisible spaces) is there to make text read as other than it is.
            return scalar.value == 0x200D || (0xE0020...0xE007F).contains(scalar.value)
        default:
            return true
        }
    }
}
