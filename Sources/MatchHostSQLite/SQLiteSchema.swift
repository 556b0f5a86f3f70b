import GRDB

/// The database schema, as GRDB migrations. A migration, once released, never changes:
/// schema changes are new migrations appended at the end.
enum SQLiteSchema {
    /// Every migration this build knows, in order.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: createPlayersMatchesTurns)
        migrator.registerMigration("v2", migrate: createPlayerValues)
        migrator.registerMigration("v3", migrate: createExternalIdentities)
        migrator.registerMigration("v4", migrate: createMatchIDReservation)
        migrator.registerMigration("v5", migrate: createMatchEndNotices)
        migrator.registerMigration("v6", migrate: addMatchPrivacy)
        migrator.registerMigration("v7", migrate: addPlayerBans)
        migrator.registerMigration("v8", migrate: addBanEnds)
        migrator.registerMigration("v9", migrate: addDeviceLinks)
        migrator.registerMigration("v10", migrate: createBanRecords)
        migrator.registerMigration("v11", migrate: createLinkCodes)
        migrator.registerMigration("v12", migrate: addAliasLocks)
        return migrator
    }()

    /// Migration names in the order they were made: by number ("v10" after "v9"), names that
    /// are not `v` and a number last.
    static func inOrder(_ identifiers: some Sequence<String>) -> [String] {
        identifiers.sorted { (Int($0.dropFirst()) ?? .max, $0) < (Int($1.dropFirst()) ?? .max, $1) }
    }

    /// Players and devices, matches and their players, stats, turn-based state and moves.
    private static func createPlayersMatchesTurns(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE player (
                id TEXT PRIMARY KEY NOT NULL,
                alias TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_seen_at INTEGER NOT NULL
            );
            CREATE TABLE device_identity (
                device_id TEXT PRIMARY KEY NOT NULL,
                player_id TEXT NOT NULL REFERENCES player(id) ON DELETE CASCADE,
                secret_hash BLOB NOT NULL
            );
            CREATE INDEX device_identity_by_player ON device_identity(player_id);

            CREATE TABLE game_match (
                id INTEGER PRIMARY KEY NOT NULL,
                game TEXT NOT NULL,
                mode TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('real_time', 'turn_based')),
                started_at INTEGER NOT NULL,
                ended_at INTEGER,
                state TEXT NOT NULL CHECK (state IN ('running', 'finished', 'abandoned')),
                abandon_reason TEXT
            );
            CREATE INDEX game_match_running ON game_match(kind, started_at) WHERE state = 'running';
            -- Match players need no account (Cat Race ids are the client's), so no foreign key to player.
            CREATE TABLE match_player (
                match_id INTEGER NOT NULL REFERENCES game_match(id) ON DELETE CASCADE,
                seat INTEGER NOT NULL,
                player_id TEXT NOT NULL,
                outcome TEXT CHECK (outcome IN ('won', 'lost', 'draw')),
                score INTEGER,
                summary TEXT,
                PRIMARY KEY (match_id, seat),
                UNIQUE (match_id, player_id)
            ) WITHOUT ROWID;
            CREATE INDEX match_player_by_player ON match_player(player_id, match_id);

            CREATE TABLE player_stats (
                game TEXT NOT NULL,
                player_id TEXT NOT NULL,
                played INTEGER NOT NULL,
                won INTEGER NOT NULL,
                lost INTEGER NOT NULL,
                drawn INTEGER NOT NULL,
                rating REAL NOT NULL,
                PRIMARY KEY (game, player_id)
            ) WITHOUT ROWID;
            CREATE INDEX player_stats_leaderboard ON player_stats(game, rating DESC, won DESC, player_id);

            CREATE TABLE turn_game (
                match_id INTEGER PRIMARY KEY NOT NULL REFERENCES game_match(id) ON DELETE CASCADE,
                state BLOB NOT NULL,
                move_count INTEGER NOT NULL,
                last_move_at INTEGER NOT NULL
            );
            -- The primary key is what refuses a second row for a move number.
            CREATE TABLE turn_move (
                match_id INTEGER NOT NULL REFERENCES turn_game(match_id) ON DELETE CASCADE,
                move_number INTEGER NOT NULL,
                move BLOB NOT NULL,
                played_at INTEGER NOT NULL,
                PRIMARY KEY (match_id, move_number)
            ) WITHOUT ROWID;
            """)
    }

    /// The per-player key-value store, added after the first release of the schema.
    private static func createPlayerValues(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE player_value (
                player_id TEXT NOT NULL REFERENCES player(id) ON DELETE CASCADE,
                key TEXT NOT NULL,
                value BLOB NOT NULL,
                PRIMARY KEY (player_id, key)
            ) WITHOUT ROWID;
            """)
    }

    /// Identities other systems vouch for or clients claim (Cat Race tutorial ids), each the
    /// key of one player; added after the key-value store.
    private static func createExternalIdentities(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE external_identity (
                kind TEXT NOT NULL,
                external_id TEXT NOT NULL,
                player_id TEXT NOT NULL REFERENCES player(id) ON DELETE CASCADE,
                PRIMARY KEY (kind, external_id)
            ) WITHOUT ROWID;
            CREATE INDEX external_identity_by_player ON external_identity(player_id);
            """)
    }

    /// The match ids a server has reserved for matches it does not store (one row), so that
    /// a crash cannot make them repeat; added after external identities.
    private static func createMatchIDReservation(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE match_id_reservation (
                singleton INTEGER PRIMARY KEY NOT NULL CHECK (singleton = 1),
                reserved_through INTEGER NOT NULL
            );
            """)
    }

    /// What players away when a match of theirs ended are still to hear of it, until they are
    /// back; added after the match id reservation. Cat Race ids are players too, so no foreign
    /// key to player, and none to the match: a notice outlives nothing but its delivery.
    private static func createMatchEndNotices(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE match_end_notice (
                player_id TEXT NOT NULL,
                match_id INTEGER NOT NULL,
                reason TEXT NOT NULL,
                ended_at INTEGER NOT NULL,
                PRIMARY KEY (player_id, match_id)
            ) WITHOUT ROWID;
            CREATE INDEX match_end_notice_by_end ON match_end_notice(ended_at);
            """)
    }

    /// Whether a match was private (joined by invite code), so that another player's history
    /// leaves it out; added after the end notices. Matches stored before were not marked, and
    /// count as open ones.
    private static func addMatchPrivacy(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE game_match ADD COLUMN is_private INTEGER NOT NULL DEFAULT 0 CHECK (is_private IN (0, 1))")
    }

    /// Operators' bans of players (when, and why), added after match privacy. The partial index
    /// holds only the banned players, which a server reads whole at start.
    private static func addPlayerBans(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE player ADD COLUMN banned_at INTEGER;
            ALTER TABLE player ADD COLUMN ban_reason TEXT;
            CREATE INDEX player_banned ON player(id) WHERE banned_at IS NOT NULL;
            """)
    }

    /// When a ban ends by itself, added after bans; bans made before have none, and last until
    /// they are lifted, as they did.
    private static func addBanEnds(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE player ADD COLUMN ban_until INTEGER")
    }

    /// When each device was linked to its player, each player's token generation (bumped
    /// when a device is removed, so that every token issued before is refused), and the devices
    /// removed (so that one signing in again is told, rather than made a new player); added
    /// after ban ends. Devices stored before were their player's first, linked when it was
    /// created. The partial index holds only the players whose tokens were ever revoked, which
    /// a server reads whole at start.
    private static func addDeviceLinks(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE device_identity ADD COLUMN linked_at INTEGER NOT NULL DEFAULT 0;
            UPDATE device_identity SET linked_at = COALESCE(
                (SELECT created_at FROM player WHERE player.id = device_identity.player_id), 0);
            ALTER TABLE player ADD COLUMN token_generation INTEGER NOT NULL DEFAULT 0;
            CREATE INDEX player_token_generation ON player(id) WHERE token_generation > 0;
            CREATE TABLE unlinked_device (
                device_id TEXT PRIMARY KEY NOT NULL,
                player_id TEXT NOT NULL REFERENCES player(id) ON DELETE CASCADE,
                unlinked_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX unlinked_device_by_player ON unlinked_device(player_id, unlinked_at);
            """)
    }

    /// Every ban made, kept when it is lifted or replaced (the player's columns hold only its
    /// latest), added after device links. The bans stored before start the record, as made; a
    /// ban lifted before left nothing to keep.
    private static func createBanRecords(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE player_ban (
                player_id TEXT NOT NULL REFERENCES player(id) ON DELETE CASCADE,
                banned_at INTEGER NOT NULL,
                ban_until INTEGER,
                reason TEXT NOT NULL,
                ended_early_at INTEGER,
                ended_how TEXT CHECK (ended_how IN ('lifted', 'replaced')),
                CHECK ((ended_early_at IS NULL) = (ended_how IS NULL))
            );
            -- Read latest made first: by rowid, which a player's entries in this index follow.
            CREATE INDEX player_ban_by_player ON player_ban(player_id);
            INSERT INTO player_ban (player_id, banned_at, ban_until, reason)
                SELECT id, banned_at, ban_until, COALESCE(ban_reason, '') FROM player WHERE banned_at IS NOT NULL;
            """)
    }

    /// The link codes handed out, one a player at most, by their keyed digest (never the code).
    private static func createLinkCodes(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE link_code (
                player_id TEXT PRIMARY KEY NOT NULL REFERENCES player(id) ON DELETE CASCADE,
                digest BLOB NOT NULL UNIQUE,
                expires_at INTEGER NOT NULL,
                claimed_by TEXT
            );
            """)
    }

    /// Whether the operator fixed a player's alias, added after link codes; no alias was fixed
    /// before.
    private static func addAliasLocks(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE player ADD COLUMN alias_locked INTEGER NOT NULL DEFAULT 0")
    }
}
