# Shared by the bench scripts (sourced, not run). The sourcing script sets BIN, PORT,
# SERVER_PID (its running server), BENCH_FLAGS and DURATION.

# bench ARGS...: `matchhost bench ARGS` against the running server, on core 1 (the server is
# on core 0).
bench() {
    # shellcheck disable=SC2086
    taskset -c 1 "$BIN" bench "$@" --port "$PORT" --server-pid "$SERVER_PID" $BENCH_FLAGS
}

# load: the machine's load average, printed before each run.
load() { echo "-- $(uptime)"; }

# wait_for_setup FILE PID SECONDS: waits until the bench writing FILE has printed its "setup:"
# line (its players connected and its matches made), the bench (PID) has ended, or SECONDS
# have passed; the load it puts on the server is then steady.
wait_for_setup() {
    local file=$1 pid=$2 tenths=$(($3 * 10))
    for _ in $(seq "$tenths"); do
        grep -qs '^setup:' "$file" && return 0
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
}

# disks_beside_load FILE PID SECONDS MATCHES NAME: once the bench NAME (PID, writing FILE) is
# set up (waiting at most SECONDS), Disks with MATCHES matches of 16 players for DURATION beside
# it; then that bench's own report.
disks_beside_load() {
    wait_for_setup "$1" "$2" "$3"
    sleep 3
    bench disks --matches "$4" --players 16 --seconds "$DURATION" || echo "bench disks failed"
    wait "$2" || echo "bench $5 failed"
    echo "-- the $5 load meanwhile:"
    cat "$1"
}
