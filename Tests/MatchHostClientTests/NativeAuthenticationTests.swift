import MatchHostClient
import MatchHostServer
import MatchHostWire
import NIOCore
import Testing

@Suite("Native client: handshake and authentication")
struct NativeAuthenticationTests {
    @Test("a new device gets a player and a secret; the secret brings back the same player")
    func deviceFirstContactAndReturn() async throws {
        let server = try await TestServer.start()
        let deviceID = newDeviceID()
        let first = makeClient(port: server.port, credentials: .device(id: deviceID, secret: ""))
        let states = Recorder(first.stateChanges())
        let issued = try await first.connect()
        #expect(issued.playerID.count == 32)
        #expect(issued.deviceSecret.count == 64)
        #expect(issued.sessionID.count == 32)
        #expect(issued.resumeToken.count == 64)
        #expect(!issued.sessionToken.isEmpty)
        #expect(await first.state == .connected)
        #expect(await first.authenticated == issued)
        for expected: MatchHostClient.ConnectionState in [.disconnected, .connecting, .handshaking, .authenticating, .connected] {
            #expect(try await states.next("state \(expected)") == expected)
        }
        await first.close()
        #expect(try await states.next("closed") == .closed(.closedByClient))

        let again = makeClient(port: server.port, credentials: .device(id: deviceID, secret: issued.deviceSecret))
        let returned = try await again.connect()
        #expect(returned.playerID == issued.playerID)
        #expect(returned.deviceSecret.isEmpty)
        #expect(returned.sessionID != issued.sessionID)
        await again.close()
        await server.stop()
    }

    @Test("a known device with the wrong secret gets AUTHENTICATION_FAILED and may try again")
    func wrongSecret() async throws {
        let server = try await TestServer.start()
        let deviceID = newDeviceID()
        let first = makeClient(port: server.port, credentials: .device(id: deviceID, secret: ""))
        try await first.connect()
        await first.close()

        let impostor = makeClient(port: server.port, credentials: .device(id: deviceID, secret: String(repeating: "0", count: 64)))
        await expectNativeError(.authenticationFailed) { try await impostor.connect() }
        #expect(await impostor.state == .disconnected)
        await expectNativeError(.authenticationFailed) { try await impostor.connect() }
        let empty = makeClient(port: server.port, credentials: .device(id: deviceID, secret: ""))
        await expectNativeError(.authenticationFailed) { try await empty.connect() }
        await server.stop()
    }

    @Test("a session token authenticates the same player; an altered one is TOKEN_INVALID")
    func tokens() async throws {
        let server = try await TestServer.start()
        let first = makeClient(port: server.port)
        let issued = try await first.connect()
        await first.close()

        let byToken = makeClient(port: server.port, credentials: .token(issued.sessionToken))
        let again = try await byToken.connect()
        #expect(again.playerID == issued.playerID)
        #expect(again.deviceSecret.isEmpty)
        await byToken.close()

        var altered = Array(issued.sessionToken)
        let index = altered.count / 2
        altered[index] = altered[index] == "A" ? "B" : "A"
        let forged = makeClient(port: server.port, credentials: .token(String(altered)))
        await expectNativeError(.tokenInvalid) { try await forged.connect() }
        let garbage = makeClient(port: server.port, credentials: .token("not a token"))
        await expectNativeError(.tokenInvalid) { try await garbage.connect() }
        await server.stop()
    }

    @Test("a second device links with a code from the first; unlinking it revokes the player's tokens")
    func linkingAndUnlinkingADevice() async throws {
        let server = try await TestServer.start()
        let phoneID = newDeviceID()
        let phone = makeClient(port: server.port, credentials: .device(id: phoneID, secret: ""))
        let player = try await phone.connect()
        let (code, expiresAt) = try await phone.createLinkCode()
        // Ten minutes on, in milliseconds: the token (7 days) was issued a moment before.
        let tokenIssuedAt = (player.tokenExpiresAt - 7 * 86_400) * 1000
        #expect((tokenIssuedAt + 590_000...tokenIssuedAt + 660_000).contains(expiresAt))
        await phone.close()

        let tabletID = newDeviceID()
        let tablet = makeClient(port: server.port, credentials: .link(code: code, deviceID: tabletID, secret: ""))
        let linked = try await tablet.connect()
        #expect(linked.playerID == player.playerID)
        #expect(linked.deviceSecret.count == 64, "issued to the tablet, which keeps it")
        #expect(try await tablet.devices().map(\.deviceID) == [phoneID, tabletID])
        await tablet.close()

        // Unlinked from the phone: the tablet's token no longer signs in.
        let phoneAgain = makeClient(port: server.port, credentials: .device(id: phoneID, secret: player.deviceSecret))
        try await phoneAgain.connect()
        try await phoneAgain.unlinkDevice(tabletID)
        #expect(try await phoneAgain.devices().map(\.deviceID) == [phoneID])
        await expectNativeError(.lastDevice) { try await phoneAgain.unlinkDevice(phoneID) }
        await expectNativeError(.noSuchDevice) { try await phoneAgain.unlinkDevice(tabletID) }
        await phoneAgain.close()
        let byToken = makeClient(port: server.port, credentials: .token(linked.sessionToken))
        await expectNativeError(.tokenInvalid) { try await byToken.connect() }
        let bySecret = makeClient(port: server.port, credentials: .device(id: tabletID, secret: linked.deviceSecret))
        await expectNativeError(.deviceUnlinked) { try await bySecret.connect() }
        await server.stop()
    }

    @Test("an operator's unlink: a device still linked goes on in a new session, the unlinked one's client closes")
    func operatorUnlink() async throws {
        let server = try await TestServer.start()
        let phoneID = newDeviceID()
        let phone = makeClient(port: server.port, credentials: .device(id: phoneID, secret: ""))
        let player = try await phone.connect()
        let (code, _) = try await phone.createLinkCode()
        await phone.close()
        let tabletID = newDeviceID()
        let tablet = makeClient(port: server.port, credentials: .link(code: code, deviceID: tabletID, secret: ""))
        try await tablet.connect()
        let (laptopCode, _) = try await tablet.createLinkCode()
        let laptopID = newDeviceID()
        let laptop = makeClient(port: server.port, credentials: .link(code: laptopCode, deviceID: laptopID, secret: ""))
        try await laptop.connect()

        // The operator removes the phone while the laptop holds the session: the laptop's
        // token is revoked with the session, and its own secret starts a new one.
        let events = Recorder(laptop.events)
        try await server.listener.unlinkDevice(phoneID, of: player.playerID)
        let restarted = try await events.next("the session restart") { if case .sessionRestarted = $0 { true } else { false } }
        guard case .sessionRestarted(let restart) = restarted else { return }
        #expect(restart.cause.code == .sessionRevoked)
        #expect(restart.newSession.playerID == player.playerID)
        #expect(restart.newSession.sessionID != restart.lostSession.sessionID)
        #expect(try await laptop.devices().map(\.deviceID).sorted() == [tabletID, laptopID].sorted())

        // Then the laptop itself: its client cannot sign in again, and closes.
        let states = Recorder(laptop.stateChanges())
        try await server.listener.unlinkDevice(laptopID, of: player.playerID)
        let closed = try await states.next("closed") { $0.isClosed }
        guard case .closed(.serverError(let error)) = closed else {
            Issue.record("closed with \(closed)")
            return
        }
        #expect(error.code == .deviceUnlinked)
        await tablet.close()
        await server.stop()
    }

    @Test("an expired token is TOKEN_EXPIRED")
    func expiredToken() async throws {
        let server = try await TestServer.start()
        let first = makeClient(port: server.port)
        let issued = try await first.connect()
        await first.close()

        let signer = SessionTokenSigner(key: server.configuration.tokenSigningKey)
        let expired = signer.sign(playerID: issued.playerID, expiresAt: 1_000_000)
        let client = makeClient(port: server.port, credentials: .token(expired))
        await expectNativeError(.tokenExpired) { try await client.connect() }
        await server.stop()
    }

    @Test("a game id the server does not serve is UNKNOWN_GAME")
    func unknownGame() async throws {
        let server = try await TestServer.start { $0.gameIDs = ["matchhost", "other"] }
        let wrong = makeClient(port: server.port, gameID: "not-served")
        await expectNativeError(.unknownGame) { try await wrong.connect() }
        let other = makeClient(port: server.port, gameID: "other")
        try await other.connect()
        await other.close()
        await server.stop()
    }

    @Test("a HELLO with another version is UNSUPPORTED_VERSION")
    func unsupportedVersion() async throws {
        let server = try await TestServer.start()
        let frames = try await RawNativeConnection.exchange(port: server.port, sending: [.hello(version: 2, gameID: "matchhost")])
        guard case .error(let error)? = frames.last else {
            Issue.record("expected an ERROR frame, got \(frames)")
            return
        }
        #expect(error.code == .unsupportedVersion)
        await server.stop()
    }

    @Test("an unreachable server makes connect() throw and leaves the client disconnected")
    func unreachable() async throws {
        // A port held by a socket that does not listen: connecting is refused, and no other
        // test's server can take the port meanwhile (as it could a stopped server's).
        let refusing = try RefusingPort()
        defer { refusing.release() }
        let client = makeClient(port: refusing.port)
        await #expect(throws: MatchHostClientError.self) { try await client.connect() }
        #expect(await client.state == .disconnected)
        await #expect(throws: MatchHostClientError.notConnected) {
            try await client.send([1], in: 1)
        }
    }

    @Test("connect() twice is refused; anything after close() is refused")
    func lifecycle() async throws {
        let server = try await TestServer.start()
        let client = makeClient(port: server.port)
        try await client.connect()
        await #expect(throws: MatchHostClientError.alreadyConnected) { try await client.connect() }
        await client.close()
        await client.close()
        await #expect(throws: MatchHostClientError.closed(.closedByClient)) { try await client.connect() }
        await #expect(throws: MatchHostClientError.closed(.closedByClient)) { try await client.send([1], in: 1) }
        await #expect(throws: MatchHostClientError.closed(.closedByClient)) { _ = try await client.createMatch() }
        await server.stop()
    }

    @Test("ping measures the round-trip time")
    func ping() async throws {
        let server = try await TestServer.start()
        let client = makeClient(port: server.port)
        try await client.connect()
        let roundTrip = try await client.ping()
        #expect(roundTrip > .zero)
        #expect(roundTrip < .seconds(5))
        #expect(await client.roundTripTime != nil)
        await client.close()
        await server.stop()
    }

    @Test("the backoff grows, is capped, and jitter only shortens it")
    func backoff() {
        let policy = MatchHostClient.ReconnectPolicy(
            initialDelay: .milliseconds(100), maximumDelay: .seconds(2), multiplier: 2, jitter: 0.5)
        var generator = SeededGenerator(seed: 7)
        let bases: [Int64] = [100, 200, 400, 800, 1600, 2000, 2000]
        for (index, base) in bases.enumerated() {
            let delay = policy.delay(beforeAttempt: index + 1, using: &generator)
            #expect(delay <= .milliseconds(base))
            #expect(delay >= .milliseconds(base / 2))
        }
        let exact = MatchHostClient.ReconnectPolicy(initialDelay: .milliseconds(10), maximumDelay: .seconds(1), jitter: 0)
        #expect(exact.delay(beforeAttempt: 3) == .milliseconds(40))
    }
}
