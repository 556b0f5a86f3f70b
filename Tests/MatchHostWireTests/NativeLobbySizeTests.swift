import MatchHostWire
import NIOCore
import Testing

@Suite struct NativeLobbySizeTests {
    @Test func aLobbyUpdateIsItsHeaderAndItsChangesSizes() {
        let changes = [
            NativeLobbyChange(.added, NativeLobbyEntry(matchID: 1, label: "", players: 1, capacity: 2, joinable: true)),
            NativeLobbyChange(.changed, NativeLobbyEntry(matchID: 4242, label: "friday night", players: 2, capacity: 4, joinable: false)),
            NativeLobbyChange(.removed, NativeLobbyEntry(matchID: 9, label: "café ☕", players: 0, capacity: 16, joinable: false)),
        ]
        let encoded = NativeServerMessage.lobbyUpdate(mode: "disks", changes: changes).encoded(allocator: ByteBufferAllocator())
        #expect(encoded.readableBytes == NativeLobbyChange.updateHeaderSize(mode: "disks") + changes.map(\.encodedSize).reduce(0, +))
    }
}
