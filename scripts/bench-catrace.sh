#!/usr/bin/env bash
# The Cat Race benchmarks of BENCHMARKS.md: server pinned to core 0, load on core 1,
# a fresh server for each scenario so RSS and CPU belong to that scenario alone.
# Usage: scripts/bench-catrace.sh [scenario...]   (default: all)
#   scenarios: race16 race2 sweep16 sweep2 idle burst
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-20}
PORT=${PORT:-19955}
swift build -c release --product matchhost >/dev/null
BIN=.build/release/matchhost
SERVER_PID=

start_server() {
    # Bench raises the per-racer tap and per-connection message limits above the load it offers,
    # and the new-player limit: every bench racer is a new player from this machine; the
    # connection limit above what half the open-file limit allows (only this port is used).
    taskset -c 0 "$BIN" serve --host 127.0.0.1 --no-admin --no-web --catrace-port "$PORT" --max-tap-rate 1000 \
        --max-message-rate 10000 --max-new-players-per-minute 1000000 --max-new-matches-per-minute 1000000 --max-connections-per-address 100000 --max-connections 12000 --log-level warning "$@" >/dev/null &
    SERVER_PID=$!
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "server did not start" >&2
    exit 1
}
stop_server() { kill "$SERVER_PID"; wait "$SERVER_PID" || true; }
bench() { taskset -c 1 "$BIN" bench "$@" --port "$PORT" --server-pid "$SERVER_PID"; }
race() {  # races racers rate
    start_server
    echo "== bench catrace --races $1 --racers $2 --rate $3"
    bench catrace --races "$1" --racers "$2" --rate "$3" --duration "$DURATION"
    stop_server
}

scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(race16 race2 sweep16 sweep2 idle burst)
for scenario in "${scenarios[@]}"; do
    case "$scenario" in
        race16) race 100 16 5 ;;
        race2) race 1000 2 10 ;;
        sweep16) for k in 25 50 75; do race "$k" 16 5; done ;;
        sweep2) for k in 2000 3000 4000; do race "$k" 2 10; done ;;
        idle) start_server; echo "== bench connections --count 10000"; bench connections --count 10000; stop_server ;;
        burst) start_server; echo "== bench connections --count 10000 --burst"; bench connections --count 10000 --burst; stop_server ;;
        *) echo "unknown scenario $scenario" >&2; exit 2 ;;
    esac
done
