#!/usr/bin/env bash
# The issue 5 benchmarks (docs/bench-issue5.md): a Four in a Row move is durable before it is
# acknowledged, and acknowledging costs under 2 ms at p99 with 1,000 concurrent games (SQLite
# WAL, synchronous FULL, on this machine's disk); storing results never stalls an event loop
# (Disks tick-to-delivery with and without storage, while the Four in a Row load runs).
# Server pinned to core 0, load on core 1, a fresh server (and --data on the disk) per run.
# Usage: scripts/bench-issue5.sh [scenario...]   (default: fsync fourinarow ticks)
#   scenarios:
#     fsync            the disk's floor: fdatasync of 4 KiB, and one SQLite WAL transaction (FULL)
#     fourinarow       1,000 games, think 1 s (about 1,000 moves/s), --store sqlite (the target);
#                      at the window's end the bench kills the server (SIGKILL) with the games
#                      moving, and every move a player got MOVED for is checked in the log
#     fourinarow-memory  the same with --store memory (what the store adds)
#     fourinarow-rates 1,000 games at think 5 s, 0.5 s and 0.25 s (about 200, 2,000 and 4,000
#                      moves/s), sqlite
#     ticks            Disks 50 x 16 alone; then with the Four in a Row load, --store sqlite;
#                      then with the load, --store memory
# Environment: DURATION (seconds measured, default 20), PORT (default 17357), DATA_PARENT
#   (where the temporary --data goes, default /tmp: must be on the disk being measured),
#   BENCH_FLAGS (extra flags for every bench, e.g. "--json"), BIN (a matchhost binary to use
#   instead of building this checkout's release binary: for comparing builds).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
DURATION=${DURATION:-20}
PORT=${PORT:-17357}
DATA_PARENT=${DATA_PARENT:-/tmp}
BENCH_FLAGS=${BENCH_FLAGS:-}
if [ -z "${BIN:-}" ]; then
    swift build -c release --product matchhost >/dev/null
    BIN=.build/release/matchhost
fi
SERVER_PID=
DATA=
DURABILITY_FAILED=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK" ${DATA:+"$DATA"}' EXIT

start_server() {  # store
    DATA=$(mktemp -d -p "$DATA_PARENT" matchhost-bench5.XXXXXX)
    taskset -c 0 "$BIN" serve --host 127.0.0.1 --no-admin --no-web --data "$DATA" --store "$1" --catrace-port 0 --port "$PORT" --max-new-players-per-minute 1000000 --max-new-matches-per-minute 1000000 --max-connections-per-address 100000 \
        --log-level warning >/dev/null 2>"$WORK/server.log" &
    SERVER_PID=$!
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "server did not start" >&2
    exit 1
}
# Its warnings are counted, not printed one by one. With SQLite, the stored move log is then
# checked against what the bench saw acknowledged: every acknowledged move must be in it.
# (A server the bench killed is already gone.)
stop_server() {  # [moves acknowledged]
    # The bench's last GOODBYEs end 1,000 games, each a stored result: let them land first.
    if kill -0 "$SERVER_PID" 2>/dev/null; then sleep 2; fi
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" || true
    local lines
    lines=$(wc -l <"$WORK/server.log")
    if [ "$lines" -gt 0 ]; then
        echo "-- server log: $lines lines, the last:"
        tail -n 2 "$WORK/server.log" | cut -c1-300
    fi
    if [ -n "${1:-}" ] && [ -f "$DATA/matchhost.sqlite" ]; then
        local stored
        stored=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM turn_move").fetchone()[0])' \
            "$DATA/matchhost.sqlite")
        if [ "$stored" -ge "$1" ]; then
            echo "-- durability: $1 moves acknowledged, $stored in the stored move log (every acknowledged move is stored)"
        else
            echo "-- durability: FAILED: $1 moves acknowledged but only $stored stored"
        fi
    fi
    rm -rf "$DATA"
    DATA=
}
acknowledged_in_run() { sed -n 's/.*moves acknowledged over the whole run: \([0-9]*\).*/\1/p' "$1" | tail -n 1; }

# check_moved_after_kill: the bench killed the server (SIGKILL, the games still moving) and
# wrote, per match, the highest move any player got MOVED for: moves 1 to it must all be in
# the stored log (opened as the restarted server would, after SQLite's recovery of its WAL),
# and at most one more per match (a move committed as the server died, never acknowledged).
check_moved_after_kill() {
    python3 - "$DATA/matchhost.sqlite" "$WORK/moved.txt" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
seen = dict(tuple(map(int, line.split())) for line in open(sys.argv[2]))
missing = beyond = 0
for match, highest in seen.items():
    stored = [row[0] for row in db.execute("SELECT move_number FROM turn_move WHERE match_id = ? ORDER BY move_number", (match,))]
    if stored[:highest] != list(range(1, highest + 1)): missing += 1
    beyond = max(beyond, len(stored) - highest)
moves = sum(seen.values())
if missing == 0 and beyond <= 1:
    print(f"-- durability after SIGKILL: {len(seen)} matches, {moves} moves a player got MOVED for: every one stored "
          f"(at most {beyond} more per match, committed as the server died)")
else:
    print(f"-- durability after SIGKILL: FAILED: {missing} of {len(seen)} matches lack a move a player got MOVED for, "
          f"or one has {beyond} stored beyond it")
    sys.exit(1)
EOF
}

fsync_probe() {
    echo "== fsync floor in $DATA_PARENT (4 KiB pwrite + fdatasync; SQLite WAL, synchronous FULL, one INSERT per transaction)"
    load
    python3 - "$DATA_PARENT" <<'EOF'
import os, sqlite3, sys, tempfile, time
directory = tempfile.mkdtemp(dir=sys.argv[1])
def report(name, samples):
    samples.sort()
    q = lambda f: samples[min(len(samples) - 1, int(f * len(samples)))] / 1e6
    print(f"{name}: n={len(samples)} p50={q(0.5):.3f} p99={q(0.99):.3f} p99.9={q(0.999):.3f} "
          f"max={samples[-1] / 1e6:.3f} mean={sum(samples) / len(samples) / 1e6:.3f} ms")
path = os.path.join(directory, "probe")
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
samples = []
for i in range(2000):
    os.pwrite(fd, b"x" * 4096, (i % 256) * 4096)
    start = time.perf_counter_ns(); os.fdatasync(fd); samples.append(time.perf_counter_ns() - start)
os.close(fd)
report("fdatasync", samples)
db = sqlite3.connect(os.path.join(directory, "probe.sqlite"), isolation_level=None)
db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA synchronous=FULL")
db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, state BLOB)")
samples = []
for i in range(2000):
    start = time.perf_counter_ns()
    db.execute("BEGIN IMMEDIATE"); db.execute("INSERT INTO t (state) VALUES (?)", (b"s" * 60,)); db.execute("COMMIT")
    samples.append(time.perf_counter_ns() - start)
report("sqlite transaction", samples)
db.close()
for name in os.listdir(directory): os.remove(os.path.join(directory, name))
os.rmdir(directory)
EOF
}

# With SQLite the bench kills the server at the window's end, the games still moving, and
# every move acknowledged must be in the log the next server would read.
fourinarow() {  # store think [label]
    start_server "$1"
    local crash=()
    if [ "$1" = sqlite ]; then crash=(--kill-server --moved-file "$WORK/moved.txt"); fi
    echo "== bench fourinarow --games 1000 --think $2 --seconds $DURATION ${crash[*]:0:1} (server --store $1)"
    load
    bench fourinarow --games 1000 --think "$2" --seconds "$DURATION" "${crash[@]}" | tee "$WORK/fourinarow.out" || echo "bench fourinarow failed"
    if [ "$1" = sqlite ]; then
        wait "$SERVER_PID" || true
        check_moved_after_kill || DURABILITY_FAILED=1
        stop_server
    else
        stop_server "$(acknowledged_in_run "$WORK/fourinarow.out")"
    fi
}
disks_alone() {
    start_server sqlite
    echo "== bench disks --matches 50 --players 16 --seconds $DURATION (alone; server --store sqlite)"
    load
    bench disks --matches 50 --players 16 --seconds "$DURATION" || echo "bench disks failed"
    stop_server
}
# The Four in a Row load starts first and runs past the Disks window; Disks starts once its
# games are all playing.
disks_with_fourinarow() {  # store
    start_server "$1"
    echo "== bench disks --matches 50 --players 16 --seconds $DURATION while bench fourinarow --games 1000 --think 1 runs (server --store $1)"
    load
    bench fourinarow --games 1000 --think 1 --seconds "$((DURATION + 20))" >"$WORK/fourinarow.out" 2>&1 &
    disks_beside_load "$WORK/fourinarow.out" $! 30 50 fourinarow
    stop_server "$(acknowledged_in_run "$WORK/fourinarow.out")"
}

scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(fsync fourinarow ticks)
for scenario in "${scenarios[@]}"; do
    case "$scenario" in
        fsync) fsync_probe ;;
        fourinarow) fourinarow sqlite 1 ;;
        fourinarow-memory) fourinarow memory 1 ;;
        fourinarow-rates) for t in 5 0.5 0.25; do fourinarow sqlite "$t"; done ;;
        ticks) disks_alone; disks_with_fourinarow sqlite; disks_with_fourinarow memory ;;
        *) echo "unknown scenario $scenario" >&2; exit 2 ;;
    esac
done
# A durability check that failed fails the script, after every scenario has run.
exit "$DURABILITY_FAILED"
