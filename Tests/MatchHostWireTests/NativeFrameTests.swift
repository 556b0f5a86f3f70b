import Foundation
import MatchHostWire
import NIOCore
import NIOTestUtils
import Testing

/// The examples of PROTOCOL.md's "Native byte examples", copied verbatim (annotations
/// included) and in the document's order. `documentHoldsExactlyTheseExamples` fails if the
/// document and this list drift apart.
enum NativeByteExamples {
    static let hello = #"""
        00 00 00 0e  01                                   length 14, kind HELLO
        00 01                                             version 1
        00 09  6d 61 74 63 68 68 6f 73 74                 gameId "matchhost"
        """#
    static let welcome = #"""
        00 00 00 0f  02                                   length 15, kind WELCOME
        00 01                                             version 1
        00 00 13 88                                       heartbeatMs 5000
        00 00 3a 98                                       idleTimeoutMs 15000
        00 01 00 00                                       maxFrameBytes 65536
        """#
    static let authenticateDevice = #"""
        00 00 00 2a  03                                   length 42, kind AUTHENTICATE
        01                                                method 1: device
        00 24                                             deviceId, 36 bytes:
        36 66 39 36 31 39 66 66 2d 38 62 38 36 2d 34 30     "6f9619ff-8b86-40
        31 31 2d 62 34 32 64 2d 30 30 63 30 34 66 63 39      11-b42d-00c04fc9
        36 34 66 66                                          64ff"
        00 00                                             deviceSecret "" (empty)
        """#
    static let authenticateToken = #"""
        00 00 00 3d  03                                   length 61, kind AUTHENTICATE
        02                                                method 2: token
        00 39                                             sessionToken, 57 bytes:
        31 2e 31 42 7a 6d 67 56 66 53 4a 66 61 57 54 39     "1.1BzmgVfSJfaWT9
        51 73 4d 6a 62 32 78 67 2e 55 78 6a 53 78 4d 6a      QsMjb2xg.UxjSxMj
        78 71 68 41 58 51 6e 46 35 52 77 59 76 31 53 5f      xqhAXQnF5RwYv1S_
        35 5f 4b 7a 59 66 32 7a 54                           5_KzYf2zT"
        """#
    static let authenticated = #"""
        00 00 01 10  04                                   length 272, kind AUTHENTICATED
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        00 40                                             deviceSecret, 64 bytes:
        62 62 63 38 65 31 33 34 65 64 65 34 37 32 31 31     "bbc8e134ede47211
        34 34 30 61 62 64 63 37 33 64 65 64 37 64 65 65      440abdc73ded7dee
        32 39 63 66 66 61 39 38 34 33 63 37 33 36 61 62      29cffa9843c736ab
        33 64 35 63 32 62 39 30 33 31 34 66 32 63 61 31      3d5c2b90314f2ca1"
        00 39                                             sessionToken, 57 bytes:
        31 2e 31 42 7a 6d 67 56 66 53 4a 66 61 57 54 39     "1.1BzmgVfSJfaWT9
        51 73 4d 6a 62 32 78 67 2e 55 78 6a 53 78 4d 6a      QsMjb2xg.UxjSxMj
        78 71 68 41 58 51 6e 46 35 52 77 59 76 31 53 5f      xqhAXQnF5RwYv1S_
        35 5f 4b 7a 59 66 32 7a 54                           5_KzYf2zT"
        00 00 00 00 69 55 b9 00                           tokenExpiresAt 1767225600
        00 20                                             sessionId, 32 bytes:
        61 61 63 33 32 39 37 63 65 34 39 35 30 34 33 34     "aac3297ce4950434
        38 35 65 36 37 33 35 62 63 34 66 33 63 33 39 38      85e6735bc4f3c398"
        00 40                                             resumeToken, 64 bytes:
        39 30 63 33 30 62 35 30 66 64 61 66 65 32 63 36     "90c30b50fdafe2c6
        34 61 62 38 37 62 63 39 35 39 64 31 33 37 34 61      4ab87bc959d1374a
        37 65 33 30 33 36 30 64 30 66 31 63 34 38 32 38      7e30360d0f1c4828
        61 37 62 62 61 32 64 61 33 65 33 38 39 36 33 62      a7bba2da3e38963b"
        00 00 75 30                                       sessionGraceMs 30000
        """#
    static let resume = #"""
        00 00 00 6d  05                                   length 109, kind RESUME
        00 20                                             sessionId, 32 bytes:
        61 61 63 33 32 39 37 63 65 34 39 35 30 34 33 34     "aac3297ce4950434
        38 35 65 36 37 33 35 62 63 34 66 33 63 33 39 38      85e6735bc4f3c398"
        00 40                                             resumeToken, 64 bytes:
        39 30 63 33 30 62 35 30 66 64 61 66 65 32 63 36     "90c30b50fdafe2c6
        34 61 62 38 37 62 63 39 35 39 64 31 33 37 34 61      4ab87bc959d1374a
        37 65 33 30 33 36 30 64 30 66 31 63 34 38 32 38      7e30360d0f1c4828
        61 37 62 62 61 32 64 61 33 65 33 38 39 36 33 62      a7bba2da3e38963b"
        00 00 00 00 00 00 00 05                           lastReceived 5
        """#
    static let resumed = #"""
        00 00 00 09  06                                   length 9, kind RESUMED
        00 00 00 00 00 00 00 04                           lastReceived 4
        """#
    static let error = #"""
        00 00 00 18  07                                   length 24, kind ERROR
        00 05                                             code 5 AUTHENTICATION_FAILED
        00 13                                             message, 19 bytes:
        77 72 6f 6e 67 20 64 65 76 69 63 65 20 73 65 63     "wrong device sec
        72 65 74                                             ret"
        """#
    static let ping = #"""
        00 00 00 09  08                                   length 9, kind PING
        00 00 01 9b 76 da a8 7b                           value 1767225600123
        """#
    static let pong = #"""
        00 00 00 09  09                                   length 9, kind PONG
        00 00 01 9b 76 da a8 7b                           value 1767225600123
        """#
    static let ack = #"""
        00 00 00 09  0a                                   length 9, kind ACK
        00 00 00 00 00 00 00 03                           lastReceived 3
        """#
    static let goodbye = #"""
        00 00 00 01  0d                                   length 1, kind GOODBYE
        """#
    static let createMatch = #"""
        00 00 00 2e  0b                                   length 46, kind RELIABLE
        00 00 00 00 00 00 00 01                           sequence 1
        00 00 00 00 00 00 00 00                           ack 0
        20                                                REQUEST
        00 00 00 01                                       requestId 1
        01                                                kind 1 CREATE_MATCH
        00 05  72 65 6c 61 79                             mode "relay"
        04                                                maxPlayers 4
        00 0c  66 72 69 64 61 79 20 6e 69 67 68 74        label "friday night"
        00                                                flags 0: public
        """#
    static let joinMatch = #"""
        00 00 00 1f  0b                                   length 31, kind RELIABLE
        00 00 00 00 00 00 00 02                           sequence 2
        00 00 00 00 00 00 00 01                           ack 1
        20                                                REQUEST
        00 00 00 02                                       requestId 2
        02                                                kind 2 JOIN_MATCH
        00 00 00 00 00 00 10 92                           matchId 4242
        """#
    static let leaveMatch = #"""
        00 00 00 1f  0b                                   length 31, kind RELIABLE
        00 00 00 00 00 00 00 05                           sequence 5
        00 00 00 00 00 00 00 04                           ack 4
        20                                                REQUEST
        00 00 00 03                                       requestId 3
        03                                                kind 3 LEAVE_MATCH
        00 00 00 00 00 00 10 92                           matchId 4242
        """#
    static let sendDataTargets = #"""
        00 00 00 45  0b                                   length 69, kind RELIABLE
        00 00 00 00 00 00 00 03                           sequence 3
        00 00 00 00 00 00 00 02                           ack 2
        21                                                SEND_DATA
        00 00 00 00 00 00 10 92                           matchId 4242
        01                                                count 1
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        00 00 00 04  01 00 00 2a                          payload, 4 bytes
        """#
    static let sendDataAll = #"""
        00 00 00 14  0c                                   length 20, kind UNRELIABLE
        21                                                SEND_DATA
        00 00 00 00 00 00 10 92                           matchId 4242
        00                                                count 0: every other player
        00 00 00 05  02 00 96 00 40                       payload, 5 bytes
        """#
    static let matchJoined = #"""
        00 00 00 7e  0b                                   length 126, kind RELIABLE
        00 00 00 00 00 00 00 02                           sequence 2
        00 00 00 00 00 00 00 02                           ack 2
        40                                                RESPONSE
        00 00 00 02                                       requestId 2
        01                                                kind 1 MATCH_JOINED
        00 00 00 00 00 00 10 92                           matchId 4242
        00 05  72 65 6c 61 79                             mode "relay"
        00 0c  66 72 69 64 61 79 20 6e 69 67 68 74        label "friday night"
        04                                                capacity 4
        02                                                count 2
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        02                                                presence 2: away
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        01                                                presence 1: connected
        00 00                                             inviteCode "" (empty)
        """#
    static let matchLeft = #"""
        00 00 00 1f  0b                                   length 31, kind RELIABLE
        00 00 00 00 00 00 00 06                           sequence 6
        00 00 00 00 00 00 00 05                           ack 5
        40                                                RESPONSE
        00 00 00 03                                       requestId 3
        02                                                kind 2 MATCH_LEFT
        00 00 00 00 00 00 10 92                           matchId 4242
        """#
    static let requestError = #"""
        00 00 00 2c  0b                                   length 44, kind RELIABLE
        00 00 00 00 00 00 00 02                           sequence 2
        00 00 00 00 00 00 00 02                           ack 2
        41                                                REQUEST_ERROR
        00 00 00 02                                       requestId 2
        00 67                                             code 103 MATCH_FULL
        00 12                                             message, 18 bytes:
        6d 61 74 63 68 20 34 32 34 32 20 69 73 20 66 75     "match 4242 is fu
        6c 6c                                                ll"
        """#
    static let presence = #"""
        00 00 00 3e  0b                                   length 62, kind RELIABLE
        00 00 00 00 00 00 00 07                           sequence 7
        00 00 00 00 00 00 00 03                           ack 3
        42                                                PRESENCE
        00 00 00 00 00 00 10 92                           matchId 4242
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        04                                                change 4: left
        01                                                reason 1: asked to leave
        """#
    static let matchData = #"""
        00 00 00 44  0b                                   length 68, kind RELIABLE
        00 00 00 00 00 00 00 04                           sequence 4
        00 00 00 00 00 00 00 03                           ack 3
        43                                                MATCH_DATA
        00 00 00 00 00 00 10 92                           matchId 4242
        00 20                                             senderPlayerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        00 00 00 04  01 00 00 2a                          payload, 4 bytes
        """#
    static let matchEnded = #"""
        00 00 00 3b  0b                                   length 59, kind RELIABLE
        00 00 00 00 00 00 00 08                           sequence 8
        00 00 00 00 00 00 00 03                           ack 3
        44                                                MATCH_ENDED
        00 00 00 00 00 00 10 92                           matchId 4242
        00 1f                                             reason, 31 bytes:
        61 62 61 6e 64 6f 6e 65 64 28 73 65 72 76 65 72     "abandoned(server
        20 73 68 75 74 74 69 6e 67 20 64 6f 77 6e 29         shutting down)"
        """#
    static let matchInput = #"""
        00 00 00 23  0b                                   length 35, kind RELIABLE
        00 00 00 00 00 00 00 04                           sequence 4
        00 00 00 00 00 00 00 03                           ack 3
        22                                                MATCH_INPUT
        00 00 00 00 00 00 10 92                           matchId 4242
        00 00 00 05  04 00 00 00 23                       input, 5 bytes: Cat Race MOVED_SELF, posX 35
        """#
    static let matchEvent = #"""
        00 00 00 24  0b                                   length 36, kind RELIABLE
        00 00 00 00 00 00 00 09                           sequence 9
        00 00 00 00 00 00 00 04                           ack 4
        45                                                MATCH_EVENT
        00 00 00 00 00 00 10 92                           matchId 4242
        00 00 00 06  05 01 00 00 00 23                    event, 6 bytes: Cat Race PLAYER_MOVED, index 1, posX 35
        """#
    static let listMatches = #"""
        00 00 00 2a  0b                                   length 42, kind RELIABLE
        00 00 00 00 00 00 00 07                           sequence 7
        00 00 00 00 00 00 00 05                           ack 5
        20                                                REQUEST
        00 00 00 04                                       requestId 4
        04                                                kind 4 LIST_MATCHES
        00 05  64 69 73 6b 73                             mode "disks"
        01                                                flags 1: joinable only
        00 00                                             labelContains "" (empty)
        00 00 00 00 00 00 00 00                           after 0: first page
        14                                                limit 20
        """#
    static let matchList = #"""
        00 00 00 3a  0b                                   length 58, kind RELIABLE
        00 00 00 00 00 00 00 08                           sequence 8
        00 00 00 00 00 00 00 07                           ack 7
        40                                                RESPONSE
        00 00 00 04                                       requestId 4
        03                                                kind 3 MATCH_LIST
        00 01                                             count 1
        00 00 00 00 00 00 10 92                           matchId 4242
        00 0c  66 72 69 64 61 79 20 6e 69 67 68 74        label "friday night"
        01                                                players 1
        04                                                capacity 4
        01                                                joinable 1
        00 00 00 00 00 00 00 00                           next 0: no more pages
        """#
    static let subscribeLobby = #"""
        00 00 00 1e  0b                                   length 30, kind RELIABLE
        00 00 00 00 00 00 00 08                           sequence 8
        00 00 00 00 00 00 00 08                           ack 8
        20                                                REQUEST
        00 00 00 05                                       requestId 5
        05                                                kind 5 SUBSCRIBE_LOBBY
        00 05  64 69 73 6b 73                             mode "disks"
        """#
    static let lobbySubscribed = #"""
        00 00 00 22  0b                                   length 34, kind RELIABLE
        00 00 00 00 00 00 00 09                           sequence 9
        00 00 00 00 00 00 00 08                           ack 8
        40                                                RESPONSE
        00 00 00 05                                       requestId 5
        04                                                kind 4 LOBBY_SUBSCRIBED
        00 05  64 69 73 6b 73                             mode "disks"
        00 00 00 01                                       count 1 open match, in the LOBBY_UPDATE that follows
        """#
    static let lobbyUpdate = #"""
        00 00 00 43  0b                                   length 67, kind RELIABLE
        00 00 00 00 00 00 00 0a                           sequence 10
        00 00 00 00 00 00 00 08                           ack 8
        46                                                LOBBY_UPDATE
        00 05  64 69 73 6b 73                             mode "disks"
        00 02                                             count 2
        02                                                change 2: changed
        00 00 00 00 00 00 10 92                           matchId 4242
        00 0c  66 72 69 64 61 79 20 6e 69 67 68 74        label "friday night"
        02                                                players 2
        04                                                capacity 4
        01                                                joinable 1
        01                                                change 1: added
        00 00 00 00 00 00 10 93                           matchId 4243
        00 00                                             label "" (empty)
        01                                                players 1
        02                                                capacity 2
        01                                                joinable 1
        """#
    static let unsubscribeLobby = #"""
        00 00 00 1e  0b                                   length 30, kind RELIABLE
        00 00 00 00 00 00 00 09                           sequence 9
        00 00 00 00 00 00 00 0a                           ack 10
        20                                                REQUEST
        00 00 00 06                                       requestId 6
        06                                                kind 6 UNSUBSCRIBE_LOBBY
        00 05  64 69 73 6b 73                             mode "disks"
        """#
    static let done = #"""
        00 00 00 17  0b                                   length 23, kind RELIABLE
        00 00 00 00 00 00 00 0b                           sequence 11
        00 00 00 00 00 00 00 09                           ack 9
        40                                                RESPONSE
        00 00 00 06                                       requestId 6
        05                                                kind 5 DONE
        """#
    static let joinByCode = #"""
        00 00 00 21  0b                                   length 33, kind RELIABLE
        00 00 00 00 00 00 00 0a                           sequence 10
        00 00 00 00 00 00 00 0b                           ack 11
        20                                                REQUEST
        00 00 00 07                                       requestId 7
        07                                                kind 7 JOIN_BY_CODE
        00 08  4b 37 50 58 32 51 4d 44                    inviteCode "K7PX2QMD"
        """#
    static let createParty = #"""
        00 00 00 18  0b                                   length 24, kind RELIABLE
        00 00 00 00 00 00 00 0b                           sequence 11
        00 00 00 00 00 00 00 0b                           ack 11
        20                                                REQUEST
        00 00 00 08                                       requestId 8
        0a                                                kind 10 CREATE_PARTY
        02                                                maxSize 2
        """#
    static let party = #"""
        00 00 00 67  0b                                   length 103, kind RELIABLE
        00 00 00 00 00 00 00 0c                           sequence 12
        00 00 00 00 00 00 00 0b                           ack 11
        40                                                RESPONSE
        00 00 00 08                                       requestId 8
        07                                                kind 7 PARTY
        00 08  51 4a 34 5a 54 38 57 4e                    partyId "QJ4ZT8WN"
        00 20                                             leader, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        02                                                maxSize 2
        01                                                count 1
        00 20                                             member, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        """#
    static let joinParty = #"""
        00 00 00 21  0b                                   length 33, kind RELIABLE
        00 00 00 00 00 00 00 01                           sequence 1
        00 00 00 00 00 00 00 01                           ack 1
        20                                                REQUEST
        00 00 00 09                                       requestId 9
        0b                                                kind 11 JOIN_PARTY
        00 08  51 4a 34 5a 54 38 57 4e                    partyId "QJ4ZT8WN"
        """#
    static let partyUpdate = #"""
        00 00 00 84  0b                                   length 132, kind RELIABLE
        00 00 00 00 00 00 00 0d                           sequence 13
        00 00 00 00 00 00 00 0b                           ack 11
        48                                                PARTY_UPDATE
        00 08  51 4a 34 5a 54 38 57 4e                    partyId "QJ4ZT8WN"
        00 20                                             leader, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        02                                                maxSize 2
        02                                                count 2
        00 20                                             member, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        00 20                                             member, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        """#
    static let leaveParty = #"""
        00 00 00 21  0b                                   length 33, kind RELIABLE
        00 00 00 00 00 00 00 02                           sequence 2
        00 00 00 00 00 00 00 02                           ack 2
        20                                                REQUEST
        00 00 00 0a                                       requestId 10
        0c                                                kind 12 LEAVE_PARTY
        00 08  51 4a 34 5a 54 38 57 4e                    partyId "QJ4ZT8WN"
        """#
    static let matchmake = #"""
        00 00 00 70  0b                                   length 112, kind RELIABLE
        00 00 00 00 00 00 00 0c                           sequence 12
        00 00 00 00 00 00 00 0d                           ack 13
        20                                                REQUEST
        00 00 00 0b                                       requestId 11
        08                                                kind 8 MATCHMAKE
        00 05  64 69 73 6b 73                             mode "disks"
        02                                                minPlayers 2
        04                                                maxPlayers 4
        01                                                1 string property:
        00 06  72 65 67 69 6f 6e                          key "region"
        00 02  65 75                                      value "eu"
        01                                                1 number property:
        00 05  73 6b 69 6c 6c                             key "skill"
        40 97 70 00 00 00 00 00                           value 1500.0
        02                                                2 clauses:
        01                                                1 require
        01                                                1 equals
        00 06  72 65 67 69 6f 6e                          key "region"
        00 02  65 75                                      value "eu"
        01                                                1 require
        02                                                2 range
        00 05  73 6b 69 6c 6c                             key "skill"
        03                                                bounds 3: min and max
        40 94 50 00 00 00 00 00                           min 1300.0
        40 9a 90 00 00 00 00 00                           max 1700.0
        00 08  51 4a 34 5a 54 38 57 4e                    partyId "QJ4ZT8WN"
        """#
    static let ticketQueued = #"""
        00 00 00 29  0b                                   length 41, kind RELIABLE
        00 00 00 00 00 00 00 0e                           sequence 14
        00 00 00 00 00 00 00 0c                           ack 12
        40                                                RESPONSE
        00 00 00 0b                                       requestId 11
        06                                                kind 6 TICKET_QUEUED
        00 10                                             ticketId, 16 bytes:
        35 65 30 63 39 61 33 66 37 31 62 32 34 64 36 38     "5e0c9a3f71b24d68"
        """#
    static let cancelTicket = #"""
        00 00 00 29  0b                                   length 41, kind RELIABLE
        00 00 00 00 00 00 00 0d                           sequence 13
        00 00 00 00 00 00 00 0e                           ack 14
        20                                                REQUEST
        00 00 00 0c                                       requestId 12
        09                                                kind 9 CANCEL_TICKET
        00 10                                             ticketId, 16 bytes:
        35 65 30 63 39 61 33 66 37 31 62 32 34 64 36 38     "5e0c9a3f71b24d68"
        """#
    static let matchmakerMatched = #"""
        00 00 00 7f  0b                                   length 127, kind RELIABLE
        00 00 00 00 00 00 00 0f                           sequence 15
        00 00 00 00 00 00 00 0d                           ack 13
        47                                                MATCHMAKER_MATCHED
        00 10                                             ticketId, 16 bytes:
        35 65 30 63 39 61 33 66 37 31 62 32 34 64 36 38     "5e0c9a3f71b24d68"
        00 00 00 00 00 00 10 94                           matchId 4244
        00 05  64 69 73 6b 73                             mode "disks"
        00 00                                             label "" (empty)
        04                                                capacity 4
        02                                                count 2
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        01                                                presence 1: connected
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        01                                                presence 1: connected
        00 00                                             inviteCode "" (empty)
        """#
    static let ticketCancelled = #"""
        00 00 00 37  0b                                   length 55, kind RELIABLE
        00 00 00 00 00 00 00 10                           sequence 16
        00 00 00 00 00 00 00 0d                           ack 13
        49                                                TICKET_CANCELLED
        00 10                                             ticketId, 16 bytes:
        35 65 30 63 39 61 33 66 37 31 62 32 34 64 36 38     "5e0c9a3f71b24d68"
        00 11                                             reason, 17 bytes:
        74 68 65 20 70 61 72 74 79 20 63 68 61 6e 67 65     "the party change
        64                                                   d"
        """#
    static let matchResumed = #"""
        00 00 00 72  0b                                   length 114, kind RELIABLE
        00 00 00 00 00 00 00 01                           sequence 1
        00 00 00 00 00 00 00 00                           ack 0
        4a                                                MATCH_RESUMED
        00 00 00 00 00 00 10 92                           matchId 4242
        00 0a  66 6f 75 72 69 6e 61 72 6f 77              mode "fourinarow"
        00 00                                             label "" (empty)
        02                                                capacity 2
        02                                                count 2
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        01                                                presence 1: connected
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        03                                                presence 3: reserved
        00 00                                             inviteCode "" (empty)
        """#
    static let getProfile = #"""
        00 00 00 19  0b                                   length 25, kind RELIABLE
        00 00 00 00 00 00 00 01                           sequence 1
        00 00 00 00 00 00 00 00                           ack 0
        20                                                REQUEST
        00 00 00 15                                       requestId 21
        0d                                                kind 13 GET_PROFILE
        00 00                                             playerId "" (empty)
        """#
    static let profile = #"""
        00 00 00 78  0b                                   length 120, kind RELIABLE
        00 00 00 00 00 00 00 01                           sequence 1
        00 00 00 00 00 00 00 01                           ack 1
        40                                                RESPONSE
        00 00 00 15                                       requestId 21
        08                                                kind 8 PROFILE
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        00 08  66 39 39 38 63 66 34 63                    alias "f998cf4c"
        00 00 01 9b 76 da a8 00                           createdAt 1767225600000 (ms)
        00 00 01 9b 7c 01 04 00                           lastSeenAt 1767312000000 (ms)
        01                                                count 1
        00 0a  66 6f 75 72 69 6e 61 72 6f 77              game "fourinarow"
        00 00 00 03                                       played 3
        00 00 00 02                                       won 2
        00 00 00 01                                       lost 1
        00 00 00 00                                       drawn 0
        40 97 ae 00 00 00 00 00                           rating 1515.5
        """#
    static let getMatchHistory = #"""
        00 00 00 1a  0b                                   length 26, kind RELIABLE
        00 00 00 00 00 00 00 02                           sequence 2
        00 00 00 00 00 00 00 01                           ack 1
        20                                                REQUEST
        00 00 00 16                                       requestId 22
        0e                                                kind 14 GET_MATCH_HISTORY
        00 00                                             playerId "" (empty)
        02                                                limit 2
        """#
    static let matchHistory = #"""
        00 00 00 fd  0b                                   length 253, kind RELIABLE
        00 00 00 00 00 00 00 02                           sequence 2
        00 00 00 00 00 00 00 02                           ack 2
        40                                                RESPONSE
        00 00 00 16                                       requestId 22
        09                                                kind 9 MATCH_HISTORY
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        02                                                count 2
        00 00 00 00 00 00 10 92                           matchId 4242
        00 0a  66 6f 75 72 69 6e 61 72 6f 77              game "fourinarow"
        00 00 01 9b 76 da a8 00                           startedAt 1767225600000
        00 00 01 9b 76 df 3b e0                           endedAt 1767225900000
        02                                                state 2: finished
        01                                                outcome 1: won
        00 00                                             reason "" (empty)
        02                                                count 2
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        00 00 00 00 00 00 10 90                           matchId 4240
        00 05  64 69 73 6b 73                             game "disks"
        00 00 01 9b 76 d1 80 40                           startedAt 1767225000000
        00 00 01 9b 76 d2 6a a0                           endedAt 1767225060000
        03                                                state 3: abandoned
        00                                                outcome 0: none
        00 10                                             reason, 16 bytes:
        73 65 72 76 65 72 20 72 65 73 74 61 72 74 65 64     "server restarted"
        01                                                count 1
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        """#
    static let getLeaderboard = #"""
        00 00 00 26  0b                                   length 38, kind RELIABLE
        00 00 00 00 00 00 00 03                           sequence 3
        00 00 00 00 00 00 00 02                           ack 2
        20                                                REQUEST
        00 00 00 17                                       requestId 23
        0f                                                kind 15 GET_LEADERBOARD
        00 0a  66 6f 75 72 69 6e 61 72 6f 77              game "fourinarow"
        00 00                                             around "" (empty)
        02                                                limit 2
        """#
    static let leaderboard = #"""
        00 00 00 a4  0b                                   length 164, kind RELIABLE
        00 00 00 00 00 00 00 03                           sequence 3
        00 00 00 00 00 00 00 03                           ack 3
        40                                                RESPONSE
        00 00 00 17                                       requestId 23
        0a                                                kind 10 LEADERBOARD
        00 0a  66 6f 75 72 69 6e 61 72 6f 77              game "fourinarow"
        02                                                count 2
        00 00 00 01                                       rank 1
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        00 08  62 36 37 62 37 33 66 31                    alias "b67b73f1"
        40 97 ed 00 00 00 00 00                           rating 1531.25
        00 00 00 05                                       won 5
        00 00 00 06                                       played 6
        00 00 00 02                                       rank 2
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        00 08  66 39 39 38 63 66 34 63                    alias "f998cf4c"
        40 97 ae 00 00 00 00 00                           rating 1515.5
        00 00 00 02                                       won 2
        00 00 00 03                                       played 3
        """#
    static let writeValue = #"""
        00 00 00 28  0b                                   length 40, kind RELIABLE
        00 00 00 00 00 00 00 04                           sequence 4
        00 00 00 00 00 00 00 03                           ack 3
        20                                                REQUEST
        00 00 00 18                                       requestId 24
        11                                                kind 17 WRITE_VALUE
        00 08  73 65 74 74 69 6e 67 73                    key "settings"
        00 00 00 03  01 02 03                             value, 3 bytes
        """#
    static let readValue = #"""
        00 00 00 21  0b                                   length 33, kind RELIABLE
        00 00 00 00 00 00 00 05                           sequence 5
        00 00 00 00 00 00 00 04                           ack 4
        20                                                REQUEST
        00 00 00 19                                       requestId 25
        10                                                kind 16 READ_VALUE
        00 08  73 65 74 74 69 6e 67 73                    key "settings"
        """#
    static let value = #"""
        00 00 00 29  0b                                   length 41, kind RELIABLE
        00 00 00 00 00 00 00 05                           sequence 5
        00 00 00 00 00 00 00 05                           ack 5
        40                                                RESPONSE
        00 00 00 19                                       requestId 25
        0b                                                kind 11 VALUE
        00 08  73 65 74 74 69 6e 67 73                    key "settings"
        01                                                found 1
        00 00 00 03  01 02 03                             value, 3 bytes
        """#
    static let deleteValue = #"""
        00 00 00 21  0b                                   length 33, kind RELIABLE
        00 00 00 00 00 00 00 06                           sequence 6
        00 00 00 00 00 00 00 05                           ack 5
        20                                                REQUEST
        00 00 00 1a                                       requestId 26
        12                                                kind 18 DELETE_VALUE
        00 08  73 65 74 74 69 6e 67 73                    key "settings"
        """#
    static let createLinkCode = #"""
        00 00 00 17  0b                                   length 23, kind RELIABLE
        00 00 00 00 00 00 00 07                           sequence 7
        00 00 00 00 00 00 00 06                           ack 6
        20                                                REQUEST
        00 00 00 1b                                       requestId 27
        13                                                kind 19 CREATE_LINK_CODE
        """#
    static let linkCode = #"""
        00 00 00 29  0b                                   length 41, kind RELIABLE
        00 00 00 00 00 00 00 07                           sequence 7
        00 00 00 00 00 00 00 07                           ack 7
        40                                                RESPONSE
        00 00 00 1b                                       requestId 27
        0c                                                kind 12 LINK_CODE
        00 08  4b 37 4d 32 51 58 39 44                    code "K7M2QX9D"
        00 00 01 9b 76 e3 cf c0                           expiresAt 1767226200000 (10 minutes on)
        """#
    static let authenticateLink = #"""
        00 00 00 34  03                                   length 52, kind AUTHENTICATE
        03                                                method 3: link
        00 08  4b 37 4d 32 51 58 39 44                    linkCode "K7M2QX9D"
        00 24                                             deviceId, 36 bytes:
        30 65 33 62 32 61 35 31 2d 36 63 31 64 2d 34 66     "0e3b2a51-6c1d-4f
        37 65 2d 39 61 30 38 2d 35 62 32 66 33 63 34 64      7e-9a08-5b2f3c4d
        36 65 37 31                                          6e71"
        00 00                                             deviceSecret "" (empty)
        """#
    static let listDevices = #"""
        00 00 00 17  0b                                   length 23, kind RELIABLE
        00 00 00 00 00 00 00 08                           sequence 8
        00 00 00 00 00 00 00 07                           ack 7
        20                                                REQUEST
        00 00 00 1c                                       requestId 28
        14                                                kind 20 LIST_DEVICES
        """#
    static let devices = #"""
        00 00 00 74  0b                                   length 116, kind RELIABLE
        00 00 00 00 00 00 00 08                           sequence 8
        00 00 00 00 00 00 00 08                           ack 8
        40                                                RESPONSE
        00 00 00 1c                                       requestId 28
        0d                                                kind 13 DEVICES
        02                                                count 2
        00 24                                             deviceId, 36 bytes:
        36 66 39 36 31 39 66 66 2d 38 62 38 36 2d 34 30     "6f9619ff-8b86-40
        31 31 2d 62 34 32 64 2d 30 30 63 30 34 66 63 39      11-b42d-00c04fc9
        36 34 66 66                                          64ff"
        00 00 01 9b 76 da a8 00                           linkedAt 1767225600000
        00 24                                             deviceId, 36 bytes:
        30 65 33 62 32 61 35 31 2d 36 63 31 64 2d 34 66     "0e3b2a51-6c1d-4f
        37 65 2d 39 61 30 38 2d 35 62 32 66 33 63 34 64      7e-9a08-5b2f3c4d
        36 65 37 31                                          6e71"
        00 00 01 9b 76 df 3b e0                           linkedAt 1767225900000
        """#
    static let unlinkDevice = #"""
        00 00 00 3d  0b                                   length 61, kind RELIABLE
        00 00 00 00 00 00 00 09                           sequence 9
        00 00 00 00 00 00 00 08                           ack 8
        20                                                REQUEST
        00 00 00 1d                                       requestId 29
        15                                                kind 21 UNLINK_DEVICE
        00 24                                             deviceId, 36 bytes:
        30 65 33 62 32 61 35 31 2d 36 63 31 64 2d 34 66     "0e3b2a51-6c1d-4f
        37 65 2d 39 61 30 38 2d 35 62 32 66 33 63 34 64      7e-9a08-5b2f3c4d
        36 65 37 31                                          6e71"
        """#
    static let setAlias = #"""
        00 00 00 21  0b                                   length 33, kind RELIABLE
        00 00 00 00 00 00 00 0a                           sequence 10
        00 00 00 00 00 00 00 09                           ack 9
        20                                                REQUEST
        00 00 00 1e                                       requestId 30
        16                                                kind 22 SET_ALIAS
        00 08  41 6e 6e 20 f0 9f 90 88                    alias "Ann 🐈" (8 bytes of UTF-8)
        """#
    static let getAliases = #"""
        00 00 00 5c  0b                                   length 92, kind RELIABLE
        00 00 00 00 00 00 00 0b                           sequence 11
        00 00 00 00 00 00 00 0a                           ack 10
        20                                                REQUEST
        00 00 00 1f                                       requestId 31
        17                                                kind 23 GET_ALIASES
        02                                                count 2
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        """#
    static let aliases = #"""
        00 00 00 70  0b                                   length 112, kind RELIABLE
        00 00 00 00 00 00 00 09                           sequence 9
        00 00 00 00 00 00 00 0b                           ack 11
        40                                                RESPONSE
        00 00 00 1f                                       requestId 31
        0e                                                kind 14 ALIASES
        02                                                count 2
        00 20                                             playerId, 32 bytes:
        66 39 39 38 63 66 34 63 30 62 63 37 37 66 31 63     "f998cf4c0bc77f1c
        65 35 39 38 32 63 37 65 63 39 64 32 65 35 35 35      e5982c7ec9d2e555"
        00 08  41 6e 6e 20 f0 9f 90 88                    alias "Ann 🐈" (8 bytes of UTF-8)
        00 20                                             playerId, 32 bytes:
        62 36 37 62 37 33 66 31 30 37 61 38 36 63 64 64     "b67b73f107a86cdd
        62 35 32 66 30 35 32 30 65 39 61 30 39 65 62 61      b52f0520e9a09eba"
        00 08  62 36 37 62 37 33 66 31                    alias "b67b73f1"
        """#
}

/// The bytes of an example: on each line, the leading tokens that are two lowercase hex
/// digits; the first other token starts the annotation.
func hexBytes(_ example: String) -> [UInt8] {
    var bytes: [UInt8] = []
    for line in example.split(separator: "\n") {
        for token in line.split(separator: " ") {
            guard token.utf8.count == 2, token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
                let byte = UInt8(token, radix: 16)
            else { break }
            bytes.append(byte)
        }
    }
    return bytes
}

/// A message of an example, with the side that decodes it.
enum ExampleMessage: Hashable, Sendable {
    case client(NativeClientMessage)
    case server(NativeServerMessage)

    var encoded: ByteBuffer {
        switch self {
        case .client(let message): return message.encoded()
        case .server(let message): return message.encoded()
        }
    }

    var type: UInt8 { self.encoded.getInteger(at: 0, as: UInt8.self)! }

    /// Decodes `bytes` as a message of the same side as this one.
    func decodeSameSide(_ bytes: ByteBuffer) throws -> ExampleMessage {
        switch self {
        case .client: return .client(try NativeClientMessage(message: bytes))
        case .server: return .server(try NativeServerMessage(message: bytes))
        }
    }

    /// Decodes `bytes` as a message of the other side.
    func decodeOtherSide(_ bytes: ByteBuffer) throws {
        switch self {
        case .client: _ = try NativeServerMessage(message: bytes)
        case .server: _ = try NativeClientMessage(message: bytes)
        }
    }
}

/// One byte example: its text in PROTOCOL.md and the value it encodes.
struct NativeExample: Sendable, CustomTestStringConvertible {
    let name: String
    let text: String
    let frame: NativeFrame
    let message: ExampleMessage?

    var testDescription: String { self.name }
    var bytes: [UInt8] { hexBytes(self.text) }

    static func frame(_ name: String, _ text: String, _ frame: NativeFrame) -> NativeExample {
        NativeExample(name: name, text: text, frame: frame, message: nil)
    }

    static func reliable(_ name: String, _ text: String, sequence: UInt64, ack: UInt64, _ message: ExampleMessage) -> NativeExample {
        NativeExample(name: name, text: text, frame: .reliable(sequence: sequence, ack: ack, message: message.encoded), message: message)
    }

    static func unreliable(_ name: String, _ text: String, _ message: ExampleMessage) -> NativeExample {
        NativeExample(name: name, text: text, frame: .unreliable(message: message.encoded), message: message)
    }

    static let alice = "f998cf4c0bc77f1ce5982c7ec9d2e555"
    static let bob = "b67b73f107a86cddb52f0520e9a09eba"
    static let sessionID = "aac3297ce495043485e6735bc4f3c398"
    static let deviceSecret = "bbc8e134ede47211440abdc73ded7dee29cffa9843c736ab3d5c2b90314f2ca1"
    static let resumeToken = "90c30b50fdafe2c64ab87bc959d1374a7e30360d0f1c4828a7bba2da3e38963b"
    static let sessionToken = "1.1BzmgVfSJfaWT9QsMjb2xg.UxjSxMjxqhAXQnF5RwYv1S_5_KzYf2zT"
    static let deviceID = "6f9619ff-8b86-4011-b42d-00c04fc964ff"
    /// A device linked to the first one's player.
    static let secondDeviceID = "0e3b2a51-6c1d-4f7e-9a08-5b2f3c4d6e71"
    static let match: MatchIdentifier = 4242

    /// Every example, in the document's order.
    static let all: [NativeExample] = {
        typealias E = NativeByteExamples
        return [
            .frame("HELLO", E.hello, .hello(version: 1, gameID: "matchhost")),
            .frame(
                "WELCOME", E.welcome,
                .welcome(
                    NativeWelcome(version: 1, heartbeatMilliseconds: 5000, idleTimeoutMilliseconds: 15000, maximumFrameBytes: 65536))),
            .frame("AUTHENTICATE device", E.authenticateDevice, .authenticate(.device(id: deviceID, secret: ""))),
            .frame("AUTHENTICATE token", E.authenticateToken, .authenticate(.token(sessionToken))),
            .frame(
                "AUTHENTICATED", E.authenticated,
                .authenticated(
                    NativeAuthenticated(
                        playerID: alice, deviceSecret: deviceSecret, sessionToken: sessionToken, tokenExpiresAt: 1_767_225_600,
                        sessionID: sessionID, resumeToken: resumeToken, sessionGraceMilliseconds: 30000))),
            .frame("RESUME", E.resume, .resume(sessionID: sessionID, resumeToken: resumeToken, lastReceived: 5)),
            .frame("RESUMED", E.resumed, .resumed(lastReceived: 4)),
            .frame("ERROR", E.error, .error(NativeError(.authenticationFailed, "wrong device secret"))),
            .frame("PING", E.ping, .ping(1_767_225_600_123)),
            .frame("PONG", E.pong, .pong(1_767_225_600_123)),
            .frame("ACK", E.ack, .ack(3)),
            .frame("GOODBYE", E.goodbye, .goodbye),
            .reliable(
                "REQUEST CREATE_MATCH", E.createMatch, sequence: 1, ack: 0,
                .client(.request(id: 1, .createMatch(mode: "relay", maxPlayers: 4, label: "friday night")))),
            .reliable("REQUEST JOIN_MATCH", E.joinMatch, sequence: 2, ack: 1, .client(.request(id: 2, .joinMatch(match)))),
            .reliable("REQUEST LEAVE_MATCH", E.leaveMatch, sequence: 5, ack: 4, .client(.request(id: 3, .leaveMatch(match)))),
            .reliable(
                "SEND_DATA with a target", E.sendDataTargets, sequence: 3, ack: 2,
                .client(.sendData(matchID: match, targets: [bob], payload: ByteBuffer(bytes: [0x01, 0x00, 0x00, 0x2A])))),
            .unreliable(
                "SEND_DATA to everyone", E.sendDataAll,
                .client(.sendData(matchID: match, targets: [], payload: ByteBuffer(bytes: [0x02, 0x00, 0x96, 0x00, 0x40])))),
            .reliable(
                "RESPONSE MATCH_JOINED", E.matchJoined, sequence: 2, ack: 2,
                .server(
                    .response(
                        id: 2,
                        .matchJoined(
                            NativeMatchInfo(
                                matchID: match, mode: "relay", label: "friday night", capacity: 4,
                                players: [.init(playerID: alice, presence: .away), .init(playerID: bob, presence: .connected)]))))),
            .reliable("RESPONSE MATCH_LEFT", E.matchLeft, sequence: 6, ack: 5, .server(.response(id: 3, .matchLeft(match)))),
            .reliable(
                "REQUEST_ERROR", E.requestError, sequence: 2, ack: 2,
                .server(.requestError(id: 2, NativeError(.matchFull, "match 4242 is full")))),
            .reliable(
                "PRESENCE", E.presence, sequence: 7, ack: 3,
                .server(.presence(matchID: match, playerID: bob, change: .left, reason: .asked))),
            .reliable(
                "MATCH_DATA", E.matchData, sequence: 4, ack: 3,
                .server(.matchData(matchID: match, sender: alice, payload: ByteBuffer(bytes: [0x01, 0x00, 0x00, 0x2A])))),
            .reliable(
                "MATCH_ENDED", E.matchEnded, sequence: 8, ack: 3,
                .server(.matchEnded(matchID: match, reason: "abandoned(server shutting down)"))),
            .reliable(
                "MATCH_INPUT", E.matchInput, sequence: 4, ack: 3,
                .client(.matchInput(matchID: match, input: ByteBuffer(bytes: [0x04, 0x00, 0x00, 0x00, 0x23])))),
            .reliable(
                "MATCH_EVENT", E.matchEvent, sequence: 9, ack: 4,
                .server(.matchEvent(matchID: match, event: ByteBuffer(bytes: [0x05, 0x01, 0x00, 0x00, 0x00, 0x23])))),
            .reliable(
                "REQUEST LIST_MATCHES", E.listMatches, sequence: 7, ack: 5,
                .client(.request(id: 4, .listMatches(NativeLobbyQuery(mode: "disks", joinableOnly: true, after: 0, limit: 20))))),
            .reliable(
                "RESPONSE MATCH_LIST", E.matchList, sequence: 8, ack: 7,
                .server(.response(id: 4, .matchList(entries: [NativeLobbyEntry(matchID: match, label: "friday night", players: 1, capacity: 4, joinable: true)], next: 0)))),
            .reliable(
                "REQUEST SUBSCRIBE_LOBBY", E.subscribeLobby, sequence: 8, ack: 8,
                .client(.request(id: 5, .subscribeLobby(mode: "disks")))),
            .reliable(
                "RESPONSE LOBBY_SUBSCRIBED", E.lobbySubscribed, sequence: 9, ack: 8,
                .server(.response(id: 5, .lobbySubscribed(mode: "disks", count: 1)))),
            .reliable(
                "LOBBY_UPDATE", E.lobbyUpdate, sequence: 10, ack: 8,
                .server(.lobbyUpdate(mode: "disks", changes: [NativeLobbyChange(.changed, NativeLobbyEntry(matchID: match, label: "friday night", players: 2, capacity: 4, joinable: true)), NativeLobbyChange(.added, NativeLobbyEntry(matchID: 4243, label: "", players: 1, capacity: 2, joinable: true))]))),
            .reliable(
                "REQUEST UNSUBSCRIBE_LOBBY", E.unsubscribeLobby, sequence: 9, ack: 10,
                .client(.request(id: 6, .unsubscribeLobby(mode: "disks")))),
            .reliable(
                "RESPONSE DONE", E.done, sequence: 11, ack: 9,
                .server(.response(id: 6, .done))),
            .reliable(
                "REQUEST JOIN_BY_CODE", E.joinByCode, sequence: 10, ack: 11,
                .client(.request(id: 7, .joinByCode("K7PX2QMD")))),
            .reliable(
                "REQUEST CREATE_PARTY", E.createParty, sequence: 11, ack: 11,
                .client(.request(id: 8, .createParty(maxSize: 2)))),
            .reliable(
                "RESPONSE PARTY", E.party, sequence: 12, ack: 11,
                .server(.response(id: 8, .party(NativePartyInfo(partyID: "QJ4ZT8WN", leader: alice, maxSize: 2, members: [alice]))))),
            .reliable(
                "REQUEST JOIN_PARTY", E.joinParty, sequence: 1, ack: 1,
                .client(.request(id: 9, .joinParty("QJ4ZT8WN")))),
            .reliable(
                "PARTY_UPDATE", E.partyUpdate, sequence: 13, ack: 11,
                .server(.partyUpdate(NativePartyInfo(partyID: "QJ4ZT8WN", leader: alice, maxSize: 2, members: [alice, bob])))),
            .reliable(
                "REQUEST LEAVE_PARTY", E.leaveParty, sequence: 2, ack: 2,
                .client(.request(id: 10, .leaveParty("QJ4ZT8WN")))),
            .reliable(
                "REQUEST MATCHMAKE", E.matchmake, sequence: 12, ack: 13,
                .client(.request(id: 11, .matchmake(NativeTicketRequest(mode: "disks", minPlayers: 2, maxPlayers: 4, stringProperties: ["region": "eu"], numberProperties: ["skill": 1500], query: [NativeQueryClause(.require, .equals(key: "region", value: "eu")), NativeQueryClause(.require, .range(key: "skill", min: 1300, max: 1700))], partyID: "QJ4ZT8WN"))))),
            .reliable(
                "RESPONSE TICKET_QUEUED", E.ticketQueued, sequence: 14, ack: 12,
                .server(.response(id: 11, .ticketQueued(ticketID: "5e0c9a3f71b24d68")))),
            .reliable(
                "REQUEST CANCEL_TICKET", E.cancelTicket, sequence: 13, ack: 14,
                .client(.request(id: 12, .cancelTicket("5e0c9a3f71b24d68")))),
            .reliable(
                "MATCHMAKER_MATCHED", E.matchmakerMatched, sequence: 15, ack: 13,
                .server(.matchmakerMatched(ticketID: "5e0c9a3f71b24d68", match: NativeMatchInfo(matchID: 4244, mode: "disks", label: "", capacity: 4, players: [.init(playerID: alice, presence: .connected), .init(playerID: bob, presence: .connected)])))),
            .reliable(
                "TICKET_CANCELLED", E.ticketCancelled, sequence: 16, ack: 13,
                .server(.ticketCancelled(ticketID: "5e0c9a3f71b24d68", reason: "the party changed"))),
            .reliable(
                "MATCH_RESUMED", E.matchResumed, sequence: 1, ack: 0,
                .server(.matchResumed(NativeMatchInfo(matchID: match, mode: "fourinarow", label: "", capacity: 2, players: [.init(playerID: alice, presence: .connected), .init(playerID: bob, presence: .reserved)])))),
            .reliable(
                "REQUEST GET_PROFILE", E.getProfile, sequence: 1, ack: 0,
                .client(.request(id: 21, .getProfile(playerID: "")))),
            .reliable(
                "RESPONSE PROFILE", E.profile, sequence: 1, ack: 1,
                .server(.response(id: 21, .profile(NativeProfile(playerID: alice, alias: "f998cf4c", createdAt: 1_767_225_600_000, lastSeenAt: 1_767_312_000_000, stats: [NativeGameStats(game: "fourinarow", played: 3, won: 2, lost: 1, drawn: 0, rating: 1515.5)]))))),
            .reliable(
                "REQUEST GET_MATCH_HISTORY", E.getMatchHistory, sequence: 2, ack: 1,
                .client(.request(id: 22, .getMatchHistory(playerID: "", limit: 2)))),
            .reliable(
                "RESPONSE MATCH_HISTORY", E.matchHistory, sequence: 2, ack: 2,
                .server(.response(id: 22, .matchHistory(playerID: alice, matches: [NativeMatchSummary(matchID: match, game: "fourinarow", startedAt: 1_767_225_600_000, endedAt: 1_767_225_900_000, state: .finished, outcome: .won, reason: "", players: [alice, bob]), NativeMatchSummary(matchID: 4240, game: "disks", startedAt: 1_767_225_000_000, endedAt: 1_767_225_060_000, state: .abandoned, outcome: .none, reason: "server restarted", players: [alice])])))),
            .reliable(
                "REQUEST GET_LEADERBOARD", E.getLeaderboard, sequence: 3, ack: 2,
                .client(.request(id: 23, .getLeaderboard(game: "fourinarow", around: "", limit: 2)))),
            .reliable(
                "RESPONSE LEADERBOARD", E.leaderboard, sequence: 3, ack: 3,
                .server(.response(id: 23, .leaderboard(game: "fourinarow", entries: [NativeLeaderboardEntry(rank: 1, playerID: bob, alias: "b67b73f1", rating: 1531.25, won: 5, played: 6), NativeLeaderboardEntry(rank: 2, playerID: alice, alias: "f998cf4c", rating: 1515.5, won: 2, played: 3)])))),
            .reliable(
                "REQUEST WRITE_VALUE", E.writeValue, sequence: 4, ack: 3,
                .client(.request(id: 24, .writeValue(key: "settings", value: ByteBuffer(bytes: [1, 2, 3]))))),
            .reliable(
                "REQUEST READ_VALUE", E.readValue, sequence: 5, ack: 4,
                .client(.request(id: 25, .readValue(key: "settings")))),
            .reliable(
                "RESPONSE VALUE", E.value, sequence: 5, ack: 5,
                .server(.response(id: 25, .value(key: "settings", value: ByteBuffer(bytes: [1, 2, 3]))))),
            .reliable(
                "REQUEST DELETE_VALUE", E.deleteValue, sequence: 6, ack: 5,
                .client(.request(id: 26, .deleteValue(key: "settings")))),
            .reliable("REQUEST CREATE_LINK_CODE", E.createLinkCode, sequence: 7, ack: 6, .client(.request(id: 27, .createLinkCode))),
            .reliable(
                "RESPONSE LINK_CODE", E.linkCode, sequence: 7, ack: 7,
                .server(.response(id: 27, .linkCode(code: "K7M2QX9D", expiresAt: 1_767_226_200_000)))),
            .frame("AUTHENTICATE link", E.authenticateLink, .authenticate(.link(code: "K7M2QX9D", deviceID: secondDeviceID, secret: ""))),
            .reliable("REQUEST LIST_DEVICES", E.listDevices, sequence: 8, ack: 7, .client(.request(id: 28, .listDevices))),
            .reliable(
                "RESPONSE DEVICES", E.devices, sequence: 8, ack: 8,
                .server(
                    .response(
                        id: 28,
                        .devices([
                            NativeDevice(deviceID: deviceID, linkedAt: 1_767_225_600_000),
                            NativeDevice(deviceID: secondDeviceID, linkedAt: 1_767_225_900_000),
                        ])))),
            .reliable(
                "REQUEST UNLINK_DEVICE", E.unlinkDevice, sequence: 9, ack: 8,
                .client(.request(id: 29, .unlinkDevice(deviceID: secondDeviceID)))),
            .reliable("REQUEST SET_ALIAS", E.setAlias, sequence: 10, ack: 9, .client(.request(id: 30, .setAlias("Ann 🐈")))),
            .reliable(
                "REQUEST GET_ALIASES", E.getAliases, sequence: 11, ack: 10, .client(.request(id: 31, .getAliases(playerIDs: [alice, bob])))),
            .reliable(
                "RESPONSE ALIASES", E.aliases, sequence: 9, ack: 11,
                .server(
                    .response(
                        id: 31,
                        .aliases([NativePlayerAlias(playerID: alice, alias: "Ann 🐈"), NativePlayerAlias(playerID: bob, alias: "b67b73f1")])))),
        ]
    }()
}

@Suite struct NativeByteExampleTests {
    @Test(arguments: NativeExample.all)
    func encodingGivesTheDocumentedBytes(_ example: NativeExample) {
        let bytes = example.bytes
        #expect(Array(example.frame.encodedFrame().readableBytesView) == bytes)
        // The hot-path writers give the same bytes as NativeFrame.
        var fast = ByteBuffer()
        switch example.frame {
        case .reliable(let sequence, let ack, let message):
            fast.writeReliableFrame(sequence: sequence, ack: ack, message: message)
            #expect(Array(fast.readableBytesView) == bytes)
            #expect(example.message.map { Array($0.encoded.readableBytesView) } == Array(bytes.dropFirst(NativeFrame.reliableHeaderSize)))
        case .unreliable(let message):
            fast.writeUnreliableFrame(message: message)
            #expect(Array(fast.readableBytesView) == bytes)
            #expect(example.message.map { Array($0.encoded.readableBytesView) } == Array(bytes.dropFirst(5)))
        default:
            #expect(example.message == nil)
        }
    }

    @Test(arguments: NativeExample.all)
    func decodingTheDocumentedBytesGivesTheValue(_ example: NativeExample) throws {
        let bytes = example.bytes
        let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        #expect(length == bytes.count - 4)
        let frame = try NativeFrame(frameBody: ByteBuffer(bytes: bytes.dropFirst(4)))
        #expect(frame == example.frame)
        guard let expected = example.message else { return }
        let message: ByteBuffer
        switch frame {
        case .reliable(_, _, let bytes), .unreliable(let bytes): message = bytes
        default:
            Issue.record("a message example must be a RELIABLE or UNRELIABLE frame")
            return
        }
        #expect(try expected.decodeSameSide(message) == expected)
        // The other side refuses it: it only travels the other way.
        #expect(throws: WireError.wrongDirection(messageType: expected.type)) { try expected.decodeOtherSide(message) }
    }

    @Test(arguments: NativeExample.all)
    func everyProperPrefixOfABodyIsTruncated(_ example: NativeExample) {
        let body = Array(example.bytes.dropFirst(4))
        for count in 0..<body.count {
            let prefix = ByteBuffer(bytes: body.prefix(count))
            do {
                let frame = try NativeFrame(frameBody: prefix)
                // Only a RELIABLE or UNRELIABLE frame whose message is cut short decodes at
                // the frame level; its message must then fail.
                switch frame {
                case .reliable(_, _, let message), .unreliable(let message):
                    _ = try example.message?.decodeSameSide(message)
                default: break
                }
                Issue.record("\(example.name): \(count) of \(body.count) bytes decoded as \(frame)")
            } catch let error as WireError {
                guard case .truncated = error else {
                    Issue.record("\(example.name): \(count) bytes: \(error)")
                    continue
                }
            } catch {
                Issue.record("\(example.name): \(count) bytes: \(error)")
            }
        }
    }

    @Test func examplesCoverEveryFrameKindMessageTypeAndVariant() {
        let frames = NativeExample.all.map(\.frame)
        #expect(Set(frames.map(\.kind.rawValue)) == Set(NativeFrameKind.allCases.map(\.rawValue)))
        let messages = NativeExample.all.compactMap(\.message)
        #expect(Set(messages.map(\.type)) == Set(NativeMessageType.allCases.map(\.rawValue)))
        #expect(frames.contains(.authenticate(.device(id: NativeExample.deviceID, secret: ""))))
        #expect(frames.contains(.authenticate(.token(NativeExample.sessionToken))))
        #expect(frames.contains(.authenticate(.link(code: "K7M2QX9D", deviceID: NativeExample.secondDeviceID, secret: ""))))
        var requestKinds: Set<UInt8> = []
        var responseKinds: Set<UInt8> = []
        var targetCounts: Set<Int> = []
        for message in messages {
            switch message {
            case .client(.request(_, let request)): requestKinds.insert(request.kind)
            case .client(.sendData(_, let targets, _)): targetCounts.insert(targets.count)
            case .server(.response(_, let response)): responseKinds.insert(response.kind)
            default: break
            }
        }
        #expect(requestKinds == Set(1...23))
        #expect(responseKinds == Set(1...14))
        #expect(targetCounts == [0, 1])
    }

    @Test func documentHoldsExactlyTheseExamples() throws {
        let blocks = try documentedExamples(in: "PROTOCOL.md", under: "### Native byte examples")
        #expect(blocks.count == NativeExample.all.count)
        for (block, example) in zip(blocks, NativeExample.all) {
            #expect(block == example.text, "\(example.name): PROTOCOL.md and NativeByteExamples differ")
        }
    }

    @Test func dripFedExamplesComeOutWhole() throws {
        var stream = ByteBuffer()
        for example in NativeExample.all { stream.writeBytes(example.bytes) }
        var accumulator = FrameAccumulator(maximumBodySize: 1024)
        var frames: [NativeFrame] = []
        while let byte = stream.readSlice(length: 1) {
            var read = byte
            accumulator.append(&read)
            while let body = try accumulator.nextFrame() { frames.append(try NativeFrame(frameBody: body)) }
        }
        #expect(frames == NativeExample.all.map(\.frame))
        #expect(accumulator.bufferedBytes == 0)
    }

    @Test func verifierSplitsNativeFramesEveryWay() {
        var input = ByteBuffer()
        var expected: [ByteBuffer] = []
        for example in NativeExample.all where ["HELLO", "WELCOME", "PING", "GOODBYE", "REQUEST CREATE_MATCH", "SEND_DATA to everyone"]
            .contains(example.name)
        {
            input.writeBytes(example.bytes)
            expected.append(ByteBuffer(bytes: example.bytes.dropFirst(4)))
        }
        #expect(expected.count == 6)
        #expect(throws: Never.self) {
            try ByteToMessageDecoderVerifier.verifyDecoder(
                inputOutputPairs: [(input, expected)],
                decoderFactory: { FrameDecoder(maximumBodySize: 1024) })
        }
    }
}

@Suite struct NativeDecodeErrorTests {
    private func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }
    private func u32(_ value: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
    private func u64(_ value: UInt64) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
    private func str(_ value: String) -> [UInt8] { self.u16(UInt16(value.utf8.count)) + Array(value.utf8) }
    private func str(raw bytes: [UInt8]) -> [UInt8] { self.u16(UInt16(bytes.count)) + bytes }

    private func frame(_ body: [UInt8]) throws -> NativeFrame { try NativeFrame(frameBody: ByteBuffer(bytes: body)) }
    private func client(_ message: [UInt8]) throws -> NativeClientMessage { try NativeClientMessage(message: ByteBuffer(bytes: message)) }
    private func server(_ message: [UInt8]) throws -> NativeServerMessage { try NativeServerMessage(message: ByteBuffer(bytes: message)) }

    @Test func unknownFrameKinds() {
        for kind: UInt8 in [0x00, 0x0E, 0x20, 0x40, 0xFF] {
            #expect(throws: NativeWireError.unknownFrameKind(kind)) { try self.frame([kind]) }
        }
        #expect(throws: WireError.truncated(field: "frame kind", needed: 1, available: 0)) { try self.frame([]) }
    }

    @Test func unknownMessageTypes() {
        for type: UInt8 in [0x00, 0x0B, 0x1F, 0x23, 0x3F, 0x4B, 0xFF] {
            #expect(throws: WireError.unknownMessageType(type)) { try self.client([type]) }
            #expect(throws: WireError.unknownMessageType(type)) { try self.server([type]) }
        }
        #expect(throws: WireError.truncated(field: "message type", needed: 1, available: 0)) { try self.client([]) }
        #expect(throws: WireError.truncated(field: "message type", needed: 1, available: 0)) { try self.server([]) }
    }

    @Test func messagesOfTheOtherDirectionAreRefused() {
        // A client decoding a client message, and a server decoding a server message (the
        // documented examples check whole messages; the type byte alone is enough).
        for type: UInt8 in [0x20, 0x21] {
            #expect(throws: WireError.wrongDirection(messageType: type)) { try self.server([type]) }
        }
        for type: UInt8 in [0x40, 0x41, 0x42, 0x43, 0x44] {
            #expect(throws: WireError.wrongDirection(messageType: type)) { try self.client([type]) }
        }
    }

    @Test func truncatedFieldsNameTheField() {
        #expect(throws: WireError.truncated(field: "version", needed: 2, available: 1)) { try self.frame([0x01, 0x00]) }
        #expect(throws: WireError.truncated(field: "game id length", needed: 2, available: 1)) { try self.frame([0x01, 0, 1, 0]) }
        #expect(throws: WireError.truncated(field: "game id", needed: 9, available: 5)) {
            try self.frame([0x01, 0, 1, 0, 9] + Array("match".utf8))
        }
        #expect(throws: WireError.truncated(field: "idle timeout", needed: 4, available: 2)) {
            try self.frame([0x02] + self.u16(1) + self.u32(5000) + [0, 0])
        }
        #expect(throws: WireError.truncated(field: "method", needed: 1, available: 0)) { try self.frame([0x03]) }
        #expect(throws: WireError.truncated(field: "device secret length", needed: 2, available: 0)) {
            try self.frame([0x03, 1] + self.str("a-device"))
        }
        #expect(throws: WireError.truncated(field: "session grace", needed: 4, available: 2)) {
            try self.frame(Array(hexBytes(NativeByteExamples.authenticated).dropFirst(4).dropLast(2)))
        }
        #expect(throws: WireError.truncated(field: "last received", needed: 8, available: 0)) {
            try self.frame([0x05] + self.str("s") + self.str("r"))
        }
        #expect(throws: WireError.truncated(field: "error message length", needed: 2, available: 0)) {
            try self.frame([0x07] + self.u16(3))
        }
        #expect(throws: WireError.truncated(field: "ping value", needed: 8, available: 3)) { try self.frame([0x08, 0, 0, 0]) }
        #expect(throws: WireError.truncated(field: "pong value", needed: 8, available: 7)) { try self.frame([0x09] + Array(repeating: 0, count: 7)) }
        #expect(throws: WireError.truncated(field: "ack", needed: 8, available: 0)) { try self.frame([0x0A]) }
        #expect(throws: WireError.truncated(field: "sequence", needed: 8, available: 4)) { try self.frame([0x0B, 0, 0, 0, 1]) }
        #expect(throws: WireError.truncated(field: "ack", needed: 8, available: 3)) { try self.frame([0x0B] + self.u64(1) + [0, 0, 0]) }

        #expect(throws: WireError.truncated(field: "request id", needed: 4, available: 2)) { try self.client([0x20, 0, 0]) }
        #expect(throws: WireError.truncated(field: "request kind", needed: 1, available: 0)) { try self.client([0x20] + self.u32(1)) }
        #expect(throws: WireError.truncated(field: "max players", needed: 1, available: 0)) {
            try self.client([0x20] + self.u32(1) + [1] + self.str("relay"))
        }
        #expect(throws: WireError.truncated(field: "match id", needed: 8, available: 2)) { try self.client([0x20] + self.u32(1) + [2, 0, 0]) }
        // Two targets announced, one present.
        #expect(throws: WireError.truncated(field: "target player id length", needed: 2, available: 0)) {
            try self.client([0x21] + self.u64(4242) + [2] + self.str("b67b"))
        }
        #expect(throws: WireError.truncated(field: "payload length", needed: 4, available: 2)) {
            try self.client([0x21] + self.u64(4242) + [0, 0, 0])
        }
        #expect(throws: WireError.truncated(field: "payload", needed: 10, available: 3)) {
            try self.client([0x21] + self.u64(4242) + [0] + self.u32(10) + [1, 2, 3])
        }

        #expect(throws: WireError.truncated(field: "response kind", needed: 1, available: 0)) { try self.server([0x40] + self.u32(1)) }
        // Two players announced, one present.
        #expect(throws: WireError.truncated(field: "player id length", needed: 2, available: 0)) {
            try self.server([0x40] + self.u32(1) + [1] + self.u64(4242) + self.str("relay") + self.str("") + [4, 2] + self.str("f998") + [1])
        }
        #expect(throws: WireError.truncated(field: "error code", needed: 2, available: 1)) { try self.server([0x41] + self.u32(1) + [0]) }
        #expect(throws: WireError.truncated(field: "leave reason", needed: 1, available: 0)) {
            try self.server([0x42] + self.u64(4242) + self.str("b67b") + [4])
        }
        #expect(throws: WireError.truncated(field: "sender", needed: 32, available: 4)) {
            try self.server([0x43] + self.u64(4242) + self.u16(32) + Array("f998".utf8))
        }
        #expect(throws: WireError.truncated(field: "reason length", needed: 2, available: 0)) { try self.server([0x44] + self.u64(4242)) }
    }

    @Test func reliableAndUnreliableFramesNeedAMessageByte() throws {
        #expect(throws: WireError.truncated(field: "message type", needed: 1, available: 0)) {
            try self.frame([0x0B] + self.u64(1) + self.u64(0))
        }
        #expect(throws: WireError.truncated(field: "message type", needed: 1, available: 0)) { try self.frame([0x0C]) }
        // One byte is enough for the frame; the message is checked when it is decoded.
        #expect(try self.frame([0x0B] + self.u64(1) + self.u64(0) + [0x20]) == .reliable(sequence: 1, ack: 0, message: ByteBuffer(bytes: [0x20])))
    }

    @Test func stringsOverTheirMaximumAreRefused() throws {
        let long = { (count: Int) in String(repeating: "a", count: count) }
        // At the maximum: accepted.
        #expect(try self.frame([0x01] + self.u16(1) + self.str(long(255))) == .hello(version: 1, gameID: long(255)))
        #expect(try self.frame([0x03, 2] + self.str(long(1024))) == .authenticate(.token(long(1024))))
        #expect(
            try self.client([0x20] + self.u32(1) + [1] + self.str(long(64)) + [0] + self.str(long(255)) + [0])
                == .request(id: 1, .createMatch(mode: long(64), maxPlayers: 0, label: long(255))))
        #expect(try self.frame([0x07] + self.u16(3) + self.str(long(4096))) == .error(NativeError(.badMessage, long(4096))))
        // One over: refused, with the announced length.
        #expect(throws: WireError.stringTooLong(field: "game id", length: 256, maximum: 255)) {
            try self.frame([0x01] + self.u16(1) + self.str(long(256)))
        }
        #expect(throws: WireError.stringTooLong(field: "device id", length: 256, maximum: 255)) {
            try self.frame([0x03, 1] + self.str(long(256)) + self.str(""))
        }
        #expect(throws: WireError.stringTooLong(field: "session token", length: 1025, maximum: 1024)) {
            try self.frame([0x03, 2] + self.str(long(1025)))
        }
        #expect(throws: WireError.stringTooLong(field: "mode", length: 65, maximum: 64)) {
            try self.client([0x20] + self.u32(1) + [1] + self.str(long(65)) + [0] + self.str(""))
        }
        #expect(throws: WireError.stringTooLong(field: "label", length: 256, maximum: 255)) {
            try self.client([0x20] + self.u32(1) + [1] + self.str("relay") + [0] + self.str(long(256)))
        }
        #expect(throws: WireError.stringTooLong(field: "target player id", length: 256, maximum: 255)) {
            try self.client([0x21] + self.u64(1) + [1] + self.str(long(256)) + self.u32(0))
        }
        #expect(throws: WireError.stringTooLong(field: "error message", length: 4097, maximum: 4096)) {
            try self.frame([0x07] + self.u16(3) + self.str(long(4097)))
        }
        #expect(throws: WireError.stringTooLong(field: "reason", length: 4097, maximum: 4096)) {
            try self.server([0x44] + self.u64(1) + self.str(long(4097)))
        }
        // A huge length is refused before the missing bytes are waited for or read.
        #expect(throws: WireError.stringTooLong(field: "game id", length: 65535, maximum: 255)) {
            try self.frame([0x01] + self.u16(1) + [0xFF, 0xFF])
        }
    }

    @Test(arguments: [
        [0xC3, 0x28],  // a 2-byte lead followed by ASCII
        [0x80],  // a lone continuation byte
        [0xC0, 0xAF],  // an overlong "/"
        [0xED, 0xA0, 0x80],  // a UTF-16 surrogate
        [0xE2, 0x82],  // cut short
        [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
        [0xFF],
    ] as [[UInt8]])
    func invalidUTF8IsRefused(_ bad: [UInt8]) {
        #expect(throws: WireError.invalidUTF8(field: "game id")) { try self.frame([0x01] + self.u16(1) + self.str(raw: Array("ab".utf8) + bad)) }
        #expect(throws: WireError.invalidUTF8(field: "player id")) {
            try self.server([0x42] + self.u64(1) + self.str(raw: bad) + [1, 0])
        }
        #expect(throws: WireError.invalidUTF8(field: "label")) {
            try self.client([0x20] + self.u32(1) + [1] + self.str("relay") + [0] + self.str(raw: bad))
        }
    }

    @Test(arguments: [
        [0x0A],  // a newline: a forged log line
        [0x1B, 0x5B, 0x32, 0x4A],  // ESC [2J: a terminal escape
        [0x00],
        [0x09],
        [0x7F],  // DEL
        [0xC2, 0x85],  // U+0085, a C1 line break
        [0xC2, 0x9B],  // U+009B, the C1 escape
    ] as [[UInt8]])
    func controlCharactersAreRefusedInBothDirections(_ control: [UInt8]) {
        let raw = Array("ab".utf8) + control + Array("c".utf8)
        #expect(throws: WireError.controlCharacter(field: "game id")) { try self.frame([0x01] + self.u16(1) + self.str(raw: raw)) }
        #expect(throws: WireError.controlCharacter(field: "label")) {
            try self.client([0x20] + self.u32(1) + [1] + self.str("relay") + [0] + self.str(raw: raw))
        }
        #expect(throws: WireError.controlCharacter(field: "player id")) {
            try self.server([0x42] + self.u64(1) + self.str(raw: raw) + [1, 0])
        }
    }

    @Test func aControlCharacterIsWrittenAsASpaceAndPrintableOnesAsThey() throws {
        // What a server's own text may hold (an error quoting a multi-line description) still
        // makes a message its reader takes.
        let reason = "could not be restored:\n\tbad state\u{1B}[0m \u{85}end"
        let ended = NativeServerMessage.matchEnded(matchID: 7, reason: reason).encoded()
        #expect(try self.server(Array(ended.readableBytesView)) == .matchEnded(matchID: 7, reason: "could not be restored:  bad state [0m  end"))
        // 0xC2 also leads printable characters (U+00A0-U+00BF), which pass both ways.
        let label = "© 2026 « Ω »"
        let bytes = [0x20] + self.u32(1) + [1] + self.str("relay") + [0] + self.str(label) + [0]
        #expect(try self.client(bytes) == .request(id: 1, .createMatch(mode: "relay", maxPlayers: 0, label: label)))
        #expect(Array(NativeClientMessage.request(id: 1, .createMatch(mode: "relay", maxPlayers: 0, label: label)).encoded().readableBytesView) == bytes)
    }

    @Test func multiByteUTF8IsCountedInBytes() throws {
        let label = "café 🎮"
        let bytes = [0x20] + self.u32(1) + [1] + self.str("relay") + [0] + self.str(label) + [0]
        #expect(self.str(label).prefix(2) == [0, 10])
        #expect(try self.client(bytes) == .request(id: 1, .createMatch(mode: "relay", maxPlayers: 0, label: label)))
        #expect(Array(NativeClientMessage.request(id: 1, .createMatch(mode: "relay", maxPlayers: 0, label: label)).encoded().readableBytesView) == bytes)
    }

    @Test func aWriteValueFrameIsItsOverheadItsKeyAndItsValue() {
        for (key, count) in [("", 0), ("settings", 3), (String(repeating: "k", count: 255), 70_000)] {
            let message = NativeClientMessage.request(
                id: .max, .writeValue(key: key, value: ByteBuffer(repeating: 1, count: count))
            ).encoded()
            let frame = NativeFrame.reliable(sequence: .max, ack: .max, message: message).encodedFrame()
            #expect(frame.readableBytes - 4 == NativeRequest.writeValueFrameOverhead + key.utf8.count + count)
        }
    }

    @Test func unknownAuthenticationMethodsRequestKindsAndResponseKinds() throws {
        for method: UInt8 in [0, 4, 0xFF] {
            #expect(throws: NativeWireError.unknownAuthenticationMethod(method)) { try self.frame([0x03, method] + self.str("x")) }
        }
        for kind: UInt8 in [0, 24, 0xFF] {
            // A request of an unknown kind is still a request the server can answer (its body skipped).
            #expect(try self.client([0x20] + self.u32(7) + [kind] + self.u64(1)) == .unknownRequest(id: 7, kind: kind))
            #expect(Array(NativeClientMessage.unknownRequest(id: 7, kind: kind).encoded().readableBytesView) == [0x20] + self.u32(7) + [kind])
        }
        for kind: UInt8 in [0, 15, 0xFF] {
            #expect(throws: NativeWireError.unknownResponseKind(kind)) { try self.server([0x40] + self.u32(7) + [kind] + self.u64(1)) }
        }
    }

    @Test func invalidPresenceValuesAreRefused() throws {
        let joined = { (presence: UInt8) in
            [0x40] + self.u32(1) + [1] + self.u64(4242) + self.str("relay") + self.str("") + [4, 1] + self.str("f998") + [presence]
                + self.str("")
        }
        for presence: UInt8 in [1, 2, 3] {
            #expect(throws: Never.self) { try self.server(joined(presence)) }
        }
        for presence: UInt8 in [0, 4, 0xFF] {
            #expect(throws: NativeWireError.invalidValue(field: "presence", value: UInt64(presence))) { try self.server(joined(presence)) }
        }
        let presence = { (change: UInt8, reason: UInt8) in [0x42] + self.u64(4242) + self.str("b67b") + [change, reason] }
        for change: UInt8 in [0, 5, 0xFF] {
            #expect(throws: NativeWireError.invalidValue(field: "presence change", value: UInt64(change))) {
                try self.server(presence(change, 0))
            }
        }
        for reason: UInt8 in [4, 0xFF] {
            #expect(throws: NativeWireError.invalidValue(field: "leave reason", value: UInt64(reason))) {
                try self.server(presence(4, reason))
            }
        }
        #expect(
            try self.server(presence(4, 2)) == .presence(matchID: 4242, playerID: "b67b", change: .left, reason: .graceExpired))
    }

    @Test func unknownErrorCodesStillDecode() throws {
        let error = try self.frame([0x07] + self.u16(999) + self.str("later"))
        #expect(error == .error(NativeError(NativeErrorCode(rawValue: 999), "later")))
        #expect(NativeErrorCode(rawValue: 999).name == "ERROR_999")
        #expect(try self.server([0x41] + self.u32(5) + self.u16(250) + self.str("")) == .requestError(id: 5, NativeError(NativeErrorCode(rawValue: 250), "")))
    }
}
