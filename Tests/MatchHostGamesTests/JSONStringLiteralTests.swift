import Foundation
import MatchHostCore
import Testing

@Suite struct JSONStringLiteralTests {
    /// Any JSON reader gets the text back, and the literal cannot end a script element.
    @Test(arguments: ["matchhost", "", "say \"hi\"\\", "</script><!--", "a&b>c", "line\nbreak\ttab\u{1}\u{7F}\u{85}", "\u{2028}\u{2029}", "é🐈"])
    func readsBackAsTheSameTextAndHidesMarkup(text: String) throws {
        let literal = jsonStringLiteral(text)
        #expect(!literal.contains("<") && !literal.contains(">") && !literal.contains("&"))
        #expect(!literal.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x2028 || $0.value == 0x2029 })
        let decoded = try JSONSerialization.jsonObject(with: Data("[\(literal)]".utf8)) as? [String]
        #expect(decoded == [text])
    }

    @Test func escapesAreTheUsualOnes() {
        #expect(jsonStringLiteral("<\"\\\n") == #""\u003c\"\\\n""#)
    }
}
