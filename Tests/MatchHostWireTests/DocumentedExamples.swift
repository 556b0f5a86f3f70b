import Foundation

/// The code blocks of a document's section: from the line `heading` to the next `## `
/// heading, in order. Tests compare them with their own copies of the byte examples, so a
/// document and its examples cannot drift apart.
/// - Parameter path: the document, relative to the package root.
/// - Throws: if the file or the heading is missing, or a block is not closed.
func documentedExamples(in path: String, under heading: String) throws -> [String] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let document = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    let lines = document.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(where: { $0 == heading }) else { throw DocumentError.noHeading(heading, path) }
    let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? lines.endIndex
    var blocks: [String] = []
    var current: [Substring]?
    for line in lines[start..<end] {
        if line.hasPrefix("```") {
            if let block = current {
                blocks.append(block.joined(separator: "\n"))
                current = nil
            } else {
                current = []
            }
        } else {
            current?.append(line)
        }
    }
    guard current == nil else { throw DocumentError.unclosedBlock(path) }
    return blocks
}

enum DocumentError: Error {
    case noHeading(String, String)
    case unclosedBlock(String)
}
