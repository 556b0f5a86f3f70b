#!/usr/bin/env bash
# The issue 4 benchmarks (BENCHMARKS.md, "Lobby fan-out and Disks ticks"): lobby fan-out and Disks ticks. Server pinned
# to core 0, load on core 1, a fresh server for each run so RSS and CPU belong to it alone.
# Usage: scripts/bench-issue4.sh [scenario...]   (default: lobby disks)
#   scenarios:
#     lobby         10,000 subscribers, 20 changes/s          (the issue's target)
#     lobby-small   1,000 subscribers, 20 changes/s
#     lobby-rates   10,000 subscribers at 2 and 5 changes/s
#     lobby-subs    2,000 and 5,000 subscribers, 20 changes/s
#     disks         500 matches of 16, no taps                (the issue's target)
#     disks-small   50 matches of 16, no taps
#     disks-sweep   100, 125, 150 and 200 matches of 16, no taps
#     disks-taps    50 matches of 16, 2 taps/s per player (matches end at 20 points and are restarted)
#     lobby-ticks   Disks 20 matches of 16 alone, then while 5,000 lobby subscribers get 2
#                   changes/s on the same server: what a big publication does to the ticks
# Environment: DURATION (seconds measured, default 20; Disks matches stop at 60 s of play, so
#   keep DURATION + 3 s of warmup under about 55 for a window without restarts), PORT (default
#   17356), LOBBY_INTERVAL (the server's --lobby-interval, default 0.05), BENCH_FLAGS (extra
#   flags for every bench, e.g. "--json"), SERVER_FLAGS (extra flags for the server), BIN (a
#   matchhost binary to use instead of building this checkout's release binary).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
DURATION=${DURATION:-20}
PORT=${PORT:-17356}
LOBBY_INTERVAL=${LOBBY_INTERVAL:-0.05}
BENCH_FLAGS=${BENCH_FLAGS:-}
SERVER_FLAGS=${SERVER_FLAGS:-}
if [ -z "${BIN:-}" ]; then
    swift build -c release --product matchhost >/dev/null
    BIN=.build/release/matchhost
fi
SERVER_PID=
DATA=$(mktemp -d)
trap 'rm -rf "$DATA"' EXIT

# The server keeps its default limits (message rate, backlog, matches per player): the
# benches stay within them, so they are part of what is measured. The Cat Race port gets 0.
start_server() {
    taskset -c 0 "$BIN" serve --host 127.0.0.1 --no-admin --no-web --data "$DATA" --catrace-port 0 --port "$PORT" --max-new-players-per-minute 1000000 --max-new-matches-per-minute 1000000 --max-connections-per-address 100000 \
        --lobby-interval "$LOBBY_INTERVAL" --log-level warning $SERVER_FLAGS >/dev/null 2>"$DATA/server.log" &
    SERVER_PID=$!
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "server did not start" >&2
    exit 1
}
# Its warnings (sessions still open at shutdown, say) are counted, not printed one by one.
stop_server() {
    kill "$SERVER_PID"
    wait "$SERVER_PID" || true
    local lines
    lines=$(wc -l <"$DATA/server.log")
    if [ "$lines" -gt 0 ]; then
        echo "-- server log: $lines lines, the last:"
        tail -n 2 "$DATA/server.log" | cut -c1-300
    fi
}
lobby() {  # subscribers changes-per-second
    start_server
    echo "== bench lobby --subscribers $1 --changes-per-second $2 --seconds $DURATION (server --lobby-interval $LOBBY_INTERVAL)"
    load
    bench lobby --subscribers "$1" --changes-per-second "$2" --seconds "$DURATION" --lobby-interval "$LOBBY_INTERVAL" ||
        echo "bench lobby failed"
    stop_server
}
disks() {  # matches players [flags...]
    local k=$1 p=$2
    shift 2
    start_server
    echo "== bench disks --matches $k --players $p --seconds $DURATION $*"
    load
    bench disks --matches "$k" --players "$p" --seconds "$DURATION" "$@" || echo "bench disks failed"
    stop_server
}
# The lobby load starts first and runs past the Disks window; Disks starts once every
# subscriber is subscribed.
disks_with_lobby() {  # subscribers changes-per-second
    start_server
    echo "== bench disks --matches 20 --players 16 --seconds $DURATION while bench lobby --subscribers $1 --changes-per-second $2 runs"
    load
    bench lobby --subscribers "$1" --changes-per-second "$2" --seconds "$((DURATION + 20))" --lobby-interval "$LOBBY_INTERVAL" \
        >"$DATA/lobby.out" 2>&1 &
    disks_beside_load "$DATA/lobby.out" $! 60 20 lobby
    stop_server
}

scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(lobby disks)
for scenario in "${scenarios[@]}"; do
    case "$scenario" in
        lobby) lobby 10000 20 ;;
        lobby-small) lobby 1000 20 ;;
        lobby-rates) for r in 2 5; do lobby 10000 "$r"; done ;;
        lobby-subs) for n in 2000 5000; do lobby "$n" 20; done ;;
        disks) disks 500 16 ;;
        disks-small) disks 50 16 ;;
        disks-sweep) for k in 100 125 150 200; do disks "$k" 16; done ;;
        disks-taps) disks 50 16 --tap-rate 2 ;;
        lobby-ticks) disks 20 16; disks_with_lobby 5000 2 ;;
        *) echo "unknown scenario $scenario" >&2; exit 2 ;;
    esac
done
