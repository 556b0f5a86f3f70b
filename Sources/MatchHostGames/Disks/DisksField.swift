import MatchHostWire
import NIOCore

/// The disks on the board, oldest first: those that can be hit, and those hit recently, which
/// are kept until they would have expired so that a late tap on one is told "already hit"
/// rather than "no disk". The array is compacted in place and never reallocated once it
/// has grown to its working size.
struct DisksField {
    struct Disk {
        var disk: DisksDisk
        var expiresAt: NIODeadline
        var isHit = false
    }

    /// What a tap at a point found.
    enum TapOutcome: Equatable {
        /// The newest unhit disk under the point; it is now hit.
        case hit(diskID: UInt32)
        /// Only disks already hit are under the point.
        case alreadyHit
        /// No disk is under the point.
        case noDisk
    }

    private(set) var disks: [Disk] = []
    /// How many disks can still be hit.
    private(set) var liveCount = 0
    private var nextID: UInt32 = 1

    init(expectedCount: Int) {
        self.disks.reserveCapacity(expectedCount)
    }

    /// Adds a disk of `radius` at a random point wholly on the board, in a random colour.
    mutating func spawn(
        radius: UInt16, colorCount: UInt8, expiresAt: NIODeadline, random: inout DisksRandom
    ) -> DisksDisk {
        let r = UInt64(radius)
        let x = r + random.next(below: UInt64(DisksBoard.width) - 2 * r + 1)
        let y = r + random.next(below: UInt64(DisksBoard.height) - 2 * r + 1)
        let color = random.next(below: UInt64(colorCount))
        let disk = DisksDisk(id: self.nextID, x: UInt16(x), y: UInt16(y), radius: radius, color: UInt8(color))
        self.nextID &+= 1
        self.disks.append(Disk(disk: disk, expiresAt: expiresAt))
        self.liveCount += 1
        return disk
    }

    /// Drops every disk whose time is up; the ids of those nobody hit go to `expired`.
    mutating func removeExpired(at now: NIODeadline, into expired: inout [UInt32]) {
        var kept = 0
        for index in self.disks.indices {
            let disk = self.disks[index]
            if disk.expiresAt <= now {
                if !disk.isHit {
                    expired.append(disk.disk.id)
                    self.liveCount -= 1
                }
            } else {
                self.disks[kept] = disk
                kept += 1
            }
        }
        self.disks.removeLast(self.disks.count - kept)
    }

    /// Hits the newest unhit disk whose circle holds the point (drawn on top of older ones;
    /// a hit disk is spinning away and no longer covers anything).
    mutating func tap(x: UInt16, y: UInt16) -> TapOutcome {
        var coveredByHit = false
        for index in self.disks.indices.reversed() where self.disks[index].disk.covers(x: x, y: y) {
            guard !self.disks[index].isHit else {
                coveredByHit = true
                continue
            }
            self.disks[index].isHit = true
            self.liveCount -= 1
            return .hit(diskID: self.disks[index].disk.id)
        }
        return coveredByHit ? .alreadyHit : .noDisk
    }

    /// The disks that can be hit, oldest first.
    var liveDisks: [DisksDisk] {
        self.disks.compactMap { $0.isHit ? nil : $0.disk }
    }
}

extension DisksDisk {
    /// Whether the point lies in the disk's circle, edge included.
    func covers(x: UInt16, y: UInt16) -> Bool {
        let dx = Int(x) - Int(self.x)
        let dy = Int(y) - Int(self.y)
        let r = Int(self.radius)
        return dx * dx + dy * dy <= r * r
    }
}
