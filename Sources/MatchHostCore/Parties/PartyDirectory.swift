/// A group of players who queue for matchmaking together and are kept together.
public struct Party: Hashable, Sendable {
    /// The party's id, which is also the code its members join it with.
    public let id: String
    /// The player who created it; only the leader queues it.
    public let leader: PlayerID
    /// The most members.
    public let maxSize: Int
    /// Its members, leader first, in joining order.
    public internal(set) var members: [PlayerID]
}

/// Why a party request was refused.
public enum PartyRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// No party with that id.
    case noSuchParty(String)
    /// The party has `maxSize` members already.
    case full(maxSize: Int)
    /// The player is in a party already (one at a time).
    case alreadyInParty(String)
    /// The player is not in that party.
    case notAMember(String)
    /// A size outside 2...16.
    case badSize(Int)

    /// A sentence for error replies.
    public var description: String {
        switch self {
        case .noSuchParty(let id): return "no party \(id)"
        case .full(let size): return "the party is full (\(size) players)"
        case .alreadyInParty(let id): return "already in party \(id); leave it first"
        case .notAMember(let id): return "not in party \(id)"
        case .badSize(let size): return "a party holds 2 to 16 players, not \(size)"
        }
    }
}

/// Every party on the server: who leads, who is in which.
///
/// A player is in at most one party. A leader leaving disbands the party (its members are no
/// longer kept together; they can form a new one). Ids are random codes short enough to read
/// out, drawn from an alphabet without look-alike characters.
public struct PartyDirectory {
    /// The largest party (and match) size.
    public static let maximumSize = 16
    private var parties: [String: Party] = [:]
    private var partyOfPlayer: [PlayerID: String] = [:]
    private var generator: any RandomNumberGenerator

    /// Creates an empty directory drawing ids from `generator`.
    public init(generator: any RandomNumberGenerator = SystemRandomNumberGenerator()) {
        self.generator = generator
    }

    /// How many parties exist.
    public var count: Int { self.parties.count }

    /// The party with this id.
    public func party(_ id: String) -> Party? { self.parties[id] }

    /// The party `player` is in.
    public func party(of player: PlayerID) -> Party? {
        self.partyOfPlayer[player].flatMap { self.parties[$0] }
    }

    /// Creates a party led by `leader`, its first member.
    public mutating func create(leader: PlayerID, maxSize: Int) -> Result<Party, PartyRefusal> {
        guard (2...Self.maximumSize).contains(maxSize) else { return .failure(.badSize(maxSize)) }
        if let current = self.partyOfPlayer[leader] { return .failure(.alreadyInParty(current)) }
        var id = InviteCode.random(using: &self.generator)
        while self.parties[id] != nil { id = InviteCode.random(using: &self.generator) }
        let party = Party(id: id, leader: leader, maxSize: maxSize, members: [leader])
        self.parties[id] = party
        self.partyOfPlayer[leader] = id
        return .success(party)
    }

    /// Adds `player` to the party `id` (case-insensitive).
    public mutating func join(_ id: String, player: PlayerID) -> Result<Party, PartyRefusal> {
        let id = InviteCode.normalized(id)
        guard var party = self.parties[id] else { return .failure(.noSuchParty(id)) }
        if let current = self.partyOfPlayer[player] {
            return current == id ? .success(party) : .failure(.alreadyInParty(current))
        }
        guard party.members.count < party.maxSize else { return .failure(.full(maxSize: party.maxSize)) }
        party.members.append(player)
        self.parties[id] = party
        self.partyOfPlayer[player] = id
        return .success(party)
    }

    /// Takes `player` out of its party. Returns the party as it is now: without the player,
    /// or with no members if the leader left and the party is disbanded; nil if the player was
    /// in no party (or not in `id`, when given).
    public mutating func leave(player: PlayerID, party id: String? = nil) -> (before: Party, after: Party)? {
        guard let current = self.partyOfPlayer[player], id.map(InviteCode.normalized) ?? current == current,
            var party = self.parties[current]
        else { return nil }
        let before = party
        if party.leader == player {
            for member in party.members { self.partyOfPlayer[member] = nil }
            self.parties[current] = nil
            party.members = []
        } else {
            party.members.removeAll { $0 == player }
            self.parties[current] = party
            self.partyOfPlayer[player] = nil
        }
        return (before, party)
    }
}

/// Short random codes for parties and private matches: 8 characters from 31 that cannot be
/// mistaken for one another (no 0/O, 1/I/L), so about 8.5 × 10^11 codes.
public enum InviteCode {
    private static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")

    /// A new random code.
    public static func random(using generator: inout some RandomNumberGenerator) -> String {
        String((0..<8).map { _ in self.alphabet[Int.random(in: 0..<self.alphabet.count, using: &generator)] })
    }

    /// A new random code from an existential generator.
    public static func random(using generator: inout any RandomNumberGenerator) -> String {
        var box = AnyGenerator(base: generator)
        defer { generator = box.base }
        return self.random(using: &box)
    }

    /// The code as stored: upper case, so that players may type it in either case.
    public static func normalized(_ code: String) -> String { code.uppercased() }

    private struct AnyGenerator: RandomNumberGenerator {
        var base: any RandomNumberGenerator
        mutating func next() -> UInt64 { self.base.next() }
    }
}
