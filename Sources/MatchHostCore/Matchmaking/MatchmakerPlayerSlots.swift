/// The slots of one player's tickets; most players have one, which needs no array.
struct MatchmakerPlayerSlots {
    private var first: Int32 = -1
    private var more: [Int32] = []

    /// Every slot.
    var all: [Int32] { self.first < 0 ? self.more : [self.first] + self.more }

    mutating func append(_ slot: Int32) {
        if self.first < 0 { self.first = slot } else { self.more.append(slot) }
    }

    /// Removes `slot`; returns true when none is left.
    mutating func remove(_ slot: Int32) -> Bool {
        if self.first == slot {
            self.first = self.more.popLast() ?? -1
        } else {
            self.more.removeAll { $0 == slot }
        }
        return self.first < 0
    }
}
