import Foundation
import MatchHostProcessTesting
import NIOCore
import NIOPosix
import Testing

@testable import MatchHostServer

/// `matchhost serve` stopped by a port it cannot bind: one line that says why and what to
/// change, whatever else was running by then.
@Suite struct ServeBindFailureTests {
    /// The admin endpoints are up when the catrace port turns out taken: they are shut down
    /// gracefully, so Hummingbird has nothing to log, and the one line is all standard error
    /// holds, even at `--log-level warning`.
    @Test func aTakenGamePortAfterTheAdminEndpointsBoundPrintsOnlyItsLine() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let holder = try await ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).get()
        let taken = try #require(holder.localAddress?.port)
        let data = Self.temporaryData("taken-after-admin")
        defer { try? FileManager.default.removeItem(at: data) }

        let run = try await runMatchHostToExit([
            "serve", "--host", "127.0.0.1", "--catrace-port", "\(taken)", "--port", "0", "--web-port", "0", "--admin-port", "0",
            "--data", data.path, "--log-level", "warning",
        ])
        #expect(run.status == 2)
        #expect(run.stdout.hasPrefix("admin listening on 127.0.0.1:"), "the admin endpoints were bound first: \(run.stdout)")
        #expect(
            run.stderr == "matchhost: cannot serve the catrace port on 127.0.0.1:\(taken) (Address already in use, errno \(EADDRINUSE)); "
                + "choose another --catrace-port\n")
        try await holder.close()
        try await group.shutdownGracefully()
    }

    /// A host that is not this machine's is told as such, with the host flag to change: another
    /// port would not help. 192.0.2.1 is TEST-NET-1 (RFC 5737), no machine's address.
    @Test(arguments: [
        (["--host", "192.0.2.1", "--no-admin"], "catrace", "192.0.2.1:0", "--host"),
        (["--host", "127.0.0.1", "--admin-host", "192.0.2.1"], "admin", "192.0.2.1:0", "--admin-host"),
    ])
    func anAddressOfAnotherMachineNamesTheHostFlag(flags: [String], port: String, address: String, hostFlag: String) async throws {
        let data = Self.temporaryData("foreign-host")
        defer { try? FileManager.default.removeItem(at: data) }
        let run = try await runMatchHostToExit(
            ["serve", "--catrace-port", "0", "--port", "0", "--web-port", "0", "--admin-port", "0", "--data", data.path, "--log-level", "critical"]
                + flags)
        #expect(run.status == 2)
        #expect(
            run.stderr == "matchhost: cannot serve the \(port) port on \(address) (Cannot assign requested address, errno \(EADDRNOTAVAIL)); "
                + "192.0.2.1 is not an address of this machine: give \(hostFlag) one of its addresses (0.0.0.0 for all of them)\n")
    }

    /// A name that resolves to nothing (`.invalid` never does, RFC 6761) is told as the
    /// resolver says it, not as a port to change.
    @Test func aHostNameThatDoesNotResolveNamesTheHostFlag() async throws {
        let data = Self.temporaryData("unknown-host")
        defer { try? FileManager.default.removeItem(at: data) }
        let run = try await runMatchHostToExit([
            "serve", "--host", "no-such-host.invalid", "--no-admin", "--catrace-port", "0", "--port", "0", "--data", data.path,
            "--log-level", "critical",
        ])
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("matchhost: cannot serve the catrace port on no-such-host.invalid:0 (no address for this name: "), "\(run.stderr)")
        #expect(run.stderr.hasSuffix("); give --host an address or name of this machine (0.0.0.0 for all of its addresses)\n"), "\(run.stderr)")
    }

    /// Privileges are named only for a privileged port: a refused unprivileged one (a security
    /// module's rule) gets the usual remedy.
    @Test func theRemedyFollowsTheCause() {
        func remedy(_ errno: Int32, port: Int) -> String {
            PortBindError(
                port: "web", host: "10.0.0.1", hostFlag: "--host", number: port, portFlag: "--web-port", offFlag: "--no-web",
                error: IOError(errnoCode: errno, reason: "bind(descriptor:ptr:bytes:)")
            ).remedy
        }
        #expect(remedy(EADDRINUSE, port: 7357) == "choose another --web-port, or pass --no-web")
        #expect(remedy(EACCES, port: 8080) == "choose another --web-port, or pass --no-web")
        #expect(remedy(EACCES, port: 80).hasPrefix("ports below 1024 need root"))
        #expect(remedy(EACCES, port: 80).hasSuffix("; choose another --web-port, or pass --no-web"))
        #expect(remedy(EADDRNOTAVAIL, port: 80) == "10.0.0.1 is not an address of this machine: give --host one of its addresses (0.0.0.0 for all of them)")
    }

    private static func temporaryData(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("matchhost-\(name)-\(UUID().uuidString)")
    }
}
