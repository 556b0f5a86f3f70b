/// SplitMix64: a small, fast generator whose whole sequence follows from its seed, so a test
/// that passes a seed sees the same disks on every run and platform. Not for secrets.
struct DisksRandom: RandomNumberGenerator {
    private var state: UInt64

    /// Creates a generator; equal seeds give equal sequences.
    init(seed: UInt64) {
        self.state = seed
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (`bound` > 0), by the high half of a 128-bit product: the
    /// standard library's `random(in:using:)` may change between releases, this will not.
    /// The bias is below 2⁻⁵⁰ for the small bounds used here.
    mutating func next(below bound: UInt64) -> UInt64 {
        self.next().multipliedFullWidth(by: bound).high
    }
}
