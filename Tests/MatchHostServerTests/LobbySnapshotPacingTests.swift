import MatchHostServer
import MatchHostWire
import NIOCore
import Testing

/// A lobby subscription's snapshot can be much larger than the session's `--max-backlog`: it
/// is sent a page at a time as the subscriber acknowledges, and changes to the matches not
/// sent yet are folded into their pages, so the subscriber sees each match's `added` first.
@Suite("Native server: a lobby snapshot larger than the backlog")
struct LobbySnapshotPacingTests {
    @Test func aSnapshotLargerThanTheBacklogArrivesWholeAPageForEachAcknowledgement() async throws {
        // 250 entries of about 117 bytes are about 29 KB: nearly twice the 16 KiB backlog. A page
        // takes what fits in half of it, about 69 entries, and the next waits for an
        // acknowledgement.
        let server = try await RunningNativeServer.start {
            $0.maxBacklogBytes = 16 * 1024
            $0.maxMatchesPerPlayer = 1_000
            $0.maxMessageRate = 100_000
            $0.maxNewMatchesPerMinute = 100_000
        }
        let (host, _) = try await server.login("snapshot-host")
        let ids = try await Self.createMatches(250, by: host)
        let watcher = try await Self.subscribedWatcher(on: server, expecting: 250)
        let firstPage = try await Self.lobbyChanges(watcher)
        let sent = firstPage.count
        #expect((50...80).contains(sent))
        #expect(firstPage.map(\.kind) == Array(repeating: .added, count: sent))
        #expect(firstPage.map(\.entry.matchID) == Array(ids[0..<sent]))

        // Unacknowledged, the watcher gets no more pages, only changes to what it has seen
        // and to matches newer than its snapshot: the end of a match not sent yet and a join
        // to another are left for their pages.
        let (guest, _) = try await server.login("snapshot-guest")
        let leave = try await host.request(.leaveMatch(ids[150]))
        #expect(try await host.response(to: leave) == .success(.matchLeft(ids[150])))
        for matchID in [ids[200], ids[10]] {
            let join = try await guest.request(.joinMatch(matchID))
            guard case .success(.matchJoined) = try await guest.response(to: join) else {
                throw TestClientError.unexpected("no MATCH_JOINED")
            }
        }
        let create = try await guest.request(.createMatch(mode: "relay", maxPlayers: 4, label: "late"))
        guard case .success(.matchJoined(let late)) = try await guest.response(to: create) else {
            throw TestClientError.unexpected("no MATCH_JOINED")
        }
        var live: [NativeLobbyChange] = []
        while live.count < 2 { live += try await Self.lobbyChanges(watcher) }
        #expect(live.map(\.entry.matchID) == [ids[10], late.matchID])
        #expect(live.map(\.kind) == [.changed, .added])
        #expect(live.first?.entry.players == 2)

        // Each acknowledgement lets the next page go: the rest of the snapshot, without the
        // ended match and with the joined one as it is now.
        var rest: [NativeLobbyChange] = []
        while rest.last?.entry.matchID != ids[249] {
            try await watcher.send(.ack(watcher.lastReceived))
            rest += try await Self.lobbyChanges(watcher)
        }
        #expect(rest.allSatisfy { $0.kind == .added })
        #expect(rest.map(\.entry.matchID) == Array(ids[sent..<250]).filter { $0 != ids[150] })
        #expect(rest.first { $0.entry.matchID == ids[200] }?.entry.players == 2)
        try await watcher.send(.ack(watcher.lastReceived))
        #expect(try await watcher.drain() == [])
        await host.close()
        await guest.close()
        await watcher.close()
        try await server.stop()
    }

    @Test func withABacklogSmallerThanOnePageThePagesAreCutToFit() async throws {
        // 40 entries of about 117 bytes are 4.7 KB, more than the whole 4 KiB backlog: one
        // page of them could not go at all; each page takes what fits in half of it.
        let server = try await RunningNativeServer.start {
            $0.maxBacklogBytes = 4 * 1024
            $0.maxMatchesPerPlayer = 100
            $0.maxMessageRate = 100_000
        }
        let (host, _) = try await server.login("small-host")
        let ids = try await Self.createMatches(40, by: host)
        let watcher = try await Self.subscribedWatcher(on: server, expecting: 40)
        var pages: [[NativeLobbyChange]] = []
        while pages.last?.last?.entry.matchID != ids.last {
            pages.append(try await Self.lobbyChanges(watcher))
            try await watcher.send(.ack(watcher.lastReceived))
        }
        #expect(pages.joined().map(\.entry.matchID) == ids)
        #expect(pages.count >= 3, "each page under 2 KiB")
        #expect(pages.allSatisfy { $0.count <= 17 }, "(2,048 - 74 bytes of header and charge) / 114 an entry")
        #expect(try await watcher.drain() == [], "still open")
        await host.close()
        await watcher.close()
        try await server.stop()
    }

    /// `count` relay matches of `host`, each with a 100-byte label.
    private static func createMatches(_ count: Int, by host: TestNativeConnection) async throws -> [MatchIdentifier] {
        var ids: [MatchIdentifier] = []
        for index in 0..<count {
            let label = "match \(index) " + String(repeating: "x", count: 100 - "match \(index) ".count)
            let id = try await host.request(.createMatch(mode: "relay", maxPlayers: 4, label: label))
            guard case .success(.matchJoined(let info)) = try await host.response(to: id) else {
                throw TestClientError.unexpected("no MATCH_JOINED")
            }
            ids.append(info.matchID)
        }
        return ids
    }

    /// A new player subscribed to the relay lobby, told `count` matches are open.
    private static func subscribedWatcher(on server: RunningNativeServer, expecting count: UInt32) async throws -> TestNativeConnection {
        let (watcher, _) = try await server.login("watcher")
        let subscription = try await watcher.request(.subscribeLobby(mode: "relay"))
        #expect(try await watcher.response(to: subscription) == .success(.lobbySubscribed(mode: "relay", count: count)))
        return watcher
    }

    private static func lobbyChanges(_ connection: TestNativeConnection) async throws -> [NativeLobbyChange] {
        guard case .lobbyUpdate("relay", let changes) = try await connection.nextMessage() else {
            throw TestClientError.unexpected("expected a LOBBY_UPDATE")
        }
        return changes
    }
}
