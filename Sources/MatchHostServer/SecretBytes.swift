/// Bytes that must never be printed (a signing key): `description`, `debugDescription` and
/// the reflection that prints a value holding them all show only how many there are.
struct SecretBytes: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var description: String { "<secret, \(self.bytes.count) bytes>" }
    var debugDescription: String { self.description }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
