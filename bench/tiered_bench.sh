#!/usr/bin/env bash
# Tiered proxy benchmark (issue 21): `thaw serve --upstream` in front of a real
# single-node Kafka broker (scripts/kafka.sh, the jars of .deps/kafka) against
# the same broker reached directly, in the same run, with the same clients:
#   1. passthrough: ProducerPerformance (acks=1) and ConsumerPerformance (from
#      the beginning) of a non-tiered topic, direct vs through Thaw: MB/s and
#      the ratio (target >= 0.95x); Thaw's CPU s per GB vs the broker JVM's
#      for the same traffic (target <= 0.5x);
#   2. added latency: a confluent-kafka producer at TIERED_BENCH_LAT_RATE
#      records/s, a consumer taking produce -> consume latency from the
#      timestamp in each value: p50/p99 direct and through Thaw, added p99
#      (target <= 1 ms);
#   3. history: a topic whose first 90 % lives only in Iceberg (`thaw archive`,
#      then DeleteRecords), read from the beginning through Thaw with
#      ConsumerPerformance vs the same read direct before the delete (target
#      >= 0.8x), the record count checked;
#   4. memory: Thaw's RSS idle and with TIERED_BENCH_CONNECTIONS idle client
#      connections (each paired with an upstream connection by an ApiVersions
#      exchange), bytes per connection, peak RSS.
# Phases and fairness in detail: bench/tiered_bench.py's docstring.
#
#   bench/tiered_bench.sh             (also run by scripts/bench.sh)
#
# Every measurement is also kept as a JSON line (RESULT ...) in
# bench/.work/tiered_bench.results, Thaw's log in
# bench/.work/tiered_bench.serve.log. About 5 minutes on 2 cores with the
# defaults (a quick run: TIERED_BENCH_RECORDS=100000 TIERED_BENCH_HIST_RECORDS=100000
# TIERED_BENCH_RUNS=1 TIERED_BENCH_LAT_RUNS=1 TIERED_BENCH_LAT_SECONDS=5).
# Every figure says whether other work (a test run, a compiler) was seen on
# the machine while it was taken ("quiet" / "busy N%").
#
# Environment:
#   TIERED_BENCH_RECORDS       passthrough records per producer run (default 1000000)
#   TIERED_BENCH_RECORD_SIZE   record (value) size, bytes (default 1024)
#   TIERED_BENCH_PARTITIONS    passthrough topics' partitions (default 4)
#   TIERED_BENCH_RUNS          passthrough runs, direct and via Thaw alternating (default 4)
#   TIERED_BENCH_PRODUCER_PROPS  ProducerPerformance --producer-props (default "acks=1")
#   TIERED_BENCH_HIST_RECORDS  records of the tiered topic (default 1000000; 4 partitions)
#   TIERED_BENCH_HIST_RUNS     history reads through Thaw, the first with its cache empty (default 2)
#   TIERED_BENCH_BASELINE_RUNS direct reads of the history before the delete; the median is
#                              the baseline (default 3)
#   TIERED_BENCH_DELETE        share of each partition deleted from the broker (default 0.9)
#   TIERED_BENCH_CONNECTIONS   idle connections for the memory figure (default 200)
#   TIERED_BENCH_LAT_RATE      latency producer, records/s (default 20000)
#   TIERED_BENCH_LAT_SECONDS   latency producing time per run (default 15; the first 2 s dropped)
#   TIERED_BENCH_LAT_SIZE      latency record size (default 1024)
#   TIERED_BENCH_LAT_RUNS      latency runs, direct and via Thaw alternating (default 3)
#   TIERED_BENCH_PHASES        passthrough,latency,history,memory (default all)
#   TIERED_BENCH_SERVE_ARGS    extra `thaw serve` arguments
#   TIERED_BENCH_ARCHIVE_ARGS  extra arguments of the history phase's `thaw archive`
#                              (e.g. "--target-file-size 32MiB")
#   TIERED_BENCH_PROFILE       FILE: `perf record -g` of Thaw during each through-Thaw
#                              run into FILE.produce, FILE.consume, FILE.history1, ...
#                              (diagnosis; perf's own cost skews the figures)
#   TIERED_BENCH_PERF_ARGS     what `perf record` samples (default "-F 999 -g"; e.g.
#                              "-e page-faults -c 200 --call-graph dwarf,16384" for who
#                              touches new memory)
#   TIERED_BENCH_VERIFY        1: check every offset of the history read once more
#                              with confluent-kafka through Thaw (default 1)
#   THAW_BIN                   the thaw binary to run (default: a copy of build/bin/thaw
#                              taken at the start, as others rebuild it at times)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
py="$root/.deps/venv/bin/python"

kdir="$root/bench/.work/kafka-tiered-$$"
work="$root/bench/.work/tiered-$$"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/thaw-tiered-bench.XXXXXX")"
cleanup() {
  if [[ -f "$kdir/.thaw-kafka" ]]; then "$root/scripts/kafka.sh" stop "$kdir" >/dev/null || true; fi
  rm -rf "$tmp" "$work"
}
trap cleanup EXIT
# A copy of the binary: build/bin/thaw may be rebuilt while this runs.
if [[ -n "${THAW_BIN:-}" ]]; then
  thaw="$THAW_BIN"
else
  [[ -x "$root/build/bin/thaw" ]] || ninja -C "$root/build" -j2 thaw >/dev/null
  cp "$root/build/bin/thaw" "$tmp/thaw"
  thaw="$tmp/thaw"
  echo "[tiered-bench] thaw: a copy of build/bin/thaw built $(date -u -r "$root/build/bin/thaw" +%FT%TZ)" \
    "(main $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- src || echo ', src/ modified'))"
fi
# (The help read whole first: `grep -q` stops reading at its match, and with
# pipefail the writer's SIGPIPE would fail the check.)
serve_help="$("$thaw" serve --help 2>&1)"
grep -q -- '--upstream' <<<"$serve_help" || { echo "[tiered-bench] this thaw has no serve --upstream" >&2; exit 1; }

echo "[tiered-bench] starting a broker in $kdir"
load_before="$(cut -d' ' -f1 /proc/loadavg)"
bench_start_broker tiered-bench "$kdir" "$tmp/start.out" || exit 1
bootstrap="$(sed -n 's/^BOOTSTRAP=//p' "$tmp/start.out")"
kpid="$(sed -n 's/^KAFKA_PID=//p' "$tmp/start.out")"

"$py" "$root/bench/tiered_bench.py" --thaw "$thaw" --bootstrap "$bootstrap" --kafka-pid "$kpid" \
  --kafka-dir "$kdir" --work "$work" \
  --pt-records "${TIERED_BENCH_RECORDS:-1000000}" --record-size "${TIERED_BENCH_RECORD_SIZE:-1024}" \
  --pt-partitions "${TIERED_BENCH_PARTITIONS:-4}" --runs "${TIERED_BENCH_RUNS:-4}" \
  --producer-props "${TIERED_BENCH_PRODUCER_PROPS:-acks=1}" \
  --hist-records "${TIERED_BENCH_HIST_RECORDS:-1000000}" --hist-runs "${TIERED_BENCH_HIST_RUNS:-2}" \
  --baseline-runs "${TIERED_BENCH_BASELINE_RUNS:-3}" \
  --delete-fraction "${TIERED_BENCH_DELETE:-0.9}" --connections "${TIERED_BENCH_CONNECTIONS:-200}" \
  --lat-rate "${TIERED_BENCH_LAT_RATE:-20000}" --lat-seconds "${TIERED_BENCH_LAT_SECONDS:-15}" \
  --lat-size "${TIERED_BENCH_LAT_SIZE:-1024}" --lat-runs "${TIERED_BENCH_LAT_RUNS:-3}" \
  --phases "${TIERED_BENCH_PHASES:-passthrough,latency,history,memory}" \
  --serve-args "${TIERED_BENCH_SERVE_ARGS:-}" --verify "${TIERED_BENCH_VERIFY:-1}" \
  --profile "${TIERED_BENCH_PROFILE:-}" \
  | tee "$root/bench/.work/tiered_bench.results" | grep -v '^RESULT '
echo "  (every measurement as JSON: bench/.work/tiered_bench.results)"
echo "  load average ${load_before} before, $(cut -d' ' -f1 /proc/loadavg) after (the machine is not isolated)"
