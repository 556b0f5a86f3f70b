/// A kind of identity that another system vouches for, or that a client merely claims, as
/// opposed to the device identities the server issues itself.
public struct ExternalIdentityKind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The name storage keeps.
    public var rawValue: String

    /// A kind named `rawValue`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The `playerId` a Cat Race tutorial client sends on port 1955 (its Game Center id). The
    /// server cannot check it, so it is kept apart from every other identity: it is only ever
    /// the key of the player it created.
    public static let catRaceTutorial = ExternalIdentityKind(rawValue: "catrace_tutorial")

    /// The raw name.
    public var description: String { self.rawValue }
}

/// An identity of another system (``ExternalIdentityKind``) that signs in as a stored player.
public struct ExternalIdentity: Sendable, Hashable, CustomStringConvertible {
    /// What vouches for the id, or who claims it.
    public var kind: ExternalIdentityKind
    /// The id in that system.
    public var externalID: String

    /// Creates an identity.
    public init(kind: ExternalIdentityKind, externalID: String) {
        self.kind = kind
        self.externalID = externalID
    }

    /// A Cat Race tutorial client's claimed `playerId`.
    public static func catRaceTutorial(_ playerID: String) -> ExternalIdentity {
        ExternalIdentity(kind: .catRaceTutorial, externalID: playerID)
    }

    /// `kind:externalID`, for logs and errors.
    public var description: String { "\(self.kind.rawValue):\(self.externalID)" }
}

/// An external identity to look up, with the player to create for it if it is not stored yet
/// (``GameStore/findOrCreatePlayers(_:at:)``).
public struct ExternalIdentityClaim: Sendable, Hashable {
    /// The identity claimed.
    public var identity: ExternalIdentity
    /// The id a new player gets if the identity is not stored yet.
    public var newPlayerID: PlayerID
    /// The alias a new player gets; a stored player keeps its own.
    public var alias: String

    /// Creates a claim.
    public init(identity: ExternalIdentity, newPlayerID: PlayerID, alias: String) {
        self.identity = identity
        self.newPlayerID = newPlayerID
        self.alias = alias
    }
}
