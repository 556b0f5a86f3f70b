import Crypto
import MatchHostCore
import MatchHostWire

/// Device identities: which player each device id belongs to, and a hash of the device's secret.
///
/// On first contact a device gets a new player and a random 32-byte secret; the directory
/// keeps only the secret's SHA-256 (the secret is random, so a slow password hash adds
/// nothing). Held in memory: device identities do not yet survive a restart (storage comes
/// with the persistence work).
final class DeviceDirectory {
    private struct Entry {
        let playerID: String
        let secretHash: String
    }

    private var entries: [String: Entry] = [:]
    private var random = SystemRandomNumberGenerator()
    /// The most devices kept (`--max-devices`); first contact past it is refused, so a flood
    /// of made-up device ids cannot grow memory without bound.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// How many devices are known.
    var count: Int { self.entries.count }

    /// The player of device `id` and, on first contact, the secret just issued to it.
    func authenticate(deviceID: String, secret: String) -> Result<(playerID: String, issuedSecret: String), NativeError> {
        guard !deviceID.isEmpty else {
            return .failure(NativeError(.authenticationFailed, "device id is empty"))
        }
        if let entry = self.entries[deviceID] {
            let hash = hexEncoded(SHA256.hash(data: Array(secret.utf8)))
            guard !secret.isEmpty, constantTimeEquals(hash, entry.secretHash) else {
                return .failure(NativeError(.authenticationFailed, "wrong secret for this device id"))
            }
            return .success((entry.playerID, ""))
        }
        guard secret.isEmpty else {
            // A secret for a device never seen: refuse rather than adopt an identity we did not issue.
            return .failure(NativeError(.authenticationFailed, "unknown device id with a secret; send an empty secret on first contact"))
        }
        guard self.entries.count < self.capacity else {
            return .failure(NativeError(.authenticationFailed, "this server holds its maximum of \(self.capacity) devices (--max-devices)"))
        }
        let playerID = self.random.hexString(bytes: 16)
        let issued = self.random.hexString(bytes: 32)
        self.entries[deviceID] = Entry(playerID: playerID, secretHash: hexEncoded(SHA256.hash(data: Array(issued.utf8))))
        return .success((playerID, issued))
    }
}
