import Foundation
import MatchHostCore
import MatchHostSQLite
import MatchHostStoreTesting
import MatchHostWire
import NIOCore
import Testing

@testable import MatchHostServer

/// A second device for a player (CREATE_LINK_CODE, AUTHENTICATE method 3), its list
/// (LIST_DEVICES) and its removal with every token of the player (UNLINK_DEVICE), over real
/// sockets and a real SQLite file.
@Suite struct DeviceLinkTests {
    /// A secret a client chose: long enough for a first contact or a link.
    private static let tabletSecret = String(repeating: "7e", count: 32)

    private static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-links-\(UUID().uuidString)")
    }

    private static func linkCode(_ connection: TestNativeConnection) async throws -> (code: String, expiresAt: UInt64) {
        let id = try await connection.request(.createLinkCode)
        guard case .success(.linkCode(let code, let expiresAt)) = try await connection.response(to: id) else {
            throw TestClientError.unexpected("no LINK_CODE")
        }
        return (code, expiresAt)
    }

    private static func devices(_ connection: TestNativeConnection) async throws -> [NativeDevice] {
        let id = try await connection.request(.listDevices)
        guard case .success(.devices(let devices)) = try await connection.response(to: id) else {
            throw TestClientError.unexpected("no DEVICES")
        }
        return devices
    }

    /// Sends AUTHENTICATE with `credentials` on a new connection: AUTHENTICATED, or the ERROR
    /// that closed it, within `timeout`.
    private static func authenticate(
        _ credentials: NativeCredentials, on server: RunningNativeServer, timeout: TimeAmount = .seconds(5)
    ) async throws -> Result<(TestNativeConnection, NativeAuthenticated), NativeError> {
        let connection = try await server.handshake()
        try await connection.send(.authenticate(credentials))
        switch try await connection.next(timeout: timeout) {
        case .authenticated(let authenticated): return .success((connection, authenticated))
        case .error(let error):
            await connection.close()
            return .failure(error)
        case let other: throw TestClientError.unexpected("\(other) answered AUTHENTICATE")
        }
    }

    @Test func aLinkedDeviceSignsInAsThePlayerAndTheCodeLinksOnlyIt() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = WallClock()
        let (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory, clock: clock)
        let (phone, alice) = try await server.login("alice-phone")
        let before = UInt64(clamping: clock.now().milliseconds)
        let (code, expiresAt) = try await Self.linkCode(phone)
        let after = UInt64(clamping: clock.now().milliseconds)
        #expect(code.count == 8)
        #expect((before + 600_000...after + 600_000).contains(expiresAt), "ten minutes from when it was made")

        // Typed in lower case on the tablet, with a secret the tablet chose.
        let link = NativeCredentials.link(code: code.lowercased(), deviceID: "alice-tablet", secret: Self.tabletSecret)
        let (tablet, linked) = try await Self.authenticate(link, on: server).get()
        #expect(linked.playerID == alice.playerID)
        #expect(linked.deviceSecret.isEmpty, "the secret was the client's")
        // One session per player: the tablet's replaced the phone's.
        #expect(try await phone.closingError().code == .sessionReplaced)
        // Stored before AUTHENTICATED went out.
        let stored = try #require(try await store.deviceIdentity(deviceID: "alice-tablet"))
        #expect(stored.playerID == alice.playerID)
        #expect(try await Self.devices(tablet).map(\.deviceID) == ["alice-phone", "alice-tablet"])

        // The tablet is a device of the player's now; the same link again (an answer lost) is
        // let in by its secret, and no other device may use the code.
        await tablet.close()
        #expect(try await Self.authenticate(.device(id: "alice-tablet", secret: Self.tabletSecret), on: server).get().1.playerID == alice.playerID)
        #expect(try await Self.authenticate(link, on: server).get().1.playerID == alice.playerID)
        let wrongSecret = NativeCredentials.link(code: code, deviceID: "alice-tablet", secret: String(repeating: "00", count: 32))
        #expect(try await Self.authenticate(wrongSecret, on: server).failure?.code == .authenticationFailed)
        let thief = NativeCredentials.link(code: code, deviceID: "thief", secret: Self.tabletSecret)
        #expect(try await Self.authenticate(thief, on: server).failure?.code == .linkRefused)
        #expect(try await store.deviceIdentity(deviceID: "thief") == nil)

        // A device that is another player's cannot be linked.
        let (bobPhone, _) = try await server.login("bob-phone")
        let (phoneAgain, _) = try await server.login("alice-phone", secret: alice.deviceSecret)
        let (secondCode, _) = try await Self.linkCode(phoneAgain)
        let refused = try await Self.authenticate(.link(code: secondCode, deviceID: "bob-phone", secret: Self.tabletSecret), on: server)
        #expect(refused.failure?.code == .linkRefused)
        #expect(try await store.deviceIdentity(deviceID: "bob-phone")?.playerID != alice.playerID)

        // A code past its lifetime links nothing.
        let (thirdCode, _) = try await Self.linkCode(phoneAgain)
        clock.advance(by: .seconds(601))
        let late = try await Self.authenticate(.link(code: thirdCode, deviceID: "alice-laptop", secret: Self.tabletSecret), on: server)
        #expect(late.failure == NativeError(.linkRefused, DeviceLinkCodes.Refusal.expired.description))
        #expect(try await store.deviceIdentity(deviceID: "alice-laptop") == nil)
        await bobPhone.close()
        try await server.stop()
        try await store.close()
    }

    @Test func aLinkWithAnEmptySecretIsIssuedOne() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory)
        let (phone, alice) = try await server.login("phone")
        let (code, _) = try await Self.linkCode(phone)

        let (_, linked) = try await Self.authenticate(.link(code: code, deviceID: "tablet", secret: ""), on: server).get()
        #expect(linked.playerID == alice.playerID)
        #expect(linked.deviceSecret.utf8.count == 64)
        let (_, again) = try await Self.authenticate(.device(id: "tablet", secret: linked.deviceSecret), on: server).get()
        #expect(again.playerID == alice.playerID)
        try await server.stop()
        try await store.close()
    }

    @Test func linkCodesOutliveARestartAsTheyWereClaimedAndRevoked() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = [UInt8](repeating: 9, count: 32)
        var (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory, key: key)
        let (alicePhone, alice) = try await server.login("alice-phone")
        let (alicesCode, _) = try await Self.linkCode(alicePhone)
        let (bobPhone, bob) = try await server.login("bob-phone")
        let (bobsCode, _) = try await Self.linkCode(bobPhone)
        let (_, bobTablet) = try await Self.authenticate(.link(code: bobsCode, deviceID: "bob-tablet", secret: ""), on: server).get()
        let (carolPhone, _) = try await server.login("carol-phone")
        let (carolsCode, _) = try await Self.linkCode(carolPhone)
        let (_, carolTablet) = try await Self.authenticate(.link(code: carolsCode, deviceID: "carol-tablet", secret: ""), on: server).get()
        let (carolTabletSession, _) = try await Self.authenticate(.device(id: "carol-tablet", secret: carolTablet.deviceSecret), on: server).get()
        let (carolsSecondCode, _) = try await Self.linkCode(carolTabletSession)
        let unlink = try await carolTabletSession.request(.unlinkDevice(deviceID: "carol-phone"))
        #expect(try await carolTabletSession.response(to: unlink) == .success(.done))
        // Only the codes' HMACs under the server's key are stored, never a code.
        let stored = try await store.linkCodes(validAt: 0)
        #expect(stored.map(\.playerID).sorted() == [alice.playerID, bob.playerID].sorted(), "carol's went with the unlink")
        let digest = DeviceLinkCodes.keyedDigest(key: key)
        #expect(Set(stored.map(\.digest)) == [digest(alicesCode), digest(bobsCode)])
        #expect(stored.first { $0.playerID == bob.playerID }?.claimedBy == "bob-tablet")
        try await server.stop()
        try await store.close()

        (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory, key: key)
        // Alice's code links her tablet; Bob's links no device but the one that claimed it;
        // the code the unlink revoked stays revoked.
        #expect(try await Self.authenticate(.link(code: alicesCode, deviceID: "alice-tablet", secret: ""), on: server).get().1.playerID == alice.playerID)
        #expect(try await Self.authenticate(.link(code: bobsCode, deviceID: "thief", secret: ""), on: server).failure?.code == .linkRefused)
        let retried = NativeCredentials.link(code: bobsCode, deviceID: "bob-tablet", secret: bobTablet.deviceSecret)
        #expect(try await Self.authenticate(retried, on: server).get().1.playerID == bob.playerID)
        #expect(try await Self.authenticate(.link(code: carolsSecondCode, deviceID: "carol-laptop", secret: ""), on: server).failure?.code == .linkRefused)
        try await server.stop()
        try await store.close()
    }

    @Test func unlinkingADeviceShutsItOutAndRevokesEveryTokenOfThePlayerAcrossARestart() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = [UInt8](repeating: 8, count: 32)
        var (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory, key: key)
        let (phone, alice) = try await server.login("phone")
        let (code, _) = try await Self.linkCode(phone)
        let (tablet, stolen) = try await Self.authenticate(.link(code: code, deviceID: "tablet", secret: ""), on: server).get()
        await tablet.close()
        let (owner, signedIn) = try await Self.authenticate(.device(id: "phone", secret: alice.deviceSecret), on: server).get()

        // A refused unlink changes nothing: the tokens held still sign in.
        let unknown = try await owner.request(.unlinkDevice(deviceID: "nowhere"))
        #expect(try await owner.response(to: unknown).failure?.code == .noSuchDevice)
        #expect(try await store.tokenGenerations().isEmpty)
        #expect(try await Self.authenticate(.token(stolen.sessionToken), on: server).get().1.playerID == alice.playerID)
        let (owner2, _) = try await Self.authenticate(.token(signedIn.sessionToken), on: server).get()

        let unlink = try await owner2.request(.unlinkDevice(deviceID: "tablet"))
        guard case .success(.done) = try await owner2.response(to: unlink) else {
            Issue.record("UNLINK_DEVICE was not done")
            return
        }
        #expect(try await store.deviceIdentity(deviceID: "tablet") == nil)
        #expect(try await Self.devices(owner2).map(\.deviceID) == ["phone"])
        let last = try await owner2.request(.unlinkDevice(deviceID: "phone"))
        #expect(try await owner2.response(to: last).failure?.code == .lastDevice)

        // The unlinked tablet gets in neither with its secret (it is told it was unlinked, and
        // is not made a new player) nor with its token, and the phone's tokens from before are
        // refused too; the phone's secret still signs it in.
        #expect(try await Self.authenticate(.device(id: "tablet", secret: stolen.deviceSecret), on: server).failure?.code == .deviceUnlinked)
        #expect(try await Self.authenticate(.device(id: "tablet", secret: ""), on: server).failure?.code == .deviceUnlinked)
        #expect(try await Self.authenticate(.token(stolen.sessionToken), on: server).failure?.code == .tokenInvalid)
        #expect(try await Self.authenticate(.token(signedIn.sessionToken), on: server).failure?.code == .tokenInvalid)
        let (_, fresh) = try await Self.authenticate(.device(id: "phone", secret: alice.deviceSecret), on: server).get()
        #expect(try await Self.authenticate(.token(fresh.sessionToken), on: server).get().1.playerID == alice.playerID)

        // After a restart on the same file, the server still refuses the old tokens; and the
        // next unlink refuses the tokens issued before it, those of the run before the restart too.
        try await server.stop()
        try await store.close()
        (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory, key: key)
        #expect(try await Self.authenticate(.token(stolen.sessionToken), on: server).failure?.code == .tokenInvalid)
        let (phoneAfter, _) = try await Self.authenticate(.token(fresh.sessionToken), on: server).get()
        let (laptopCode, _) = try await Self.linkCode(phoneAfter)
        let (laptop, _) = try await Self.authenticate(.link(code: laptopCode, deviceID: "laptop", secret: Self.tabletSecret), on: server).get()
        let again = try await laptop.request(.unlinkDevice(deviceID: "laptop"))
        #expect(try await laptop.response(to: again) == .success(.done))
        #expect(try await store.tokenGenerations() == [alice.playerID: 2])
        #expect(try await Self.authenticate(.token(fresh.sessionToken), on: server).failure?.code == .tokenInvalid)
        try await server.stop()
        try await store.close()
    }

    /// Alice signs in on her phone and links a tablet, which a thief holds: it unlinks her
    /// phone. Returns her first sign-in and the tablet's connection, signed in.
    private static func stolenAccount(on server: RunningNativeServer) async throws -> (alice: NativeAuthenticated, tablet: TestNativeConnection) {
        let (phone, alice) = try await server.login("phone")
        let (code, _) = try await Self.linkCode(phone)
        let (tablet, _) = try await Self.authenticate(.link(code: code, deviceID: "tablet", secret: Self.tabletSecret), on: server).get()
        let unlinkPhone = try await tablet.request(.unlinkDevice(deviceID: "phone"))
        #expect(try await tablet.response(to: unlinkPhone) == .success(.done))
        #expect(try await Self.authenticate(.device(id: "phone", secret: alice.deviceSecret), on: server).failure?.code == .deviceUnlinked)
        return (alice, tablet)
    }

    @Test func theOperatorGivesAnAccountBackFromAThiefWithALinkCodeAndAnUnlink() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory)
        let (alice, tablet) = try await Self.stolenAccount(on: server)

        // The tablet is the player's only device: the operator cannot remove it yet, and the
        // refusal leaves the thief's session alone.
        await #expect(throws: GameStoreError.lastDevice(alice.playerID)) { try await server.listener.unlinkDevice("tablet", of: alice.playerID) }
        await #expect(throws: GameStoreError.unknownDevice(deviceID: "nowhere")) {
            try await server.listener.unlinkDevice("nowhere", of: alice.playerID)
        }
        await #expect(throws: GameStoreError.unknownPlayer("nobody")) { _ = try await server.listener.createLinkCode(for: "nobody") }
        #expect(try await tablet.drain() == [])

        // The operator's code links the owner's phone again, with a new secret.
        let (operatorCode, expiresAt) = try await server.listener.createLinkCode(for: alice.playerID)
        #expect(expiresAt.milliseconds > UnixMillis.now().milliseconds + 590_000)
        let newSecret = String(repeating: "5a", count: 32)
        let (owner, relinked) = try await Self.authenticate(.link(code: operatorCode, deviceID: "phone", secret: newSecret), on: server).get()
        #expect(relinked.playerID == alice.playerID)
        #expect(try await tablet.closingError().code == .sessionReplaced)
        await owner.close()
        // The thief comes back with the tablet's secret (its unlink of the phone revoked the
        // token it had), and holds the player's session.
        let (thief, thiefSession) = try await Self.authenticate(.device(id: "tablet", secret: Self.tabletSecret), on: server).get()

        // The operator removes the tablet: the thief's session ends at once, and neither its
        // token nor its secret signs in again; the owner's phone does, with its secret.
        try await server.listener.unlinkDevice("tablet", of: alice.playerID)
        #expect(try await thief.closingError().code == .sessionRevoked)
        #expect(try await store.deviceIdentity(deviceID: "tablet") == nil)
        #expect(try await Self.authenticate(.token(thiefSession.sessionToken), on: server).failure?.code == .tokenInvalid)
        #expect(try await Self.authenticate(.device(id: "tablet", secret: Self.tabletSecret), on: server).failure?.code == .deviceUnlinked)
        #expect(try await Self.authenticate(.token(relinked.sessionToken), on: server).failure?.code == .tokenInvalid)
        let (back, _) = try await Self.authenticate(.device(id: "phone", secret: newSecret), on: server).get()
        #expect(try await Self.devices(back).map(\.deviceID) == ["phone"])
        try await server.stop()
        try await store.close()
    }

    @Test func theOperatorTakesTheAccountBackFromAThiefInOneStep() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory)
        let (alice, tablet) = try await Self.stolenAccount(on: server)
        // The thief signs in again (its unlink revoked its token) and asks for a code of its own.
        await tablet.close()
        let (thief, thiefSession) = try await Self.authenticate(.device(id: "tablet", secret: Self.tabletSecret), on: server).get()
        let (thiefCode, _) = try await Self.linkCode(thief)

        let (removed, ownerCode, _) = try await server.listener.recoverAccount(of: alice.playerID)
        #expect(removed == ["tablet"])
        #expect(try await thief.closingError().code == .sessionRevoked)
        #expect(try await store.devices(playerID: alice.playerID).isEmpty)
        // Nothing of the thief's signs in or links any more.
        #expect(try await Self.authenticate(.device(id: "tablet", secret: Self.tabletSecret), on: server).failure?.code == .deviceUnlinked)
        #expect(try await Self.authenticate(.token(thiefSession.sessionToken), on: server).failure?.code == .tokenInvalid)
        let thiefLink = try await Self.authenticate(.link(code: thiefCode, deviceID: "thief-2", secret: Self.tabletSecret), on: server)
        #expect(thiefLink.failure?.code == .linkRefused)

        // The owner's phone, unlinked by the thief, is linked again with the operator's code.
        let newSecret = String(repeating: "5a", count: 32)
        let (owner, back) = try await Self.authenticate(.link(code: ownerCode, deviceID: "phone", secret: newSecret), on: server).get()
        #expect(back.playerID == alice.playerID)
        #expect(try await Self.devices(owner).map(\.deviceID) == ["phone"])
        await #expect(throws: GameStoreError.unknownPlayer("nobody")) { _ = try await server.listener.recoverAccount(of: "nobody") }
        try await server.stop()
        try await store.close()
    }

    @Test func aLinkWhoseCodeWasClaimedBeforeARecoveryLinksNothing() async throws {
        let store = TurnByTurnDeviceStore(device: "laptop")
        let server = try await RunningNativeServer.start { $0.store = store }
        let (phone, alice) = try await server.login("phone")
        let (code, _) = try await Self.linkCode(phone)
        await store.turns.arm()
        let linking = Task { try await Self.authenticate(.link(code: code, deviceID: "laptop", secret: Self.tabletSecret), on: server) }
        // The code is claimed and the laptop's read is out when the recovery is committed.
        await store.turns.waitForRead(1)
        _ = try await server.listener.recoverAccount(of: alice.playerID)
        await store.turns.releaseNext()
        await store.turns.waitForRead(2)
        await store.turns.releaseNext()
        #expect(try await linking.value.failure?.code == .linkRefused)
        #expect(try await store.inner.deviceIdentity(deviceID: "laptop") == nil)
        try await server.stop()
    }

    @Test func whileARecoveryIsWrittenTheThiefNeitherLinksNorReplacesTheOwnersCode() async throws {
        let store = TurnByTurnDeviceStore(device: "laptop", holdsRecovery: true)
        let server = try await RunningNativeServer.start { $0.store = store }
        // The thief holds the player's only device, and has a code out for another.
        let (thief, alice) = try await server.login("tablet")
        let (code, _) = try await Self.linkCode(thief)
        await store.turns.arm()
        let linking = Task { try await Self.authenticate(.link(code: code, deviceID: "laptop", secret: Self.tabletSecret), on: server) }
        await store.turns.waitForRead(1)
        let recovering = Task { try await server.listener.recoverAccount(of: alice.playerID) }
        await store.recoveryEntered.wait()

        // While the recovery is written: the link's read comes back, and links nothing; the
        // thief asks for a code, which waits behind the recovery.
        await store.turns.releaseNext()
        #expect(try await linking.value.failure?.code == .linkRefused)
        _ = try await thief.request(.createLinkCode)
        await store.recoveryRelease.open()
        let (removed, ownerCode, _) = try await recovering.value
        #expect(removed == ["tablet"])
        #expect(try await thief.closingError().code == .sessionRevoked)
        // The thief's request made no code to replace the owner's: the owner's links.
        let (_, owner) = try await Self.authenticate(.link(code: ownerCode, deviceID: "phone", secret: Self.tabletSecret), on: server).get()
        #expect(owner.playerID == alice.playerID)
        try await server.stop()
    }

    /// A store whose link codes cannot be stored (a full disk).
    private struct LinkCodeFailingStore: ForwardingGameStore {
        let inner: any GameStore
        func putLinkCode(_ code: LinkCodeRecord, at now: UnixMillis) async throws { throw GameStoreError.storageFailed(reason: "disk full") }
    }

    /// A code the database could not store is not handed out; and the code it replaced, gone
    /// from the running server, is gone from the store too, so a restart cannot bring it back.
    @Test func aLinkCodeTheDatabaseCannotStoreIsNotHandedOutAndTheOneItReplacedIsGone() async throws {
        let inner = InMemoryGameStore()
        let key = [UInt8](repeating: 3, count: 32)
        let healthy = try await RunningNativeServer.start {
            $0.store = inner
            $0.tokenSigningKey = key
        }
        let (phone, alice) = try await healthy.login("phone")
        let (first, _) = try await Self.linkCode(phone)
        await phone.close()
        try await healthy.stop()

        let server = try await RunningNativeServer.start {
            $0.store = LinkCodeFailingStore(inner: inner)
            $0.tokenSigningKey = key
        }
        // The first code came back with the restart: the phone, a device of the player
        // already, may present it (and signs in by its secret).
        let (phoneAgain, _) = try await Self.authenticate(.link(code: first, deviceID: "phone", secret: alice.deviceSecret), on: server).get()
        let id = try await phoneAgain.request(.createLinkCode)
        #expect(try await phoneAgain.response(to: id).failure?.code == .storageUnavailable)
        let late = try await Self.authenticate(.link(code: first, deviceID: "tablet", secret: ""), on: server)
        #expect(late.failure == NativeError(.linkRefused, DeviceLinkCodes.Refusal.unknown.description), "replaced by the code not stored")
        #expect(await inner.linkCodes(validAt: 0).isEmpty, "and forgotten in the store too")
        try await server.stop()
    }

    @Test func theOperatorMakesNoLinkCodeForAPlayerAtItsMostDevices() async throws {
        let server = try await RunningNativeServer.start { $0.maxDevicesPerPlayer = 1 }
        let (_, alice) = try await server.login("phone")
        await #expect(throws: GameStoreError.tooManyDevices(alice.playerID, limit: 1)) {
            _ = try await server.listener.createLinkCode(for: alice.playerID)
        }
        try await server.stop()
    }

    /// Holds UNLINK_DEVICE's write until released; reads of `staleDevice` are made at once, and
    /// their answer held until released (what a read that began before an unlink's commit and
    /// ended after it returns).
    private struct HeldDeviceStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let unlinkEntered = Gate()
        let unlinkRelease = Gate()
        let staleDevice: String
        let readEntered = Gate()
        let readRelease = Gate()

        func removeDeviceIdentity(deviceID: String, playerID: PlayerID, at: UnixMillis) async throws -> UInt64 {
            await self.unlinkEntered.open()
            await self.unlinkRelease.wait()
            return try await self.inner.removeDeviceIdentity(deviceID: deviceID, playerID: playerID, at: at)
        }

        func deviceIdentity(deviceID: String) async throws -> DeviceIdentityRecord? {
            let identity = try await self.inner.deviceIdentity(deviceID: deviceID)
            if deviceID == self.staleDevice {
                await self.readEntered.open()
                await self.readRelease.wait()
            }
            return identity
        }
    }

    @Test func whileAnUnlinkIsWrittenTheDeviceAndThePlayersTokensAreRefused() async throws {
        let store = HeldDeviceStore(staleDevice: "none")
        let server = try await RunningNativeServer.start { $0.store = store }
        let (phone, alice) = try await server.login("phone")
        let (code, _) = try await Self.linkCode(phone)
        let (tablet, stolen) = try await Self.authenticate(.link(code: code, deviceID: "tablet", secret: Self.tabletSecret), on: server).get()
        await tablet.close()
        let (owner, signedIn) = try await Self.authenticate(.device(id: "phone", secret: alice.deviceSecret), on: server).get()

        let unlink = try await owner.request(.unlinkDevice(deviceID: "tablet"))
        await store.unlinkEntered.wait()
        let bySecret = try await Self.authenticate(.device(id: "tablet", secret: Self.tabletSecret), on: server)
        #expect(bySecret.failure == NativeError(.authenticationFailed, "this device is being unlinked from its player"))
        #expect(try await Self.authenticate(.token(stolen.sessionToken), on: server).failure?.code == .tokenInvalid)
        #expect(try await Self.authenticate(.token(signedIn.sessionToken), on: server).failure?.code == .tokenInvalid)
        await store.unlinkRelease.open()
        #expect(try await owner.response(to: unlink) == .success(.done))
        #expect(try await Self.authenticate(.token(stolen.sessionToken), on: server).failure?.code == .tokenInvalid)
        try await server.stop()
    }

    @Test func anotherPlayerNamingADeviceInAnUnlinkDoesNotLockItOut() async throws {
        let store = HeldDeviceStore(staleDevice: "none")
        let server = try await RunningNativeServer.start { $0.store = store }
        let (_, alice) = try await server.login("alice-phone")
        let (mallory, _) = try await server.login("mallory-phone")

        let unlink = try await mallory.request(.unlinkDevice(deviceID: "alice-phone"))
        await store.unlinkEntered.wait()
        // Held in the store, Mallory's unlink keeps neither Alice's secret nor her tokens out.
        #expect(try await Self.authenticate(.device(id: "alice-phone", secret: alice.deviceSecret), on: server).get().1.playerID == alice.playerID)
        #expect(try await Self.authenticate(.token(alice.sessionToken), on: server).get().1.playerID == alice.playerID)
        await store.unlinkRelease.open()
        #expect(try await mallory.response(to: unlink).failure?.code == .noSuchDevice)
        try await server.stop()
    }

    @Test func aSignInThatReadTheDeviceBeforeItsUnlinkWasCommittedReadsItAgain() async throws {
        let store = HeldDeviceStore(staleDevice: "tablet")
        let server = try await RunningNativeServer.start { $0.store = store }
        let (phone, alice) = try await server.login("phone")
        let (code, _) = try await Self.linkCode(phone)
        let linking = Task { try await Self.authenticate(.link(code: code, deviceID: "tablet", secret: Self.tabletSecret), on: server) }
        // The link's own read of the device (none yet) is held, then let go.
        await store.readEntered.wait()
        await store.readRelease.open()
        let (tablet, _) = try await linking.value.get()
        await tablet.close()
        let (owner, _) = try await Self.authenticate(.device(id: "phone", secret: alice.deviceSecret), on: server).get()

        // The tablet's sign-in reads its device, still linked; the unlink is committed before
        // that read's answer reaches the server.
        await store.readEntered.close()
        await store.readRelease.close()
        let signingIn = Task { try await Self.authenticate(.device(id: "tablet", secret: Self.tabletSecret), on: server) }
        await store.readEntered.wait()
        await store.unlinkRelease.open()
        let unlink = try await owner.request(.unlinkDevice(deviceID: "tablet"))
        #expect(try await owner.response(to: unlink) == .success(.done))
        await store.readRelease.open()
        // Read again, the device is gone: it is told it was unlinked.
        #expect(try await signingIn.value.failure?.code == .deviceUnlinked)
        try await server.stop()
    }

    /// Once armed, holds each read of `device` until the test releases it, one at a time; and,
    /// if `holdsRecovery`, an operator's recovery until released.
    private struct TurnByTurnDeviceStore: ForwardingGameStore {
        let inner: any GameStore = InMemoryGameStore()
        let device: String
        var holdsRecovery = false
        let turns = ReadTurns()
        let recoveryEntered = Gate()
        let recoveryRelease = Gate()

        func removeAllDeviceIdentities(playerID: PlayerID, at: UnixMillis) async throws -> (generation: UInt64, removed: [String]) {
            if self.holdsRecovery {
                await self.recoveryEntered.open()
                await self.recoveryRelease.wait()
            }
            return try await self.inner.removeAllDeviceIdentities(playerID: playerID, at: at)
        }

        func deviceIdentity(deviceID: String) async throws -> DeviceIdentityRecord? {
            let identity = try await self.inner.deviceIdentity(deviceID: deviceID)
            if deviceID == self.device { await self.turns.enter() }
            return identity
        }
    }

    /// The reads a ``TurnByTurnDeviceStore`` holds: the test waits for the n-th to come, and
    /// lets them go one by one.
    private actor ReadTurns {
        private var armed = false
        private var entered = 0
        private var released = 0
        private var enteredWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        private var held: [Int: CheckedContinuation<Void, Never>] = [:]

        func arm() { self.armed = true }

        func enter() async {
            guard self.armed else { return }
            self.entered += 1
            let number = self.entered
            self.enteredWaiters.removeAll { waiter in
                guard waiter.count <= number else { return false }
                waiter.continuation.resume()
                return true
            }
            guard self.released < number else { return }
            await withCheckedContinuation { self.held[number] = $0 }
        }

        /// Returns once `count` reads in all have come.
        func waitForRead(_ count: Int) async {
            guard self.entered < count else { return }
            await withCheckedContinuation { self.enteredWaiters.append((count, $0)) }
        }

        /// Lets the next read go (now, or when it comes).
        func releaseNext() {
            self.released += 1
            self.held.removeValue(forKey: self.released)?.resume()
        }
    }

    @Test func aSignInReadsItsDeviceAgainAfterEachUnlinkCommittedMeanwhileEightTimesAtMost() async throws {
        let store = TurnByTurnDeviceStore(device: "tablet")
        let server = try await RunningNativeServer.start {
            $0.store = store
            $0.maxDevicesPerPlayer = 20
        }
        let (phone, alice) = try await server.login("phone")
        let (code, _) = try await Self.linkCode(phone)
        _ = try await Self.authenticate(.link(code: code, deviceID: "tablet", secret: Self.tabletSecret), on: server).get()
        for spare in 0..<17 {
            try await store.inner.addDeviceIdentity(
                deviceID: "spare-\(spare)", secretHash: [UInt8](repeating: 1, count: 32), playerID: alice.playerID,
                linkedAt: UnixMillis(milliseconds: 0), maximumDevices: 20)
        }
        await store.turns.arm()
        var unlinked = 0

        // Eight unlinks, each committed while a read of the tablet is out: each read is made
        // again, and the ninth, with nothing committed meanwhile, signs the tablet in.
        let patient = Task { try await Self.authenticate(.device(id: "tablet", secret: Self.tabletSecret), on: server, timeout: .seconds(60)) }
        for read in 1...9 {
            await store.turns.waitForRead(read)
            if read <= 8 {
                try await server.listener.unlinkDevice("spare-\(unlinked)", of: alice.playerID)
                unlinked += 1
            }
            await store.turns.releaseNext()
        }
        #expect(try await patient.value.get().1.playerID == alice.playerID)

        // Nine: the sign-in gives up, and is told to try again later.
        let unlucky = Task { try await Self.authenticate(.device(id: "tablet", secret: Self.tabletSecret), on: server, timeout: .seconds(60)) }
        for read in 10...18 {
            await store.turns.waitForRead(read)
            try await server.listener.unlinkDevice("spare-\(unlinked)", of: alice.playerID)
            unlinked += 1
            await store.turns.releaseNext()
        }
        #expect(try await unlucky.value.failure?.code == .storageFailed)
        try await server.stop()
    }

    @Test func aPlayerHasAtMostItsDevicesAndABannedPlayerLinksNone() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory) { $0.maxDevicesPerPlayer = 2 }
        let (phone, alice) = try await server.login("phone")
        let (code, _) = try await Self.linkCode(phone)
        let (tablet, _) = try await Self.authenticate(.link(code: code, deviceID: "tablet", secret: Self.tabletSecret), on: server).get()

        let refused = try await tablet.request(.createLinkCode)
        #expect(try await tablet.response(to: refused).failure?.code == .tooManyDevices)

        // A code made before the ban links nothing after it.
        let unlink = try await tablet.request(.unlinkDevice(deviceID: "phone"))
        _ = try await tablet.response(to: unlink)
        let (nextCode, _) = try await Self.linkCode(tablet)
        _ = try await server.listener.setBan(reason: "smurfing", of: alice.playerID)
        let banned = try await Self.authenticate(.link(code: nextCode, deviceID: "laptop", secret: Self.tabletSecret), on: server)
        #expect(banned.failure?.code == .playerBanned)
        #expect(try await store.deviceIdentity(deviceID: "laptop") == nil)
        try await server.stop()
        try await store.close()
    }

    @Test func wrongLinkCodesCountAsGuessesOfTheNetwork() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (store, server) = try await RunningNativeServer.start(onSQLiteIn: directory) { $0.maxFailedJoinsPerMinute = 2 }
        let (phone, _) = try await server.login("phone")
        let (code, _) = try await Self.linkCode(phone)

        for guess in ["AAAAAAAA", "BBBBBBBB"] {
            let wrong = try await Self.authenticate(.link(code: guess, deviceID: "tablet", secret: Self.tabletSecret), on: server)
            #expect(wrong.failure == NativeError(.linkRefused, DeviceLinkCodes.Refusal.unknown.description))
        }
        // Out of guesses, the right code is not looked up either.
        let right = try await Self.authenticate(.link(code: code, deviceID: "tablet", secret: Self.tabletSecret), on: server)
        #expect(right.failure?.code == .rateLimited)
        #expect(try await store.deviceIdentity(deviceID: "tablet") == nil)
        try await server.stop()
        try await store.close()
    }
}
