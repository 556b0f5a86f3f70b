# Shared by the bench scripts (sourced, not run).

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
