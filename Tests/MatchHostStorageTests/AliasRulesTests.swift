import MatchHostCore
import Testing

/// The alias rules on their own (the native port's SET_ALIAS applies them; control characters
/// never get that far, as the wire refuses them, but the rules hold for any caller).
@Suite struct AliasRulesTests {
    let rules = AliasRules()

    @Test(arguments: [
        "Ann", "Ann the First", "Zoë", "e\u{301}", "猫", "Ann 🐈", "👩\u{200D}👧", "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}",
        "❤\u{FE0F}", "Ann 👍🏽", "👩\u{FE0F}\u{200D}🚀",
    ])
    func aliasesPlayersWriteAreAllowed(alias: String) {
        #expect(self.rules.refusal(of: alias) == nil)
    }

    @Test(arguments: [("Ann\nBo", "U+A"), ("Ann\u{7F}", "U+7F"), ("Ann\u{85}", "U+85"), ("\u{0}", "U+0"), ("Ann\u{2029}", "U+2029")])
    func controlAndLineBreakCharactersAreNot(alias: String, code: String) throws {
        #expect(self.rules.refusal(of: alias) == "an alias may not hold control or line-break characters (it holds \(code))")
    }

    @Test(arguments: [
        ("\u{202E}nnA", "U+202E"), ("\u{2066}Ann", "U+2066"), ("A\u{200B}nn", "U+200B"), ("Ann\u{AD}", "U+AD"),
        // Joiners, selectors and tags only where emoji need them.
        ("\u{200D}", "U+200D"), ("\u{200D} Ann", "U+200D"), ("Ann\u{200D}Bo", "U+200D"), ("🐈\u{200D}", "U+200D"),
        ("\u{FE0F}Ann", "U+FE0F"), ("Ann \u{FE0F}", "U+FE0F"), ("Ann \u{E0020}", "U+E0020"), ("\u{E0067}", "U+E0067"),
        // Fillers that show nothing.
        ("\u{3164}", "U+3164"), ("Ann\u{FFA0}", "U+FFA0"), ("\u{115F}Ann", "U+115F"),
    ])
    func invisibleCharactersAreNot(alias: String, code: String) throws {
        #expect(self.rules.refusal(of: alias) == "an alias may not hold invisible characters, but those that join emoji (it holds \(code))")
    }

    @Test func theLengthIsCountedInUnicodeScalarsUpToTheLimit() {
        #expect(self.rules.refusal(of: String(repeating: "🐈", count: 32)) == nil)
        #expect(self.rules.refusal(of: String(repeating: "🐈", count: 33)) == "an alias is at most 32 characters (Unicode scalars); this one has 33")
        #expect(AliasRules(maximumLength: 1).refusal(of: "é") == nil)
        #expect(AliasRules(maximumLength: 1).refusal(of: "e\u{301}") != nil, "two scalars, though one character")
        #expect(self.rules.refusal(of: "") == "an alias may not be empty")
    }

    @Test func theLimitStaysWithinTheWireField() {
        #expect(AliasRules.largestMaximumLength == 63)
        #expect(AliasRules(maximumLength: 500).maximumLength == 63)
        #expect(AliasRules(maximumLength: 0).maximumLength == 1)
        #expect(String(repeating: "🐈", count: AliasRules.largestMaximumLength).utf8.count <= 255)
    }

    @Test(arguments: [" Ann", "Ann ", "\u{3000}Ann", "Ann\u{A0}", "\u{2800}"])
    func spacesAtEitherEndAreNot(alias: String) {
        #expect(self.rules.refusal(of: alias) == "an alias may not begin or end with a space")
    }

    @Test func aCombiningMarkDoesNotStartOne() {
        #expect(self.rules.refusal(of: "\u{301}Ann") == "an alias may not begin with a combining mark")
    }
}
