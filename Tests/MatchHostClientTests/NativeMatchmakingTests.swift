import MatchHostClient
import MatchHostServer
import MatchHostWire
import NIOCore
import Testing

extension MatchHostClient.Event {
    var matched: (ticketID: String, match: NativeMatchInfo)? {
        if case .matched(let ticket, let match) = self { return (ticket, match) }
        return nil
    }

    var cancelledTicket: String? {
        if case .ticketCancelled(let ticket, _) = self { return ticket }
        return nil
    }
}

@Suite("Native client: matchmaking over the wire")
struct NativeMatchmakingTests {
    static func start(relaxAfter: TimeAmount = .seconds(60)) async throws -> TestServer {
        try await TestServer.start {
            $0.matchmakerInterval = .milliseconds(20)
            $0.matchmakerRelaxAfter = relaxAfter
        }
    }

    @Test("two compatible players are matched, seated in one match, and told with their ticket ids")
    func twoPlayers() async throws {
        let server = try await Self.start()
        defer { Task { await server.stop() } }
        let ann = makeClient(port: server.port)
        let bo = makeClient(port: server.port)
        let annID = try await ann.connect().playerID
        let boID = try await bo.connect().playerID
        let annEvents = Recorder(ann.events)
        let boEvents = Recorder(bo.events)
        let ticket = NativeTicketRequest(
            mode: "fourinarow", minPlayers: 2, maxPlayers: 2, stringProperties: ["region": "eu"],
            query: [NativeQueryClause(.require, .equals(key: "region", value: "eu"))])
        let annTicket = try await ann.matchmake(ticket)
        let boTicket = try await bo.matchmake(ticket)
        #expect(annTicket != boTicket)
        let annMatch = try #require(try await annEvents.next("ann matched") { $0.matched != nil }.matched)
        let boMatch = try #require(try await boEvents.next("bo matched") { $0.matched != nil }.matched)
        #expect(annMatch.ticketID == annTicket && boMatch.ticketID == boTicket)
        #expect(annMatch.match.matchID == boMatch.match.matchID)
        #expect(annMatch.match.mode == "fourinarow" && annMatch.match.capacity == 2)
        #expect(Set(annMatch.match.players.map(\.playerID)) == [annID, boID])
        // Seated: the game talks to them (Four in a Row sends STATE), and the match is not in the lobby.
        _ = try await annEvents.next("a game event") { if case .matchEvent(annMatch.match.matchID, _, _) = $0 { return true } else { return false } }
        #expect(try await ann.listMatches(NativeLobbyQuery(mode: "fourinarow")).entries.isEmpty)
        // Nor is it open to a player who was not matched into it and knows its id.
        let stranger = makeClient(port: server.port)
        try await stranger.connect()
        await expectNativeError(.joinRefused) { _ = try await stranger.joinMatch(annMatch.match.matchID) }
        // The ticket is gone once matched.
        await expectNativeError(.noSuchTicket) { try await ann.cancelTicket(annTicket) }
        await ann.close()
        await bo.close()
        await stranger.close()
    }

    @Test("with one-search slices (--matchmaker-slice 0) every waiting player is still matched")
    func slicedPasses() async throws {
        let server = try await TestServer.start {
            $0.matchmakerInterval = .milliseconds(20)
            $0.matchmakerSlice = .zero
        }
        defer { Task { await server.stop() } }
        let clients = (0..<6).map { _ in makeClient(port: server.port) }
        var players: [String] = []
        for client in clients { players.append(try await client.connect().playerID) }
        let recorders = clients.map { Recorder($0.events) }
        let ticket = NativeTicketRequest(mode: "fourinarow", minPlayers: 2, maxPlayers: 2)
        for client in clients { _ = try await client.matchmake(ticket) }
        var seats: [MatchIdentifier: Set<String>] = [:]
        for (index, recorder) in recorders.enumerated() {
            let matched = try #require(try await recorder.next("player \(index) matched") { $0.matched != nil }.matched)
            #expect(matched.match.players.map(\.playerID).contains(players[index]))
            seats[matched.match.matchID, default: []].insert(players[index])
        }
        // Three matches of two: nobody left out, nobody seated twice.
        #expect(seats.count == 3)
        #expect(seats.values.allSatisfy { $0.count == 2 })
        for client in clients { await client.close() }
    }

    @Test("queries must hold both ways; a ticket waits for its largest group until it relaxes")
    func queriesAndRelaxation() async throws {
        let server = try await Self.start(relaxAfter: .milliseconds(300))
        defer { Task { await server.stop() } }
        let clients = (0..<3).map { _ in makeClient(port: server.port) }
        for client in clients { _ = try await client.connect() }
        let events = clients.map { Recorder($0.events) }
        // 0 wants only "eu"; 1 is "us": never together. 2 is "eu" and accepts anyone.
        _ = try await clients[0].matchmake(
            NativeTicketRequest(
                mode: "relay", minPlayers: 2, maxPlayers: 3, stringProperties: ["region": "eu"],
                query: [NativeQueryClause(.require, .equals(key: "region", value: "eu"))]))
        _ = try await clients[1].matchmake(NativeTicketRequest(mode: "relay", minPlayers: 2, maxPlayers: 3, stringProperties: ["region": "us"]))
        _ = try await clients[2].matchmake(NativeTicketRequest(mode: "relay", minPlayers: 2, maxPlayers: 3, stringProperties: ["region": "eu"]))
        // Before the relaxation nobody has a group of 3 they all accept; after it 0 and 2 pair up.
        let first = try #require(try await events[0].next("0 matched", timeout: 5) { $0.matched != nil }.matched)
        let second = try #require(try await events[2].next("2 matched", timeout: 5) { $0.matched != nil }.matched)
        #expect(first.match.matchID == second.match.matchID && first.match.players.count == 2)
        for client in clients { await client.close() }
    }

    @Test("a party is queued by its leader and kept together; a member leaving cancels its ticket")
    func parties() async throws {
        let server = try await Self.start()
        defer { Task { await server.stop() } }
        let leader = makeClient(port: server.port)
        let friend = makeClient(port: server.port)
        let solo = makeClient(port: server.port)
        let leaderID = try await leader.connect().playerID
        let friendID = try await friend.connect().playerID
        let soloID = try await solo.connect().playerID
        let friendEvents = Recorder(friend.events)
        let soloEvents = Recorder(solo.events)
        let party = try await leader.createParty()
        _ = try await friend.joinParty(party.partyID)
        let request = NativeTicketRequest(mode: "disks", minPlayers: 3, maxPlayers: 3, partyID: party.partyID)
        await expectNativeError(.notPartyLeader) { _ = try await friend.matchmake(request) }
        let partyTicket = try await leader.matchmake(request)
        // The friend leaving voids the party's ticket; the leader hears why.
        let leaderEvents = Recorder(leader.events)
        try await friend.leaveParty(party.partyID)
        #expect(try await leaderEvents.next("ticket cancelled") { $0.cancelledTicket != nil }.cancelledTicket == partyTicket)
        // Back together, queued again, with a solo player: one match of three.
        _ = try await friend.joinParty(party.partyID)
        _ = try await leader.matchmake(request)
        _ = try await solo.matchmake(NativeTicketRequest(mode: "disks", minPlayers: 3, maxPlayers: 3))
        let friendMatch = try #require(try await friendEvents.next("friend matched") { $0.matched != nil }.matched)
        let soloMatch = try #require(try await soloEvents.next("solo matched") { $0.matched != nil }.matched)
        #expect(friendMatch.match.matchID == soloMatch.match.matchID)
        #expect(Set(friendMatch.match.players.map(\.playerID)) == [leaderID, friendID, soloID])
        await leader.close()
        await friend.close()
        await solo.close()
    }

    @Test("cancelling, bad tickets, and a session ending takes its tickets with it")
    func cancelAndLimits() async throws {
        let server = try await Self.start()
        defer { Task { await server.stop() } }
        let ann = makeClient(port: server.port)
        let bo = makeClient(port: server.port)
        let carol = makeClient(port: server.port)
        _ = try await ann.connect()
        let boID = try await bo.connect().playerID
        let carolID = try await carol.connect().playerID
        let boEvents = Recorder(bo.events)
        let ticket = try await ann.matchmake(NativeTicketRequest(mode: "relay", minPlayers: 2, maxPlayers: 2))
        await expectNativeError(.noSuchTicket) { try await bo.cancelTicket(ticket) }  // not bo's
        try await ann.cancelTicket(ticket)
        await expectNativeError(.noSuchTicket) { try await ann.cancelTicket(ticket) }
        await expectNativeError(.unknownMode) { _ = try await ann.matchmake(NativeTicketRequest(mode: "chess", minPlayers: 2, maxPlayers: 2)) }
        await expectNativeError(.badArgument) { _ = try await ann.matchmake(NativeTicketRequest(mode: "fourinarow", minPlayers: 2, maxPlayers: 3)) }
        await expectNativeError(.badArgument) { _ = try await ann.matchmake(NativeTicketRequest(mode: "relay", minPlayers: 3, maxPlayers: 2)) }
        _ = try await ann.matchmake(NativeTicketRequest(mode: "relay", minPlayers: 2, maxPlayers: 2))
        await expectNativeError(.tooManyTickets) { _ = try await ann.matchmake(NativeTicketRequest(mode: "relay", minPlayers: 2, maxPlayers: 2)) }
        // Ann says goodbye: her ticket, the oldest, goes with her session, so Bo is matched
        // with Carol, who came after him.
        await ann.close()
        try await withTimeout(10, "ann's session to end") {
            while try await server.listener.counts().sessions > 2 { await Task.yield() }
        }
        _ = try await bo.matchmake(NativeTicketRequest(mode: "relay", minPlayers: 2, maxPlayers: 2))
        _ = try await carol.matchmake(NativeTicketRequest(mode: "relay", minPlayers: 2, maxPlayers: 2))
        let matched = try #require(try await boEvents.next("bo matched") { $0.matched != nil }.matched)
        #expect(Set(matched.match.players.map(\.playerID)) == [boID, carolID])
        await bo.close()
        await carol.close()
    }

    @Test("--max-tickets-per-player and --max-tickets bound the queue")
    func queueLimits() async throws {
        let server = try await TestServer.start {
            $0.matchmakerInterval = .seconds(60)  // no pass: tickets stay queued
            $0.maxTicketsPerPlayer = 2
            $0.maxTickets = 3
        }
        defer { Task { await server.stop() } }
        let ann = makeClient(port: server.port)
        let bo = makeClient(port: server.port)
        _ = try await ann.connect()
        _ = try await bo.connect()
        _ = try await ann.matchmake(NativeTicketRequest(mode: "relay", minPlayers: 2, maxPlayers: 2))
        _ = try await ann.matchmake(NativeTicketRequest(mode: "disks", minPlayers: 2, maxPlayers: 2))
        await expectNativeError(.tooManyTickets) { _ = try await ann.matchmake(NativeTicketRequest(mode: "catrace", minPlayers: 2, maxPlayers: 2)) }
        _ = try await bo.matchmake(NativeTicketRequest(mode: "relay", minPlayers: 2, maxPlayers: 2))
        await expectNativeError(.queueFull) { _ = try await bo.matchmake(NativeTicketRequest(mode: "disks", minPlayers: 2, maxPlayers: 2)) }
        await ann.close()
        await bo.close()
    }
}
