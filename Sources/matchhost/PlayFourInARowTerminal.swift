import ArgumentParser
import MatchHostClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Something the Four in a Row play loop reacts to.
enum FourInARowPlayEvent: Sendable {
    case key(UInt8)
    case server(FourInARowEvent)
    case connection(MatchHostClient.ConnectionState)
    case closed(String)
    /// Time passed: the turn clock on screen counts down.
    case tick
    case resize
    case inputEnded
    case signal(Int32)
}

/// How often the screen is redrawn while nothing else happens, for the turn countdown.
private let countdownInterval = Duration.milliseconds(250)

/// The game in the terminal: raw mode, keys, server events, connection changes and a
/// countdown tick into `session`, its screen redrawn after each. Closes the client and
/// restores the terminal on every way out; exits with 128 + the signal after a signal.
func playFourInARowInTerminal(_ game: FourInARowClient, session: FourInARowPlaySession) async throws {
    var session = session
    let terminal = RawTerminal()
    do {
        try terminal.enterRawMode()
    } catch {
        await game.close()
        benchPrintError("error: \(error)")
        throw ExitCode.failure
    }
    defer { terminal.restore() }

    let (events, input) = AsyncStream.makeStream(of: FourInARowPlayEvent.self)
    startKeyReader(onByte: { input.yield(.key($0)) }, onEnd: { input.yield(.inputEnded) })
    let signalSources = watchSignals([SIGINT, SIGTERM, SIGHUP]) { input.yield(.signal($0)) }
    let resizeSources = watchSignals([SIGWINCH]) { _ in input.yield(.resize) }
    let receiver = Task {
        do {
            while let event = try await game.nextEvent(timeout: nil) {
                input.yield(.server(event))
            }
            input.yield(.closed("the client closed"))
        } catch {
            input.yield(.closed("\(error)"))
        }
    }
    let connectionWatcher = Task {
        for await state in game.client.stateChanges() {
            input.yield(.connection(state))
        }
    }
    let ticker = Task {
        while !Task.isCancelled {
            try? await Task.sleep(for: countdownInterval)
            input.yield(.tick)
        }
    }

    var exitSignal: Int32?
    terminal.draw(session.screen(at: .now))
    loop: for await event in events {
        switch event {
        case .key(let key):
            switch key {
            case UInt8(ascii: "q"), UInt8(ascii: "Q"), 3, 4:  // Q, Ctrl-C, Ctrl-D
                break loop
            default:
                if let column = session.pressed(key) {
                    do {
                        try await game.move(column: column)
                    } catch {
                        session.sendFailed("\(error)")
                    }
                }
            }
        case .server(let event):
            session.received(event, at: .now)
        case .connection(let state):
            session.connectionChanged(state)
        case .closed(let reason):
            session.closed(reason)
        case .tick, .resize:
            break
        case .inputEnded:
            break loop
        case .signal(let number):
            exitSignal = number
            break loop
        }
        terminal.draw(session.screen(at: .now))
    }

    receiver.cancel()
    connectionWatcher.cancel()
    ticker.cancel()
    input.finish()
    for source in signalSources + resizeSources {
        source.cancel()
    }
    await game.close()
    terminal.restore()
    if let summary = session.summary {
        print(summary)
    }
    if let exitSignal {
        throw ExitCode(128 + exitSignal)
    }
}
