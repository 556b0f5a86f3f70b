@testable import MatchHostClient
import MatchHostWire
import Testing

@Suite("Native client: which credentials a lost session tries")
struct ReauthenticationTests {
    private let lost = NativeAuthenticated(
        playerID: "p", deviceSecret: "issued", sessionToken: "held-token", tokenExpiresAt: 1, sessionID: "s", resumeToken: "r",
        sessionGraceMilliseconds: 30_000)
    private let cause = NativeError(.sessionNotFound, "gone")

    @Test("the held token first, then the device with the secret the server issued")
    func tokenThenIssuedSecret() {
        var plan = Reauthentication(
            cause: self.cause, lostSession: self.lost, unacknowledged: [], configured: .device(id: "d", secret: ""),
            issuedDeviceSecret: "issued")
        #expect(plan.credentials == .token("held-token"))
        #expect(refuse(&plan))
        #expect(plan.credentials == .device(id: "d", secret: "issued"))
        #expect(!refuse(&plan))
        #expect(plan.credentials == nil)
    }

    @Test("a device the server knew at the first connect keeps its configured secret")
    func configuredSecret() {
        var plan = Reauthentication(
            cause: self.cause, lostSession: self.lost, unacknowledged: [], configured: .device(id: "d", secret: "stored"),
            issuedDeviceSecret: nil)
        #expect(refuse(&plan))
        #expect(plan.credentials == .device(id: "d", secret: "stored"))
    }

    @Test("a linked device signs in again as a device, not with its spent link code")
    func linkedDevice() {
        let chosen = Reauthentication(
            cause: self.cause, lostSession: self.lost, unacknowledged: [], configured: .link(code: "K7M2QX9D", deviceID: "d", secret: "mine"),
            issuedDeviceSecret: nil)
        #expect(chosen.remainingCredentials == [.token("held-token"), .device(id: "d", secret: "mine")])
        let issued = Reauthentication(
            cause: self.cause, lostSession: self.lost, unacknowledged: [], configured: .link(code: "K7M2QX9D", deviceID: "d", secret: ""),
            issuedDeviceSecret: "issued")
        #expect(issued.remainingCredentials == [.token("held-token"), .device(id: "d", secret: "issued")])
    }

    @Test("a configured token is tried after the held one, and not twice")
    func configuredToken() {
        var other = Reauthentication(
            cause: self.cause, lostSession: self.lost, unacknowledged: [], configured: .token("configured"), issuedDeviceSecret: nil)
        #expect(other.remainingCredentials == [.token("held-token"), .token("configured")])
        #expect(refuse(&other))
        #expect(!refuse(&other))
        let same = Reauthentication(
            cause: self.cause, lostSession: self.lost, unacknowledged: [], configured: .token("held-token"), issuedDeviceSecret: nil)
        #expect(same.remainingCredentials == [.token("held-token")])
    }

    @Test("only refusals of the credentials move on to the next")
    func refusals() {
        #expect(Reauthentication.isCredentialRefusal(NativeError(.tokenExpired, "")))
        #expect(Reauthentication.isCredentialRefusal(NativeError(.tokenInvalid, "")))
        #expect(Reauthentication.isCredentialRefusal(NativeError(.authenticationFailed, "")))
        #expect(Reauthentication.isCredentialRefusal(NativeError(.deviceUnlinked, "")))
        #expect(!Reauthentication.isCredentialRefusal(NativeError(.storageFailed, "")))
        #expect(!Reauthentication.isCredentialRefusal(NativeError(.shuttingDown, "")))
    }
}

/// Refuses `plan`'s current credentials (outside `#expect`, which cannot mutate).
private func refuse(_ plan: inout Reauthentication) -> Bool {
    plan.credentialsRefused()
}
