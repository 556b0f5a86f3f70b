/// A condition on one property of another ticket.
public enum MatchmakerPredicate: Sendable, Hashable {
    /// The string property `key` is `value`.
    case equals(String, String)
    /// The number property `key` lies in `min...max` (inclusive); a nil bound is open.
    case range(String, min: Double?, max: Double?)

    /// Whether a ticket with these properties satisfies the predicate; a missing property never does.
    public func holds(stringProperties: [String: String], numberProperties: [String: Double]) -> Bool {
        switch self {
        case .equals(let key, let value):
            return stringProperties[key] == value
        case .range(let key, let min, let max):
            guard let number = numberProperties[key] else { return false }
            return number >= (min ?? -.infinity) && number <= (max ?? .infinity)
        }
    }
}

/// One clause of a ``MatchmakerQuery``: the other ticket must, or must not, satisfy a predicate.
///
/// A missing property fails a `require` and passes an `exclude`: a ticket that says
/// nothing about its platform is not excluded by "not mobile".
public struct MatchmakerClause: Sendable, Hashable {
    /// The predicate must hold (`true`) or must not hold (`false`).
    public var isRequired: Bool
    /// The condition.
    public var predicate: MatchmakerPredicate

    /// Creates a clause.
    public init(isRequired: Bool, predicate: MatchmakerPredicate) {
        self.isRequired = isRequired
        self.predicate = predicate
    }

    /// The other ticket must satisfy `predicate`.
    public static func require(_ predicate: MatchmakerPredicate) -> MatchmakerClause {
        MatchmakerClause(isRequired: true, predicate: predicate)
    }

    /// The other ticket must not satisfy `predicate`.
    public static func exclude(_ predicate: MatchmakerPredicate) -> MatchmakerClause {
        MatchmakerClause(isRequired: false, predicate: predicate)
    }

    /// Whether a ticket with these properties passes this clause.
    public func accepts(stringProperties: [String: String], numberProperties: [String: Double]) -> Bool {
        self.predicate.holds(stringProperties: stringProperties, numberProperties: numberProperties) == self.isRequired
    }
}

/// What a ticket asks of every other ticket in its group: all of its clauses must pass.
/// Compatibility is mutual (see ``MatchmakerTicket/isCompatible(with:)``).
///
/// ```swift
/// let query = MatchmakerQuery([
///     .require(.equals("region", "eu")),
///     .require(.range("skill", min: 1300, max: 1700)),
///     .exclude(.equals("platform", "mobile")),
/// ])
/// ```
public struct MatchmakerQuery: Sendable, Hashable {
    /// The clauses, all of which must pass.
    public var clauses: [MatchmakerClause]

    /// Creates a query from its clauses.
    public init(_ clauses: [MatchmakerClause] = []) {
        self.clauses = clauses
    }

    /// The query that accepts every ticket.
    public static let any = MatchmakerQuery()

    /// Whether a ticket with these properties passes every clause. This is the reference the
    /// matchmaker's compiled form agrees with; it is not used on the matchmaker's hot path.
    public func accepts(stringProperties: [String: String], numberProperties: [String: Double]) -> Bool {
        self.clauses.allSatisfy { $0.accepts(stringProperties: stringProperties, numberProperties: numberProperties) }
    }
}
