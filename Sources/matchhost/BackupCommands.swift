import ArgumentParser
import Foundation
import MatchHostSQLite
import MatchHostServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `matchhost backup FILE`: a consistent copy of the server's database, taken while it runs.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write a consistent copy of the server's database to FILE, while the server runs.",
        discussion: """
            Copies everything committed when the backup starts (SQLite's VACUUM INTO through a \
            read-only connection: the server goes on writing meanwhile), syncs it, checks it \
            with PRAGMA integrity_check, and only then names it FILE, which must not exist. The \
            copy is mode 0600: it holds hashed device secrets. Put it back with \
            `matchhost restore FILE`. Session tokens are signed with token-signing.key in \
            --data, which the backup does not hold: keep that file too (it is a secret) if \
            tokens and link codes should stay valid; without it players sign in again with \
            their devices.
            """)

    @Argument(help: "The backup file to write (must not exist).")
    var file: String

    @Option(help: "The server's data directory.")
    var data = "data"

    func run() throws {
        failWritesPastFileSizeLimit()
        let source = (self.data as NSString).appendingPathComponent(SQLiteGameStore.fileName)
        do {
            let summary = try SQLiteBackup.backup(from: source, to: self.file)
            print("backed up \(source) to \(self.file): \(summary); integrity check ok")
        } catch {
            FileHandle.standardError.write(Data("matchhost: backup failed: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}

extension RestoreCommand {
    /// Run as root (under sudo, say), the files restore writes would be root's, mode 0600, and
    /// a server running as the data directory's owner could not open them: they are given to
    /// that owner.
    fileprivate func giveToDataDirectoryOwner(_ paths: [String]) {
        guard geteuid() == 0, let owner = try? FileManager.default.attributesOfItem(atPath: self.data),
            let user = (owner[.ownerAccountID] as? NSNumber)?.uint32Value, let group = (owner[.groupOwnerAccountID] as? NSNumber)?.uint32Value,
            user != 0
        else { return }
        for path in paths { _ = chown(path, uid_t(user), gid_t(group)) }
    }
}

/// `matchhost restore FILE`: a backup put in place as the database of a stopped server.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put the backup FILE in place as the database in --data. The server must be stopped.",
        discussion: """
            Refused while a server uses --data (the same lock `matchhost serve` takes). Copies \
            and checks FILE as `matchhost backup` does, then renames the copy over the database \
            in --data, which is kept (its write-ahead log folded in) as \
            matchhost.sqlite.before-restore-<time>. Run as root, the files go to the data \
            directory's owner. Turn-based games running in the backup continue when the server \
            starts; a backup from an older MatchHost is migrated then. With --check, only \
            verifies FILE.
            """)

    @Argument(help: "The backup file (written by matchhost backup).")
    var file: String

    @Option(help: "The server's data directory (created if missing).")
    var data = "data"

    @Flag(help: "Only check that FILE would restore (the same copy and checks, in a temporary directory); --data is not touched.")
    var check = false

    func run() throws {
        failWritesPastFileSizeLimit()
        if self.check {
            do {
                let summary = try SQLiteBackup.check(backup: self.file)
                print("\(self.file) would restore: \(summary); integrity check ok")
                return
            } catch {
                FileHandle.standardError.write(Data("matchhost: \(self.file) would not restore: \(error)\n".utf8))
                throw ExitCode(2)
            }
        }
        let lock: DataDirectoryLock
        do {
            lock = try DataDirectoryLock.acquire(directory: self.data)
        } catch {
            let advice = (error as? DataDirectoryLockError)?.isHeldByAnotherProcess == true ? " Stop the server first." : ""
            FileHandle.standardError.write(Data("matchhost: restore refused: \(error).\(advice)\n".utf8))
            throw ExitCode(2)
        }
        defer { lock.release() }
        do {
            let restored = try SQLiteBackup.restore(from: self.file, toDirectory: self.data)
            self.giveToDataDirectoryOwner([lock.path, (self.data as NSString).appendingPathComponent(SQLiteGameStore.fileName)])
            print("restored \(self.file) into \(self.data): \(restored.summary); integrity check ok")
            if let replaced = restored.replaced {
                let kept = ["", "-wal", "-shm"].map { replaced + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
                print("what it replaced is kept as \(kept.joined(separator: " and "))")
            }
        } catch {
            FileHandle.standardError.write(Data("matchhost: restore failed: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}
