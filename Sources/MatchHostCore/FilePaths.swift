/// Path arithmetic the targets share. Foundation's `NSString.deletingLastPathComponent`
/// crashes on Linux (Swift 6.3) for a one-character relative path such as `d`, which a user
/// may well pass as `--data d`.
package enum FilePaths {
    /// The directory part of `path`, as `NSString.deletingLastPathComponent` gives it:
    /// `a/b` → `a`, `a` → empty, `/a` → `/`, `a/b/` → `a`.
    package static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        var parent = trimmed[..<slash]
        while parent.hasSuffix("/") { parent.removeLast() }
        return parent.isEmpty ? "/" : String(parent)
    }

    /// The directory `path` is in, to open, check or sync: its ``parent(of:)``, or `.` for a
    /// bare name.
    package static func directory(of path: String) -> String {
        let parent = Self.parent(of: path)
        return parent.isEmpty ? "." : parent
    }
}
