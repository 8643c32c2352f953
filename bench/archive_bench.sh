#!/usr/bin/env bash
# Archive benchmark (issue 10): `thaw archive` against Apache Iceberg's Kafka
# Connect sink (org.apache.iceberg:iceberg-kafka-connect 1.12.0 in a standalone
# Connect worker of Kafka 4.1.2, scripts/deps/install-connect.sh), archiving the
# same topic of the same local single-node broker, in the same run:
#   * throughput: ARCHIVE_BENCH_RECORDS records x 1 KiB JSON values in 16
#     partitions; MB/s (key + value bytes / wall time from process start until
#     the table holds every record), peak RSS and CPU seconds of each process;
#     ratio thaw / Connect (target >= 3x); Thaw's peak RSS (target <= 1 GiB);
#   * freshness: a producer at ARCHIVE_BENCH_RATE records/s for
#     ARCHIVE_BENCH_SECONDS s while `thaw archive --follow` (resp. the sink)
#     runs; produce -> first visible through pyiceberg (polled every 200 ms)
#     p50/p99 (target p99 <= 10 s at a 5 s commit interval).
# Both write a new table through a SQL catalog on SQLite (Thaw: sqlite://,
# pyiceberg's SqlCatalog; the sink: Iceberg's JdbcCatalog) into a local
# warehouse, commit interval 5 s (thaw --commit-interval 5s, the sink's
# iceberg.control.commit.interval-ms=5000). Fairness and details:
# bench/archive_bench.py's docstring.
#
#   bench/archive_bench.sh            (also run by scripts/bench.sh)
#
# Every measurement is also kept as a JSON line (RESULT ...) in
# bench/.work/archive_bench.results.
#
# Environment:
#   ARCHIVE_BENCH_RECORDS   records in the topic (default 2000000; e.g. 200000
#                           for a quick run)
#   ARCHIVE_BENCH_RUNS      throughput runs, interleaved thaw, connect, ...;
#                           medians are reported (default 1)
#   ARCHIVE_BENCH_TASKS     the sink's tasks.max (default: nproc)
#   ARCHIVE_BENCH_RATE      freshness producer, records/s (default 1000)
#   ARCHIVE_BENCH_SECONDS   freshness producing time (default 60)
#   ARCHIVE_BENCH_TOOLS     thaw,connect (default both)
#   ARCHIVE_BENCH_PHASES    throughput,freshness (default both)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
py="$root/.deps/venv/bin/python"
thaw="$root/build/bin/thaw"

"$root/scripts/deps/install-connect.sh"
ninja -C "$root/build" -j2 thaw >/dev/null
kdir="$root/bench/.work/kafka-archive-$$"
work="$root/bench/.work/archive-$$"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/thaw-archive-bench.XXXXXX")"
cleanup() {
  if [[ -f "$kdir/.thaw-kafka" ]]; then "$root/scripts/kafka.sh" stop "$kdir" >/dev/null || true; fi
  rm -rf "$tmp" "$work"
}
trap cleanup EXIT
echo "[archive-bench] starting a broker in $kdir"
load_before="$(cut -d' ' -f1 /proc/loadavg)"
bench_start_broker archive-bench "$kdir" "$tmp/start.out" "log.segment.delete.delay.ms=1000" || exit 1
bootstrap="$(sed -n 's/^BOOTSTRAP=//p' "$tmp/start.out")"

"$py" "$root/bench/archive_bench.py" --thaw "$thaw" --bootstrap "$bootstrap" --work "$work" \
  --records "${ARCHIVE_BENCH_RECORDS:-2000000}" --runs "${ARCHIVE_BENCH_RUNS:-1}" \
  --connect-tasks "${ARCHIVE_BENCH_TASKS:-$(nproc)}" --rate "${ARCHIVE_BENCH_RATE:-1000}" \
  --seconds "${ARCHIVE_BENCH_SECONDS:-60}" --tools "${ARCHIVE_BENCH_TOOLS:-thaw,connect}" \
  --phases "${ARCHIVE_BENCH_PHASES:-throughput,freshness}" | tee "$root/bench/.work/archive_bench.results" \
  | grep -v '^RESULT '
echo "  (every measurement as JSON: bench/.work/archive_bench.results)"
echo "  load average ${load_before} before, $(cut -d' ' -f1 /proc/loadavg) after (the machine is not isolated)"
