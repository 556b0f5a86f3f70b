import MatchHostCore
import Testing

@Suite("FilePaths: a path's directory, as NSString gives it, without its crash on one character")
struct FilePathsTests {
    @Test(arguments: [
        ("d", ""), ("data", ""), ("a/b", "a"), ("a/b/c", "a/b"), ("/d", "/"), ("/", "/"), ("a/b/", "a"), ("a//b", "a"),
        ("./d", "."), ("/x/y", "/x"), ("", ""),
    ])
    func parent(path: String, expected: String) {
        #expect(FilePaths.parent(of: path) == expected)
    }

    @Test(arguments: [("d", "."), ("a/b", "a"), ("/d", "/"), ("./d", ".")])
    func directory(path: String, expected: String) {
        #expect(FilePaths.directory(of: path) == expected)
    }
}
