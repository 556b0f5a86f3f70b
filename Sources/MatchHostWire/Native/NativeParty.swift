import NIOCore

/// A party: players who queue for matchmaking as one ticket and are kept together.
public struct NativePartyInfo: Hashable, Sendable {
    /// The party's id, which is also the code others join it with.
    public var partyID: String
    /// The player who created it; only the leader queues the party.
    public var leader: String
    /// The most members.
    public var maxSize: UInt8
    /// Its members, leader first; empty when the party has been disbanded.
    public var members: [String]

    /// Creates the description.
    public init(partyID: String, leader: String, maxSize: UInt8, members: [String]) {
        self.partyID = partyID
        self.leader = leader
        self.maxSize = maxSize
        self.members = members
    }

    init(from body: inout ByteBuffer) throws {
        self.partyID = try body.readNativeString(field: "party id", maximumLength: NativeLimits.identifier)
        self.leader = try body.readNativeString(field: "leader", maximumLength: NativeLimits.identifier)
        self.maxSize = try body.readWireByte(field: "max size")
        let count = Int(try body.readWireByte(field: "member count"))
        var members: [String] = []
        members.reserveCapacity(count)
        for _ in 0..<count {
            members.append(try body.readNativeString(field: "member", maximumLength: NativeLimits.identifier))
        }
        self.members = members
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeNativeString(self.partyID)
        buffer.writeNativeString(self.leader)
        buffer.writeWireByte(self.maxSize)
        buffer.writeWireByte(UInt8(self.members.count))
        for member in self.members { buffer.writeNativeString(member) }
    }
}
