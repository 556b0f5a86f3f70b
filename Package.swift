// swift-tools-version:6.1
import PackageDescription

// Expensive dependencies go only in the targets that need them, so that
// `swift test --filter MatchHostWireTests` stays cheap on two cores.
let package = Package(
    name: "MatchHost",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "MatchHostWire", targets: ["MatchHostWire"]),
        .library(name: "MatchHostCore", targets: ["MatchHostCore"]),
        .library(name: "MatchHostGames", targets: ["MatchHostGames"]),
        .library(name: "MatchHostServer", targets: ["MatchHostServer"]),
        .library(name: "MatchHostClient", targets: ["MatchHostClient"]),
        .library(name: "MatchHostSQLite", targets: ["MatchHostSQLite"]),
        .library(name: "MatchHostAdmin", targets: ["MatchHostAdmin"]),
        .executable(name: "matchhost", targets: ["matchhost"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // No default traits: swift-configuration support is not used, and costs a build.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        .target(
            name: "MatchHostWire",
            dependencies: [.product(name: "NIOCore", package: "swift-nio")]
        ),
        .target(
            name: "MatchHostCore",
            dependencies: [
                "MatchHostWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "MatchHostGames",
            dependencies: ["MatchHostCore", "MatchHostWire", .product(name: "Logging", package: "swift-log"), .product(name: "Metrics", package: "swift-metrics")]
        ),
        .target(
            name: "MatchHostServer",
            dependencies: [
                "MatchHostCore", "MatchHostGames", "MatchHostWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // GRDB stays in this target alone; the server sees storage only through `GameStore`.
        .target(
            name: "MatchHostSQLite",
            dependencies: [
                "MatchHostCore",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Hummingbird and Prometheus stay in this target alone: the admin HTTP endpoints.
        .target(
            name: "MatchHostAdmin",
            dependencies: [
                "MatchHostServer",
                "MatchHostWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "MatchHostClient",
            dependencies: [
                "MatchHostWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "matchhost",
            dependencies: [
                "MatchHostServer", "MatchHostClient", "MatchHostWire", "MatchHostSQLite", "MatchHostAdmin",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // What the tests that run `matchhost` as a process share.
        .target(
            name: "MatchHostProcessTesting", dependencies: [.product(name: "Logging", package: "swift-log")],
            path: "Tests/MatchHostProcessTesting"),
        // What the tests that need a store of their own share.
        .target(name: "MatchHostStoreTesting", dependencies: ["MatchHostCore"], path: "Tests/MatchHostStoreTesting"),
        .testTarget(
            name: "MatchHostWireTests",
            dependencies: [
                "MatchHostWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "MatchHostGamesTests",
            dependencies: ["MatchHostGames", "MatchHostCore", "MatchHostWire"]
        ),
        .testTarget(
            name: "MatchHostServerTests",
            dependencies: [
                "MatchHostServer", "MatchHostGames", "MatchHostWire", "MatchHostSQLite", "MatchHostProcessTesting", "MatchHostStoreTesting",
                "MatchHostAdmin",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "MatchHostStorageTests",
            dependencies: [
                "MatchHostCore", "MatchHostSQLite", "MatchHostProcessTesting", .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            // Databases older releases wrote, as SQL text the tests load (not resources).
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "MatchHostClientTests",
            dependencies: [
                "MatchHostClient", "MatchHostServer", "MatchHostWire", "MatchHostSQLite", "MatchHostProcessTesting", "MatchHostStoreTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
