import ArgumentParser
import MatchHostClient

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the Four in a Row game reacts to besides the terminal.
enum FourInARowPlayEvent: Sendable {
    case server(FourInARowEvent)
    case connection(MatchHostClient.ConnectionState)
    case closed(String)
    /// Time passed: the turn clock on screen counts down.
    case tick
    /// The server told a player's alias.
    case alias(String, of: String)
}

/// How often the screen is redrawn while nothing else happens, for the turn countdown.
private let countdownInterval = Duration.milliseconds(250)

/// The game in the terminal (``runInTerminal(startFeeds:draw:handle:close:)``): keys, server
/// events, connection changes and a countdown tick into `session`, its screen redrawn after
/// each; exits with 128 + the signal after a signal.
func playFourInARowInTerminal(_ game: FourInARowClient, session: FourInARowPlaySession) async throws {
    var session = session
    let aliases = TerminalAliasRequests()
    let exitSignal = try await runInTerminal(
        startFeeds: { yield in
            [
                aliases.feed(from: game.client, as: FourInARowPlayEvent.alias, into: yield),
                terminalFeed(
                    { try await game.nextEvent(timeout: nil) }, endReason: "the client closed",
                    event: FourInARowPlayEvent.server, ended: FourInARowPlayEvent.closed, into: yield),
                Task {
                    for await state in game.client.stateChanges() {
                        yield(.connection(state))
                    }
                },
                Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: countdownInterval)
                        yield(.tick)
                    }
                },
            ]
        },
        draw: { terminal in terminal.draw(session.screen(at: .now)) },
        handle: { input in
            switch input {
            case .key(let key):
                guard let column = session.pressed(key) else { return }
                do {
                    try await game.move(column: column)
                } catch {
                    session.sendFailed("\(error)")
                }
            case .game(.server(let event)):
                session.received(event, at: .now)
                aliases.ask(session.aliasesToAsk())
            case .game(.alias(let alias, let playerID)):
                session.aliasKnown(alias, of: playerID)
            case .game(.connection(let state)):
                session.connectionChanged(state)
            case .game(.closed(let reason)):
                session.closed(reason)
            case .game(.tick), .resize:
                break
            }
        },
        close: {
            aliases.finish()
            await game.close()
        })
    if let summary = session.summary {
        print(summary)
    }
    if let exitSignal {
        throw ExitCode(128 + exitSignal)
    }
}
