# Shared by the bench/*.sh scripts (sourced).

# bench_start_broker TAG KDIR OUT [EXTRA_BROKER_CONFIG]
# Starts a one-broker KRaft cluster in KDIR through scripts/kafka.sh, owned by
# this shell (stopped if it dies), and leaves kafka.sh's output (BOOTSTRAP=,
# KAFKA_PID=) in OUT. Up to 3 attempts: `kafka.sh start` fails now and then
# for reasons unrelated to the benchmark (e.g. a random cluster id beginning
# with '-', ~1 in 64).
bench_start_broker() {
  local tag="$1" kdir="$2" out="$3" extra="${4:-}" attempt
  for attempt in 1 2 3; do
    if THAW_KAFKA_OWNER_PID=$$ THAW_KAFKA_EXTRA_CONFIG="$extra" "$root/scripts/kafka.sh" start "$kdir" >"$out"; then
      return 0
    fi
    [[ -f "$kdir/.thaw-kafka" ]] && "$root/scripts/kafka.sh" stop "$kdir"
    ((attempt < 3)) || return 1
    echo "[$tag] broker start failed; retrying" >&2
  done
}

# 1 when other work (a test run, a compiler, a build) is on the machine, else 0.
busy_sample() { pgrep -f 'pytest|cc1plus|ninja' >/dev/null && echo 1 || echo 0; }

# CPU clock ticks (user + system) process PID has used so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
