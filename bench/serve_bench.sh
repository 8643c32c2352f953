#!/usr/bin/env bash
# Serve benchmark (issue 8): the same librdkafka consumer (bench/consume_bench.cc)
# reads the same records, 2,000,000 x 1 KiB in 16 partitions (bench.records of
# bench/make_bench_tables.py), to the end
#   (a) from `thaw serve` serving the Iceberg table: cold (a new thaw serve
#       process, its batch cache empty) and warm (the same process, read again);
#   (b) from a real single-node Kafka broker (scripts/kafka.sh, the Kafka jars of
#       .deps/kafka) holding the same records: `thaw replay --link-headers=false`
#       of the table into a 16-partition topic (retention.ms=-1, broker defaults
#       otherwise: no compression, so the broker serves what it stored).
# and reports, for each: MB/s (medians of SERVE_BENCH_RUNS runs, interleaved),
# the server's CPU seconds per GB read (utime + stime of the server process from
# /proc/PID/stat before and after each read), the time to the first record
# after a seek into the middle of a partition (a new consumer each time,
# median of SERVE_BENCH_SEEKS; for thaw serve also on the same records as `thaw archive`
# writes them, archived from the broker), and 50 consumers reading the same range at once (aggregate
# MB/s, errors, the server's peak RSS = VmHWM of /proc/PID/status).
#
#   bench/serve_bench.sh                 (also run by scripts/bench.sh)
#
# Environment:
#   SERVE_BENCH_RECORDS    records in the table (default 2000000: bench.records in
#                          bench/.work/wh, shared with scripts/bench.sh); another
#                          value writes a table of that size into
#                          bench/.work/wh-serve-N, for a quick run (e.g. 160000)
#   SERVE_BENCH_RUNS       runs per measurement (default 3)
#   SERVE_BENCH_CONSUMERS  concurrent consumers (default 50)
#   SERVE_BENCH_SEEKS      seeks per server, each by a new consumer on the next
#                          partition (default 15: a median of 5 swung by 2x)
#   SERVE_BENCH_FRACTION   share of each partition every concurrent consumer reads
#                          (default 0.04: 50 x 80 MB = 4 GB in all for the full table)
#   SERVE_BENCH_CACHE      thaw serve --cache-size (default 3GiB: room for the whole
#                          2.1 GB table, so that "warm" reads are served from the
#                          cache; with a cache smaller than the table, a read of
#                          every partition to the end evicts what it will need
#                          next and the warm read decodes again)
#
# Fairness, exactly:
#   * Same consumer binary and settings for both servers: librdkafka (Debian's
#     2.0.2, as linked into Thaw), assign() of all 16 partitions at their log
#     start, fetch.message.max.bytes=1 MiB, check.crcs=false, librdkafka's
#     defaults otherwise; it stops when every partition reported EOF at the high
#     watermark it queried first. Bytes = key + value + header keys + values.
#   * The broker runs alone (started before, stopped after its phase); so does
#     thaw serve. The OS page cache is not dropped (the machine is shared): both
#     read files that were just written or read, so "cold" means Thaw's own
#     cache is empty, not the disk.
#   * CPU: the server process only (the JVM of the broker, thaw serve), per GB of
#     the bytes the consumer counted. The broker's includes its background
#     threads (log cleaner, controller) during the read.
#   * The machine is not isolated: the 1-minute load average before and after is
#     printed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
py="$root/.deps/venv/bin/python"
bin="$root/build/bin"
thaw="$bin/thaw"
n="${SERVE_BENCH_RECORDS:-2000000}"
runs="${SERVE_BENCH_RUNS:-3}"
consumers="${SERVE_BENCH_CONSUMERS:-50}"
seek_samples="${SERVE_BENCH_SEEKS:-15}"
fraction="${SERVE_BENCH_FRACTION:-0.04}"
cache="${SERVE_BENCH_CACHE:-3GiB}"
tick="$(getconf CLK_TCK)"

ninja -C "$root/build" -j2 thaw consume_bench >/dev/null
bench="$bin/consume_bench"
echo "[serve-bench] preparing the table (cached in bench/.work)"
if [[ "$n" == 2000000 ]]; then
  wh="$root/bench/.work/wh"
  uri="$("$py" "$root/bench/make_bench_tables.py" "$wh" | tail -1)"
else
  wh="$root/bench/.work/wh-serve-$n"
  uri="$(BENCH_RECORDS="$n" BENCH_SMALL_RECORDS=16 BENCH_FILES=1 "$py" "$root/bench/make_bench_tables.py" "$wh" | tail -1)"
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/thaw-serve-bench.XXXXXX")"
kdir="$root/bench/.work/kafka-serve-$$"
serve_pid=""
cleanup() {
  if [[ -n "$serve_pid" ]] && kill -0 "$serve_pid" 2>/dev/null; then kill "$serve_pid"; wait "$serve_pid" || true; fi
  if [[ -f "$kdir/.thaw-kafka" ]]; then "$root/scripts/kafka.sh" stop "$kdir" >/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
load_before="$(cut -d' ' -f1 /proc/loadavg)"

vmhwm_mib() { awk '/^VmHWM:/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }

# measure SERVER LABEL PID MODE ARGS...: one consume_bench run; appends its JSON
# line, with the server's CPU seconds and peak RSS, to $tmp/results.
measure() {
  local server="$1" label="$2" pid="$3" mode="$4"; shift 4
  local c0 c1 out
  c0="$(cpu_ticks "$pid")"
  out="$("$bench" --brokers "$bootstrap" --topic records "$mode" "$@")" || { echo "[serve-bench] consume_bench failed" >&2; exit 1; }
  c1="$(cpu_ticks "$pid")"
  "$py" -c 'import json,sys; j=json.loads(sys.argv[1]); j.update(server=sys.argv[2], label=sys.argv[3], cpu_s=(int(sys.argv[5])-int(sys.argv[4]))/int(sys.argv[6]), peak_rss_mib=float(sys.argv[7])); print(json.dumps(j))' \
    "$out" "$server" "$label" "$c0" "$c1" "$tick" "$(vmhwm_mib "$pid")" >>"$tmp/results"
}

# ---------------------------------------------------------------------------
# (b) the broker
echo "[serve-bench] starting a broker in $kdir"
bench_start_broker serve-bench "$kdir" "$tmp/start.out" || exit 1
bootstrap="$(sed -n 's/^BOOTSTRAP=//p' "$tmp/start.out")"
kpid="$(sed -n 's/^KAFKA_PID=//p' "$tmp/start.out")"
"$py" - "$bootstrap" <<'PY'
import sys
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic
boot = sys.argv[1]
a = AdminClient({"bootstrap.servers": boot})
for f in a.create_topics([NewTopic("records", 16, 1, config={"retention.ms": "-1"})]).values():
    f.result(30)
c = Consumer({"bootstrap.servers": boot, "group.id": "serve-bench"})
for _ in range(100):
    md = c.list_topics("records", timeout=10).topics["records"]
    if md.error is None and len(md.partitions) == 16 and all(p.leader >= 0 for p in md.partitions.values()):
        break
c.close()
PY
echo "[serve-bench] thaw replay of bench.records into the broker"
"$thaw" replay --catalog "$uri" --table bench.records --brokers "$bootstrap" --topic records --link-headers=false \
  --quiet >/dev/null
sync
for i in $(seq 1 "$runs"); do
  echo "[serve-bench] broker run $i/$runs"
  measure kafka read "$kpid" read
done
measure kafka seek "$kpid" seek --samples "$seek_samples"
echo "[serve-bench] broker: $consumers concurrent consumers"
measure kafka concurrent "$kpid" concurrent --consumers "$consumers" --fraction "$fraction"
# The same records as `thaw archive` writes them (1 MiB pages, offsets in
# row order): the table of issue 19's "seek <= 10 ms on archive tables".
echo "[serve-bench] thaw archive of the broker's topic into bench.archived"
arch_wh="$tmp/wh-archived"
mkdir -p "$arch_wh"
arch_uri="sqlite:///$arch_wh/catalog.db"
"$thaw" archive --catalog "$arch_uri" --warehouse "file://$arch_wh" --brokers "$bootstrap" --topic records \
  --table bench.archived --create --quiet >/dev/null
"$root/scripts/kafka.sh" stop "$kdir" >/dev/null

# ---------------------------------------------------------------------------
# (a) thaw serve
serve_state="$tmp/serve-state"
port=""
start_serve() { # [CATALOG_URI TABLE] (default: bench.records)
  local serve_uri="${1:-$uri}" serve_table="${2:-bench.records}"
  port="$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  bootstrap="127.0.0.1:$port"
  rm -rf "$serve_state"
  mkdir -p "$serve_state"
  "$thaw" serve --catalog "$serve_uri" --topic "records=$serve_table" --listen "$bootstrap" --state "$serve_state" \
    ${cache:+--cache-size "$cache"} 2>>"$tmp/serve.err" &
  serve_pid=$!
  for _ in $(seq 1 600); do
    if ! kill -0 "$serve_pid" 2>/dev/null; then
      echo "[serve-bench] thaw serve exited: $(tail -5 "$tmp/serve.err")" >&2; return 1
    fi
    if "$py" -c 'import socket,sys; socket.create_connection(("127.0.0.1",int(sys.argv[1])),1)' "$port" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "[serve-bench] thaw serve does not accept connections on $bootstrap" >&2
  return 1
}
stop_serve() {
  kill -TERM "$serve_pid"
  local rc=0
  wait "$serve_pid" || rc=$?
  serve_pid=""
  [[ $rc == 143 ]] || { echo "[serve-bench] thaw serve exited $rc after SIGTERM (a clean stop is 128 + 15): $(tail -5 "$tmp/serve.err")" >&2; exit 1; }
}

serve_ok=1
# (The help read whole first: with pipefail, thaw's SIGPIPE after `grep -q`
# stopped reading at its match would read as "no serve".)
serve_help="$("$thaw" serve --help 2>&1 || true)"
if ! grep -q -- '--listen' <<<"$serve_help"; then
  serve_ok=0
  echo "[serve-bench] this thaw has no 'serve' command (\`thaw serve --help\` does not show --listen):" \
    "the thaw serve half is not measured" >&2
fi
if ((serve_ok)); then
  for i in $(seq 1 "$runs"); do
    echo "[serve-bench] thaw serve run $i/$runs: cold, then warm"
    start_serve
    measure thaw cold "$serve_pid" read
    measure thaw warm "$serve_pid" read
    stop_serve
  done
  echo "[serve-bench] thaw serve: seek (new server)"
  start_serve
  measure thaw seek "$serve_pid" seek --samples "$seek_samples"
  stop_serve
  echo "[serve-bench] thaw serve: seek on the table thaw archive wrote (new server)"
  start_serve "$arch_uri" bench.archived
  measure thaw seek_archived "$serve_pid" seek --samples "$seek_samples"
  stop_serve
  echo "[serve-bench] thaw serve: $consumers concurrent consumers (new server)"
  start_serve
  measure thaw concurrent "$serve_pid" concurrent --consumers "$consumers" --fraction "$fraction"
  stop_serve
fi

load_after="$(cut -d' ' -f1 /proc/loadavg)"
"$py" - "$tmp/results" "$n" "$runs" "$load_before" "$load_after" "$cache" <<'PY'
import json, sys
path, n, runs, lb, la, cache = sys.argv[1:7]
rows = [json.loads(l) for l in open(path)]
def pick(server, label):
    return [r for r in rows if r["server"] == server and r["label"] == label]
def median(rs):
    return sorted(rs, key=lambda r: r["seconds"])[len(rs) // 2] if rs else None
def cpu_gb(r):
    return r["cpu_s"] / (r["bytes"] / 1e9)
k = median(pick("kafka", "read"))
cold, warm = median(pick("thaw", "cold")), median(pick("thaw", "warm"))
print(f"serve: {int(n):,} records x 1 KiB, 16 partitions; librdkafka consumer (bench/consume_bench.cc) reading to the end")
print(f"  {'':32}{'MB/s':>8} {'records/s':>12} {'seconds':>8} {'server CPU s':>13} {'CPU s/GB':>9}")
def line(label, r):
    print(f"  {label:32}{r['mb_s']:8.1f} {r['records'] / r['seconds']:12,.0f} {r['seconds']:8.2f} {r['cpu_s']:13.2f} "
          f"{cpu_gb(r):9.2f}   errors {r['errors']}, {r['bytes'] / r['records']:.0f} B/record")
line("Kafka broker (b)", k)
if cold:
    line("thaw serve, cold cache (a)", cold)
    line("thaw serve, warm cache (a)", warm)
    print(f"  warm / broker: {warm['mb_s'] / k['mb_s']:.2f}x MB/s (target >= 1.0x); cold / broker: "
          f"{cold['mb_s'] / k['mb_s']:.2f}x (target >= 0.8x)")
    print(f"  CPU per GB, thaw / broker: warm {cpu_gb(warm) / cpu_gb(k):.2f}x (target <= 2x), "
          f"cold {cpu_gb(cold) / cpu_gb(k):.2f}x (target <= 3x)")
else:
    print("  thaw serve: not measured (no working `thaw serve` in this build)")
for server, what, label, target in (
        ("kafka", "seek", "Kafka broker", ""),
        ("thaw", "seek", "thaw serve (new process)", "; target <= 50 ms: pyarrow's files, no page index"),
        ("thaw", "seek_archived", "thaw serve (new process) on the table thaw archive wrote",
         "; target <= 10 ms")):
    s = pick(server, what)
    if s:
        print(f"  first record after a seek into the middle, {label}: median {s[0]['median_ms']:.1f} ms "
              f"(samples {s[0]['first_record_ms']} ms{target})")
for server, label in (("kafka", "Kafka broker"), ("thaw", "thaw serve (new process)")):
    c = pick(server, "concurrent")
    if c:
        c = c[0]
        print(f"  {c['consumers']} concurrent consumers, {label}: {c['mb_s']:.1f} MB/s aggregate, {c['bytes'] / 1e9:.2f} GB "
              f"in {c['seconds']:.1f} s, errors {c['errors']}, server peak RSS {c['peak_rss_mib']:.0f} MiB, "
              f"server CPU {cpu_gb(c):.2f} s/GB"
              + (f" (target <= 512 MiB + the cache{' ' + cache if cache else ''})" if server == "thaw" else ""))
print(f"  (medians of {runs} runs by seconds; all runs: broker {[r['seconds'] for r in pick('kafka', 'read')]} s"
      + (f", cold {[r['seconds'] for r in pick('thaw', 'cold')]} s, warm {[r['seconds'] for r in pick('thaw', 'warm')]} s"
         if cold else "") + ")")
print(f"  load average before {lb}, after {la}; broker peak RSS is the JVM's over its life "
      f"({max(r['peak_rss_mib'] for r in rows if r['server'] == 'kafka'):.0f} MiB)")
PY
