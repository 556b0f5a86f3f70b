/// What the operator changes of a player's alias (`matchhost rename`, `PUT /api/players/{id}/alias`):
/// the alias, whether the player may change it again, or both, in one write.
public struct OperatorAliasChange: Sendable, Hashable {
    /// The alias the player is to have.
    public enum NewAlias: Sendable, Hashable {
        /// The one it has.
        case unchanged
        /// This one, which must pass the rules SET_ALIAS applies.
        case given(String)
        /// Its first: the first 8 characters of its id.
        case reset
    }

    /// The alias the player is to have.
    public var alias: NewAlias
    /// true: the player's SET_ALIAS is refused (ALIAS_LOCKED) from now on; false: allowed
    /// again; nil: as it was.
    public var locked: Bool?

    /// Creates a change.
    public init(alias: NewAlias, locked: Bool? = nil) {
        self.alias = alias
        self.locked = locked
    }
}
