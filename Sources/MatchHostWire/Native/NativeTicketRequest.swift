import NIOCore

/// What MATCHMAKE asks the matchmaker for: a game, a group size, the asker's properties and
/// what it wants of the others'.
public struct NativeTicketRequest: Hashable, Sendable {
    /// The game mode to play.
    public var mode: String
    /// The fewest players the match may start with (2 to 16).
    public var minPlayers: UInt8
    /// The most players the match may have (`minPlayers` to 16).
    public var maxPlayers: UInt8
    /// Text properties others' queries can test (region, language...), in key order on the wire.
    public var stringProperties: [String: String]
    /// Number properties others' queries can test (skill, level...).
    public var numberProperties: [String: Double]
    /// Conditions on the other tickets' properties.
    public var query: [NativeQueryClause]
    /// A party to queue as a whole (the asker must lead it); empty to queue alone.
    public var partyID: String

    /// Creates a ticket request.
    public init(
        mode: String, minPlayers: UInt8, maxPlayers: UInt8, stringProperties: [String: String] = [:],
        numberProperties: [String: Double] = [:], query: [NativeQueryClause] = [], partyID: String = ""
    ) {
        self.mode = mode
        self.minPlayers = minPlayers
        self.maxPlayers = maxPlayers
        self.stringProperties = stringProperties
        self.numberProperties = numberProperties
        self.query = query
        self.partyID = partyID
    }

    init(from body: inout ByteBuffer) throws {
        self.mode = try body.readNativeString(field: "mode", maximumLength: NativeLimits.mode)
        self.minPlayers = try body.readWireByte(field: "min players")
        self.maxPlayers = try body.readWireByte(field: "max players")
        var strings: [String: String] = [:]
        for _ in 0..<Int(try body.readWireByte(field: "string property count")) {
            let key = try body.readNativeString(field: "property key", maximumLength: NativeLimits.mode)
            strings[key] = try body.readNativeString(field: "property value", maximumLength: NativeLimits.identifier)
        }
        self.stringProperties = strings
        var numbers: [String: Double] = [:]
        for _ in 0..<Int(try body.readWireByte(field: "number property count")) {
            let key = try body.readNativeString(field: "property key", maximumLength: NativeLimits.mode)
            numbers[key] = try body.readNativeDouble(field: "property value")
        }
        self.numberProperties = numbers
        let clauseCount = Int(try body.readWireByte(field: "clause count"))
        var clauses: [NativeQueryClause] = []
        clauses.reserveCapacity(clauseCount)
        for _ in 0..<clauseCount { clauses.append(try NativeQueryClause(from: &body)) }
        self.query = clauses
        self.partyID = try body.readNativeString(field: "party id", maximumLength: NativeLimits.identifier)
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeNativeString(self.mode)
        buffer.writeWireByte(self.minPlayers)
        buffer.writeWireByte(self.maxPlayers)
        buffer.writeWireByte(UInt8(self.stringProperties.count))
        for key in self.stringProperties.keys.sorted() {
            buffer.writeNativeString(key)
            buffer.writeNativeString(self.stringProperties[key]!)
        }
        buffer.writeWireByte(UInt8(self.numberProperties.count))
        for key in self.numberProperties.keys.sorted() {
            buffer.writeNativeString(key)
            buffer.writeNativeDouble(self.numberProperties[key]!)
        }
        buffer.writeWireByte(UInt8(self.query.count))
        for clause in self.query { clause.encode(into: &buffer) }
        buffer.writeNativeString(self.partyID)
    }
}

/// One condition of a ticket's query on another ticket's properties.
public struct NativeQueryClause: Hashable, Sendable {
    /// Whether the other ticket must match the predicate or must not.
    public enum Occurrence: UInt8, Hashable, Sendable {
        /// The other ticket must match (a missing property does not).
        case require = 1
        /// The other ticket must not match (a missing property passes).
        case exclude = 2
    }

    /// What is tested.
    public enum Predicate: Hashable, Sendable {
        /// Kind 1: the text property `key` equals `value`.
        case equals(key: String, value: String)
        /// Kind 2: the number property `key` lies within `min...max` (either bound may be open).
        case range(key: String, min: Double?, max: Double?)
    }

    /// Require or exclude.
    public var occurrence: Occurrence
    /// The test.
    public var predicate: Predicate

    /// Creates a clause.
    public init(_ occurrence: Occurrence, _ predicate: Predicate) {
        self.occurrence = occurrence
        self.predicate = predicate
    }

    init(from body: inout ByteBuffer) throws {
        let rawOccurrence = try body.readWireByte(field: "clause occurrence")
        guard let occurrence = Occurrence(rawValue: rawOccurrence) else {
            throw NativeWireError.invalidValue(field: "clause occurrence", value: UInt64(rawOccurrence))
        }
        self.occurrence = occurrence
        let kind = try body.readWireByte(field: "predicate kind")
        let key = try body.readNativeString(field: "property key", maximumLength: NativeLimits.mode)
        switch kind {
        case 1:
            self.predicate = .equals(
                key: key, value: try body.readNativeString(field: "property value", maximumLength: NativeLimits.identifier))
        case 2:
            let bounds = try body.readWireByte(field: "range bounds")
            let low = try body.readNativeDouble(field: "range min")
            let high = try body.readNativeDouble(field: "range max")
            self.predicate = .range(key: key, min: bounds & 1 != 0 ? low : nil, max: bounds & 2 != 0 ? high : nil)
        default:
            throw NativeWireError.invalidValue(field: "predicate kind", value: UInt64(kind))
        }
    }

    func encode(into buffer: inout ByteBuffer) {
        buffer.writeWireByte(self.occurrence.rawValue)
        switch self.predicate {
        case .equals(let key, let value):
            buffer.writeWireByte(1)
            buffer.writeNativeString(key)
            buffer.writeNativeString(value)
        case .range(let key, let low, let high):
            buffer.writeWireByte(2)
            buffer.writeNativeString(key)
            buffer.writeWireByte((low == nil ? 0 : 1) | (high == nil ? 0 : 2))
            buffer.writeNativeDouble(low ?? 0)
            buffer.writeNativeDouble(high ?? 0)
        }
    }
}

extension ByteBuffer {
    /// Reads an IEEE 754 double as its 8-byte big-endian bit pattern; NaN is refused.
    public mutating func readNativeDouble(field: String) throws -> Double {
        let value = Double(bitPattern: try self.readNativeUInt64(field: field))
        guard !value.isNaN else { throw NativeWireError.invalidValue(field: field, value: value.bitPattern) }
        return value
    }

    /// Writes an IEEE 754 double as its 8-byte big-endian bit pattern.
    public mutating func writeNativeDouble(_ value: Double) {
        self.writeNativeUInt64(value.bitPattern)
    }
}
