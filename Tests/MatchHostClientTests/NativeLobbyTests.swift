import MatchHostClient
import MatchHostServer
import MatchHostWire
import NIOCore
import Testing

extension MatchHostClient.Event {
    var lobbyChanges: [NativeLobbyChange]? {
        if case .lobbyUpdate(_, let changes) = self { return changes }
        return nil
    }

    var matchDataPayload: ByteBuffer? {
        if case .matchData(_, _, let payload, _) = self { return payload }
        return nil
    }

    var party: NativePartyInfo? {
        if case .partyUpdate(let party) = self { return party }
        return nil
    }
}

@Suite("Native client: lobby, private matches and parties")
struct NativeLobbyTests {
    @Test("listing pages through a mode's open public matches, with filters")
    func listing() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let host = makeClient(port: server.port)
        let guest = makeClient(port: server.port)
        _ = try await host.connect()
        _ = try await guest.connect()
        var ids: [MatchIdentifier] = []
        for index in 0..<5 {
            ids.append(try await host.createMatch(mode: "relay", maxPlayers: 2, label: index % 2 == 0 ? "Even \(index)" : "odd \(index)").matchID)
        }
        let hidden = try await host.createPrivateMatch(mode: "relay", maxPlayers: 2, label: "Even secret")
        _ = try await host.createMatch(mode: "catrace", maxPlayers: 2, label: "another mode")
        _ = try await guest.joinMatch(ids[1])  // now full

        let first = try await guest.listMatches(NativeLobbyQuery(mode: "relay", limit: 2))
        #expect(first.entries.map(\.matchID) == [ids[0], ids[1]])
        #expect(first.entries[1].players == 2 && first.entries[1].capacity == 2 && !first.entries[1].joinable)
        #expect(first.entries[0].joinable && first.entries[0].players == 1)
        #expect(first.next == ids[1])
        let second = try await guest.listMatches(NativeLobbyQuery(mode: "relay", after: first.next, limit: 2))
        #expect(second.entries.map(\.matchID) == [ids[2], ids[3]])
        let last = try await guest.listMatches(NativeLobbyQuery(mode: "relay", after: second.next, limit: 2))
        #expect(last.entries.map(\.matchID) == [ids[4]])
        #expect(last.next == 0)

        let joinable = try await guest.listMatches(NativeLobbyQuery(mode: "relay", joinableOnly: true))
        #expect(joinable.entries.map(\.matchID) == [ids[0], ids[2], ids[3], ids[4]])
        let even = try await guest.listMatches(NativeLobbyQuery(mode: "relay", labelContains: "even"))
        #expect(even.entries.map(\.matchID) == [ids[0], ids[2], ids[4]])
        #expect(!even.entries.contains { $0.matchID == hidden.matchID })
        await expectNativeError(.unknownMode) { _ = try await guest.listMatches(NativeLobbyQuery(mode: "chess")) }
        await host.close()
        await guest.close()
    }

    @Test("a subscriber gets the open matches, then every change in order")
    func subscription() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let host = makeClient(port: server.port)
        let guest = makeClient(port: server.port)
        let watcher = makeClient(port: server.port)
        _ = try await host.connect()
        _ = try await guest.connect()
        _ = try await watcher.connect()
        let events = Recorder(watcher.events)

        let before = try await host.createMatch(mode: "relay", maxPlayers: 2, label: "before")
        #expect(try await watcher.subscribeLobby(mode: "relay") == 1)
        #expect(
            try await events.next("snapshot") { $0.lobbyChanges != nil }.lobbyChanges
                == [NativeLobbyChange(.added, NativeLobbyEntry(matchID: before.matchID, label: "before", players: 1, capacity: 2, joinable: true))])

        let after = try await host.createMatch(mode: "relay", maxPlayers: 3, label: "after")
        _ = try await host.createPrivateMatch(mode: "relay", maxPlayers: 2)  // never listed
        _ = try await guest.joinMatch(before.matchID)
        var seen: [NativeLobbyChange] = []
        while seen.count < 2 {
            seen += try await events.next("changes") { $0.lobbyChanges != nil }.lobbyChanges!
        }
        // One publication lists changes by match id; two list them in the order they happened.
        #expect(
            Set(seen) == [
                NativeLobbyChange(.changed, NativeLobbyEntry(matchID: before.matchID, label: "before", players: 2, capacity: 2, joinable: false)),
                NativeLobbyChange(.added, NativeLobbyEntry(matchID: after.matchID, label: "after", players: 1, capacity: 3, joinable: true)),
            ])
        // Both players leave: the relay ends and leaves the lobby.
        try await host.leaveMatch(before.matchID)
        try await guest.leaveMatch(before.matchID)
        var removal: [NativeLobbyChange] = []
        while !removal.contains(where: { $0.kind == .removed }) {
            removal += try await events.next("removal") { $0.lobbyChanges != nil }.lobbyChanges!
        }
        #expect(removal.last?.kind == .removed)
        #expect(removal.last?.entry.matchID == before.matchID)
        #expect(removal.allSatisfy { $0.entry.matchID == before.matchID })

        try await watcher.unsubscribeLobby(mode: "relay")
        _ = try await host.createMatch(mode: "relay", maxPlayers: 2, label: "unseen")
        // A later subscription to another lobby proves the unsubscribed one is silent: its
        // snapshot is the next lobby event.
        #expect(try await watcher.subscribeLobby(mode: "catrace") == 0)
        let race = try await host.createMatch(mode: "catrace", maxPlayers: 2, label: "race")
        let next = try await events.next("catrace lobby") { $0.lobbyChanges != nil }
        #expect(
            next == .lobbyUpdate(
                mode: "catrace",
                changes: [NativeLobbyChange(.added, NativeLobbyEntry(matchID: race.matchID, label: "race", players: 1, capacity: 2, joinable: true))]))
        await host.close()
        await guest.close()
        await watcher.close()
    }

    @Test("with no flush budget, each pass writes to one connection: every subscriber still gets every change in order, and a match's data goes on")
    func publicationOverManyPasses() async throws {
        // Every pass flushes one connection and leaves the rest until after the loop's next
        // poll (through its doorbell), so a publication to 12 subscribers takes 12 passes.
        // Changes are published as they come, so the next is made while the last is still
        // being written.
        let server = try await TestServer.start {
            $0.flushBudget = .zero
            $0.lobbyInterval = .zero
        }
        defer { Task { await server.stop() } }
        let host = makeClient(port: server.port)
        let guest = makeClient(port: server.port)
        _ = try await host.connect()
        let guestID = try await guest.connect().playerID
        let watchers = (0..<12).map { _ in makeClient(port: server.port) }
        var recorders: [Recorder<MatchHostClient.Event>] = []
        for watcher in watchers {
            _ = try await watcher.connect()
            recorders.append(Recorder(watcher.events))
            #expect(try await watcher.subscribeLobby(mode: "relay") == 0)
        }
        let guestEvents = Recorder(guest.events)

        let match = try await host.createMatch(mode: "relay", maxPlayers: 2, label: "many passes")
        _ = try await guest.joinMatch(match.matchID)
        for round in 0..<5 {
            try await host.send(ByteBuffer(bytes: [UInt8(round)]), to: [guestID], in: match.matchID)
        }
        for round in 0..<5 {
            let data = try await guestEvents.next("data \(round)") {
                if case .matchData = $0 { return true }
                return false
            }
            #expect(data.matchDataPayload == ByteBuffer(bytes: [UInt8(round)]))
        }
        // Both leave (the match is removed), and another opens: publications in a row, each
        // still on its way to some subscribers when the next is made.
        try await host.leaveMatch(match.matchID)
        try await guest.leaveMatch(match.matchID)
        let next = try await host.createMatch(mode: "relay", maxPlayers: 3, label: "next")
        let nextEntry = NativeLobbyEntry(matchID: next.matchID, label: "next", players: 1, capacity: 3, joinable: true)
        for (index, events) in recorders.enumerated() {
            var seen: [NativeLobbyChange] = []
            while !seen.contains(where: { $0.entry.matchID == next.matchID }) {
                seen += try await events.next("watcher \(index)'s changes") { $0.lobbyChanges != nil }.lobbyChanges!
            }
            // The first match's changes in the order they happened (all of them folded into
            // one publication leaves nothing to say of it), then the next match's.
            let first = seen.filter { $0.entry.matchID == match.matchID }
            if !first.isEmpty {
                #expect(first.first?.kind == .added, "watcher \(index): \(seen)")
                #expect(first.last?.kind == .removed, "watcher \(index): \(seen)")
                #expect(first.dropLast().allSatisfy { $0.kind != .removed }, "watcher \(index): \(seen)")
            }
            #expect(seen.last == NativeLobbyChange(.added, nextEntry), "watcher \(index): \(seen)")
        }
        for watcher in watchers { await watcher.close() }
        await host.close()
        await guest.close()
    }

    @Test("a private match is joined by its code, in any case, and by nothing else")
    func inviteCodes() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let host = makeClient(port: server.port)
        let friend = makeClient(port: server.port)
        let stranger = makeClient(port: server.port)
        let hostID = try await host.connect().playerID
        let friendID = try await friend.connect().playerID
        try await stranger.connect()
        let created = try await host.createPrivateMatch(mode: "relay", maxPlayers: 3, label: "us")
        #expect(created.inviteCode.count == 8)
        await expectNativeError(.noSuchMatch) { _ = try await friend.joinMatch(code: "ZZZZZZZZ") }
        // Its id, which counts up like every match's, is not enough.
        await expectNativeError(.joinRefused) { _ = try await stranger.joinMatch(created.matchID) }
        let joined = try await friend.joinMatch(code: created.inviteCode.lowercased())
        #expect(joined.matchID == created.matchID)
        #expect(joined.inviteCode == created.inviteCode)
        #expect(joined.players.map(\.playerID) == [hostID, friendID])
        // A public match has no code.
        #expect(try await host.createMatch(mode: "relay", maxPlayers: 2).inviteCode == "")
        await host.close()
        await friend.close()
        await stranger.close()
    }

    @Test("parties: create, join by id, updates to members, a leader leaving disbands")
    func parties() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let leader = makeClient(port: server.port)
        let friend = makeClient(port: server.port)
        let third = makeClient(port: server.port)
        let leaderID = try await leader.connect().playerID
        let friendID = try await friend.connect().playerID
        _ = try await third.connect()
        let leaderEvents = Recorder(leader.events)
        let friendEvents = Recorder(friend.events)

        let party = try await leader.createParty(maxSize: 2)
        #expect(party.leader == leaderID && party.members == [leaderID] && party.maxSize == 2)
        await expectNativeError(.alreadyInParty) { _ = try await leader.createParty() }
        let joined = try await friend.joinParty(party.partyID.lowercased())
        #expect(joined.members == [leaderID, friendID])
        #expect(try await leaderEvents.next("friend joined") { $0.party != nil }.party?.members == [leaderID, friendID])
        await expectNativeError(.partyFull) { _ = try await third.joinParty(party.partyID) }
        await expectNativeError(.noSuchParty) { _ = try await third.joinParty("NOPARTY2") }
        await expectNativeError(.badArgument) { _ = try await third.createParty(maxSize: 17) }

        try await leader.leaveParty(party.partyID)
        let disbanded = try await friendEvents.next("disbanded") { $0.party != nil }.party
        #expect(disbanded?.partyID == party.partyID && disbanded?.members == [])
        // Free again: the friend can lead a party of its own.
        #expect(try await friend.createParty().leader == friendID)
        await expectNativeError(.noSuchParty) { try await leader.leaveParty(party.partyID) }
        await leader.close()
        await friend.close()
        await third.close()
    }
}
