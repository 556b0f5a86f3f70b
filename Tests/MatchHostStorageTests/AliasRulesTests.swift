import MatchHostCore
import Testing

/// The alias rules on their own (the native port's SET_ALIAS applies them; control characters
/// never get that far, as the wire refuses them, but the rules hold for any caller).
@Suite struct AliasRulesTests {
    let rules = AliasRules()

    @Test(arguments: ["Ann", "Ann the First", "Zoë", "猫", "Ann 🐈", "👩\u{200D}👧", "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}"])
    func aliasesPlayersWriteAreAllowed(alias: String) {
        #expect(self.rules.refusal(of: alias) == nil)
    }

    @Test(arguments: [
        ("Ann\nBo", "U+A"), ("Ann\u{7F}", "U+7F"), ("Ann\u{85}", "U+85"), ("\u{0}", "U+0"),
        ("\u{202E}nnA", "U+202E"), ("\u{2066}Ann", "U+2066"), ("A\u{200B}nn", "U+200B"), ("Ann\u{2029}", "U+2029"),
    ])
    func controlFormatAndLineBreakCharactersAreNot(alias: String, code: String) throws {
        let refusal = try #require(self.rules.refusal(of: alias))
        #expect(refusal.hasSuffix("(it holds \(code))"), "\(refusal)")
    }

    @Test func theLengthIsCountedInUnicodeScalarsUpToTheLimit() {
        #expect(self.rules.refusal(of: String(repeating: "🐈", count: 32)) == nil)
        #expect(self.rules.refusal(of: String(repeating: "🐈", count: 33)) == "an alias is at most 32 characters (Unicode scalars); this one has 33")
        #expect(AliasRules(maximumLength: 1).refusal(of: "é") == nil)
        #expect(AliasRules(maximumLength: 1).refusal(of: "e\u{301}") != nil, "two scalars, though one character")
        #expect(self.rules.refusal(of: "") == "an alias may not be empty")
    }

    @Test(arguments: [" Ann", "Ann ", "\u{3000}Ann", "Ann\u{A0}"])
    func spacesAtEitherEndAreNot(alias: String) {
        #expect(self.rules.refusal(of: alias) == "an alias may not begin or end with a space")
    }
}
