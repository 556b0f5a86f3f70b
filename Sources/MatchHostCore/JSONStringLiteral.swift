/// `text` as a JSON string literal, quotes included, that is also safe inside an HTML
/// `<script>` element: besides what JSON must escape, `<`, `>` and `&` are written as `\u`
/// escapes (so it can never end the element or start a comment), as are U+2028 and U+2029
/// (line ends to JavaScript) and the C1 controls. Any JSON reader reads the same text back.
public func jsonStringLiteral(_ text: String) -> String {
    var literal = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": literal += "\\\""
        case "\\": literal += "\\\\"
        case "\n": literal += "\\n"
        case "\t": literal += "\\t"
        default:
            let value = scalar.value
            if value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029 || "<>&".unicodeScalars.contains(scalar) {
                let digits = String(value, radix: 16)
                literal += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            } else {
                literal.unicodeScalars.append(scalar)
            }
        }
    }
    return literal + "\""
}
