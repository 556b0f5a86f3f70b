#!/usr/bin/env bash
# The native-protocol benchmarks of BENCHMARKS.md: server pinned to core 0, load on core 1,
# a fresh server for each scenario so RSS and CPU belong to that scenario alone.
# Usage: scripts/bench-native.sh [scenario...]   (default: relay16 relay2 sweep16 resume)
#   scenarios: relay16 relay2 sweep16 resume, and for the comparison with the Cat Race path
#   at equal load (each load run back to back: Cat Race; native RELIABLE with one ACK per
#   read batch; RELIABLE with ACKs held up to 100 ms; UNRELIABLE):
#   compare16 (50/75/100 x 16 x 5) compare2 (1000 x 2 x 10); and TCP against the web port's
#   WebSocket at equal load, back to back: websocket16 (25 and 50 x 16 x 5) websocket2 (1000 x 2 x 10);
#   and plaintext against TLS (a P-256 certificate made by openssl) at equal load, back to
#   back: tls16 (25 and 50 x 16 x 5) tls2 (1000 x 2 x 10); and what a connection costs to open,
#   plaintext against TLS, back to back: handshakes (5,000 native connections, HELLO and WELCOME)
# Environment: DURATION (seconds measured, default 20), PORT (default 17355),
#   NATIVE_FLAGS (extra flags for every `bench native`, e.g. "--ack-delay 0.1").
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-20}
PORT=${PORT:-17355}
NATIVE_FLAGS=${NATIVE_FLAGS:-}
swift build -c release --product matchhost >/dev/null
BIN=.build/release/matchhost
SERVER_PID=
DATA=$(mktemp -d)
trap 'rm -rf "$DATA"' EXIT

# Bench raises the per-connection message limit (and, for Cat Race, the tap limit) above the
# load it offers; the other protocol's listener gets port 0, so only $PORT is fixed.
start_server() {
    taskset -c 0 "$BIN" serve --host 127.0.0.1 --no-admin --data "$DATA" --max-message-rate 10000 --max-new-players-per-minute 1000000 --max-new-matches-per-minute 1000000 --max-connections-per-address 100000 --log-level warning "$@" >/dev/null &
    SERVER_PID=$!
    for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "server did not start" >&2
    exit 1
}
start_native_server() { start_server --no-web --catrace-port 0 --port "$PORT"; }
start_web_server() { start_server --catrace-port 0 --port 0 --web-port "$PORT"; }
start_catrace_server() { start_server --no-web --catrace-port "$PORT" --port 0 --max-tap-rate 1000; }
stop_server() { kill "$SERVER_PID"; wait "$SERVER_PID" || true; }
bench() { taskset -c 1 "$BIN" bench "$@" --port "$PORT" --server-pid "$SERVER_PID"; }
load() { echo "-- $(uptime)"; }
native() {  # matches players rate [flags...]
    local k=$1 p=$2 r=$3
    shift 3
    start_native_server
    # shellcheck disable=SC2086
    echo "== bench native --matches $k --players $p --rate $r $* $NATIVE_FLAGS"
    load
    # shellcheck disable=SC2086
    bench native --matches "$k" --players "$p" --rate "$r" --duration "$DURATION" "$@" $NATIVE_FLAGS
    stop_server
}
web() {  # matches players rate [flags...]: bench native over the web port's WebSocket
    local k=$1 p=$2 r=$3
    shift 3
    start_web_server
    # shellcheck disable=SC2086
    echo "== bench native --websocket --matches $k --players $p --rate $r $* $NATIVE_FLAGS"
    load
    # shellcheck disable=SC2086
    bench native --websocket --matches "$k" --players "$p" --rate "$r" --duration "$DURATION" "$@" $NATIVE_FLAGS
    stop_server
}
catrace() {  # races racers rate
    start_catrace_server
    echo "== bench catrace --races $1 --racers $2 --rate $3"
    load
    bench catrace --races "$1" --racers "$2" --rate "$3" --duration "$DURATION"
    stop_server
}
compare() {  # k p r: Cat Race, then native RELIABLE (ACK held up to 200 ms as the client library does, then ACK per read), then UNRELIABLE
    catrace "$1" "$2" "$3"
    native "$1" "$2" "$3"
    native "$1" "$2" "$3" --ack-delay 0
    native "$1" "$2" "$3" --unreliable
}
start_tls_server() {  # with a P-256 certificate for 127.0.0.1, made once
    [ -f "$DATA/tls.crt" ] || openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1" -keyout "$DATA/tls.key" -out "$DATA/tls.crt" 2>/dev/null
    start_server --no-web --catrace-port 0 --port "$PORT" --tls-certificate "$DATA/tls.crt" --tls-key "$DATA/tls.key"
}
tls() {  # matches players rate [flags...]: bench native inside TLS
    local k=$1 p=$2 r=$3
    shift 3
    start_tls_server
    # shellcheck disable=SC2086
    echo "== bench native --tls-ca --matches $k --players $p --rate $r $* $NATIVE_FLAGS"
    load
    # shellcheck disable=SC2086
    bench native --tls-ca "$DATA/tls.crt" --matches "$k" --players "$p" --rate "$r" --duration "$DURATION" "$@" $NATIVE_FLAGS
    stop_server
}
handshakes() {  # count: native connections opened (HELLO, WELCOME), plaintext then through a TLS handshake
    start_native_server
    echo "== bench connections --native --count $1"
    load
    bench connections --native --count "$1"
    stop_server
    start_tls_server
    echo "== bench connections --native --tls-ca --count $1"
    load
    bench connections --native --tls-ca "$DATA/tls.crt" --count "$1"
    stop_server
}
resume() {
    start_native_server
    echo "== bench resume --pairs 100 --rounds 10"
    load
    bench resume --pairs 100 --rounds 10
    stop_server
}

scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(relay16 relay2 sweep16 resume)
for scenario in "${scenarios[@]}"; do
    case "$scenario" in
        relay16) native 100 16 5 ;;
        relay2) native 1000 2 10 ;;
        sweep16) for k in 25 50 75; do native "$k" 16 5; done ;;
        resume) resume ;;
        compare16) for k in 50 75 100; do compare "$k" 16 5; done ;;
        compare2) compare 1000 2 10 ;;
        compare50) compare 50 16 5 ;;
        websocket16) for k in 25 50; do native "$k" 16 5; web "$k" 16 5; done ;;
        websocket2) native 1000 2 10; web 1000 2 10 ;;
        tls16) for k in 25 50; do native "$k" 16 5; tls "$k" 16 5; done ;;
        tls2) native 1000 2 10; tls 1000 2 10 ;;
        handshakes) handshakes 5000 ;;
        *) echo "unknown scenario $scenario" >&2; exit 2 ;;
    esac
done
