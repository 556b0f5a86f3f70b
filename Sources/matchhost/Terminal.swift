import ArgumentParser
import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The controlling terminal in raw mode, for `matchhost play`: keys arrive one byte at a time
/// without echo, and nothing (Ctrl-C included) is interpreted by the line discipline.
///
/// ``restore()`` puts back the settings saved by ``enterRawMode()`` and leaves the alternate
/// screen; callers restore on every way out (quit key, SIGINT/SIGTERM/SIGHUP, errors).
final class RawTerminal {
    private let input: Int32 = 0
    private let output: Int32 = 1
    private var saved: termios?

    /// Saves the current settings and switches to raw mode and the alternate screen.
    /// - Throws: when standard input is not a terminal.
    func enterRawMode() throws {
        guard isatty(self.input) == 1 else { throw PlayError("standard input is not a terminal") }
        var settings = termios()
        guard tcgetattr(self.input, &settings) == 0 else { throw PlayError("cannot read the terminal settings") }
        self.saved = settings
        var raw = settings
        cfmakeraw(&raw)
        guard tcsetattr(self.input, TCSAFLUSH, &raw) == 0 else { throw PlayError("cannot switch the terminal to raw mode") }
        // Alternate screen, hidden cursor.
        self.write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
    }

    /// Leaves the alternate screen, shows the cursor and restores the saved settings. Safe to
    /// call more than once.
    func restore() {
        guard var saved = self.saved else { return }
        self.saved = nil
        self.write("\u{1B}[?25h\u{1B}[?1049l")
        _ = tcsetattr(self.input, TCSAFLUSH, &saved)
    }

    /// The terminal's size in columns and rows (80 × 24 when unknown).
    var size: (columns: Int, rows: Int) {
        var size = winsize()
        #if canImport(Glibc)
        let result = ioctl(self.output, UInt(TIOCGWINSZ), &size)
        #else
        let result = ioctl(self.output, TIOCGWINSZ, &size)
        #endif
        guard result == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Replaces the screen with `lines` (each wrapped to the width: a message, say why the
    /// server closed the connection, is read whole), without flicker: home, each line followed
    /// by clear-to-end-of-line, then clear below.
    func draw(_ lines: [String]) {
        let (columns, rows) = self.size
        var frame = "\u{1B}[H"
        // No line break after the bottom row: it would scroll the screen (wrapping may fill it).
        frame += lines.flatMap({ wrapped($0, width: columns) }).prefix(rows).map { $0 + "\u{1B}[K" }.joined(separator: "\r\n")
        frame += "\u{1B}[J"
        self.write(frame)
    }

    /// Writes text to standard output, all of it.
    func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                posixWrite(self.output, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}

/// `line` in lines of at most `width` characters, broken after the last space that fits (or
/// at the width, in a word longer than a line).
func wrapped(_ line: String, width: Int) -> [String] {
    guard width > 0 else { return [line] }
    var lines: [String] = []
    var rest = Substring(line)
    while rest.count > width {
        let fits = rest.prefix(width + 1)
        if let space = fits.lastIndex(of: " "), space > rest.startIndex {
            lines.append(String(rest[..<space]))
            rest = rest[rest.index(after: space)...]
        } else {
            lines.append(String(rest.prefix(width)))
            rest = rest.dropFirst(width)
        }
    }
    lines.append(String(rest))
    return lines
}

/// POSIX `write`, under a name that does not clash with ``RawTerminal/write(_:)``.
@inline(__always)
private func posixWrite(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, pointer, count)
    #else
    return Darwin.write(fd, pointer, count)
    #endif
}

/// Reads standard input on its own thread and hands each byte to `onByte`; calls `onEnd`
/// when input ends. The thread blocks in `read` and lives until the process exits.
func startKeyReader(onByte: @escaping @Sendable (UInt8) -> Void, onEnd: @escaping @Sendable () -> Void) {
    let thread = Thread {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress!, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                onEnd()
                return
            }
            for byte in buffer[0..<count] {
                onByte(byte)
            }
        }
    }
    thread.name = "matchhost-keys"
    thread.start()
}

/// Turns signals into calls of `handler` on a dispatch queue (the default action is
/// switched off, so the process can restore the terminal first). Keep the returned sources.
func watchSignals(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
    signals.map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler { handler(number) }
        source.resume()
        return source
    }
}

/// What a game in the terminal reacts to: a key (other than the quit keys), a resize, or one
/// of the game's own events (from its server, its connection, a timer).
enum TerminalInput<Game: Sendable>: Sendable {
    case key(UInt8)
    case resize
    case game(Game)
}

/// Runs a game in the terminal, for every `matchhost play`: raw mode; keys, resizes and the
/// game's events (from the tasks `startFeeds` starts with the function it is given) into
/// `handle`, the screen drawn with `draw` first and after each. Q, Ctrl-C, Ctrl-D, the end of
/// input and SIGINT, SIGTERM or SIGHUP end it; then the feeds are cancelled, `close` runs and
/// the terminal is restored, on every way out.
/// - Returns: the signal that ended it, if one did (the caller exits with 128 + it, after
///   printing its summary on the restored terminal).
func runInTerminal<Game: Sendable>(
    startFeeds: (@escaping @Sendable (Game) -> Void) -> [Task<Void, Never>],
    draw: (RawTerminal) -> Void,
    handle: (TerminalInput<Game>) async -> Void,
    close: () async -> Void
) async throws -> Int32? {
    let terminal = RawTerminal()
    do {
        try terminal.enterRawMode()
    } catch {
        await close()
        benchPrintError("error: \(error)")
        throw ExitCode.failure
    }
    defer { terminal.restore() }

    let (events, input) = AsyncStream.makeStream(of: TerminalEvent<Game>.self)
    startKeyReader(onByte: { input.yield(.input(.key($0))) }, onEnd: { input.yield(.inputEnded) })
    let signalSources = watchSignals([SIGINT, SIGTERM, SIGHUP]) { input.yield(.signal($0)) }
    let resizeSources = watchSignals([SIGWINCH]) { _ in input.yield(.input(.resize)) }
    let feeds = startFeeds { input.yield(.input(.game($0))) }

    var exitSignal: Int32?
    draw(terminal)
    loop: for await event in events {
        switch event {
        case .input(.key(UInt8(ascii: "q"))), .input(.key(UInt8(ascii: "Q"))), .input(.key(3)), .input(.key(4)):
            break loop  // Q, Ctrl-C, Ctrl-D
        case .input(let input):
            await handle(input)
        case .inputEnded:
            break loop
        case .signal(let number):
            exitSignal = number
            break loop
        }
        draw(terminal)
    }

    for feed in feeds { feed.cancel() }
    input.finish()
    for source in signalSources + resizeSources { source.cancel() }
    await close()
    terminal.restore()
    return exitSignal
}

/// Everything the loop of ``runInTerminal(startFeeds:draw:handle:close:)`` reacts to.
private enum TerminalEvent<Game: Sendable>: Sendable {
    case input(TerminalInput<Game>)
    case inputEnded
    case signal(Int32)
}

/// A feed for ``runInTerminal(startFeeds:draw:handle:close:)``: everything `next` returns, as
/// `event`s, then `ended` with why it stopped (`endReason` when `next` returned nil).
func terminalFeed<Event: Sendable, Game: Sendable>(
    _ next: @escaping @Sendable () async throws -> Event?, endReason: String, event: @escaping @Sendable (Event) -> Game,
    ended: @escaping @Sendable (String) -> Game, into yield: @escaping @Sendable (Game) -> Void
) -> Task<Void, Never> {
    Task {
        do {
            while let received = try await next() {
                yield(event(received))
            }
            yield(ended(endReason))
        } catch {
            yield(ended("\(error)"))
        }
    }
}

/// Why `matchhost play` cannot go on.
struct PlayError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
