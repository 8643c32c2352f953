#!/usr/bin/env bash
# Replay of one table's records in two layouts into a fresh local single-node
# Kafka broker: bench.records (partitioned by kafka_partition: every row group
# holds one Kafka partition) vs bench.unpart (unpartitioned: every row group
# holds all 16). Each row group is decoded once however many partitions it
# holds, so the unpartitioned table should replay at >= 0.9x the rate.
#
#   bench/partition_bench.sh         (also run by scripts/bench.sh)
#
# Both replays use thaw's defaults into a new 16-partition topic
# (retention.ms=-1) per phase; each topic's record count is checked, then it
# is deleted and the broker's files are gone before the next phase. Phases
# are interleaved (partitioned, unpartitioned, ...); medians by seconds are
# reported, with each replay's CPU seconds (user + system, /usr/bin/time)
# per GB of key+value+header bytes.
#
# Environment: PARTITION_BENCH_RUNS (default 3); THAW_BIN (default
# build/bin/thaw, e.g. another worktree's build for a before/after figure).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="$root/.deps/venv/bin/python"
wh="$root/bench/.work/wh"
thaw="${THAW_BIN:-$root/build/bin/thaw}"  # another build's binary, to compare
runs="${PARTITION_BENCH_RUNS:-3}"
n=2000000

[[ -n "${THAW_BIN:-}" ]] || ninja -C "$root/build" -j2 thaw >/dev/null
echo "[partition-bench] preparing tables (cached in bench/.work)"
uri="$("$py" "$root/bench/make_bench_tables.py" "$wh" | tail -1)"

kdir="$root/bench/.work/kafka-partition-$$"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/thaw-partition-bench.XXXXXX")"
cleanup() {
  if [[ -f "$kdir/.thaw-kafka" ]]; then "$root/scripts/kafka.sh" stop "$kdir" || true; fi
  rm -rf "$tmp" "$kdir"
}
trap cleanup EXIT
echo "[partition-bench] starting a broker in $kdir"
for attempt in 1 2 3; do
  if THAW_KAFKA_OWNER_PID=$$ THAW_KAFKA_EXTRA_CONFIG="log.segment.delete.delay.ms=1000" \
       "$root/scripts/kafka.sh" start "$kdir" >"$tmp/start.out"; then
    break
  fi
  [[ -f "$kdir/.thaw-kafka" ]] && "$root/scripts/kafka.sh" stop "$kdir"
  ((attempt < 3)) || exit 1
  echo "[partition-bench] broker start failed; retrying" >&2
done
bootstrap="$(sed -n 's/^BOOTSTRAP=//p' "$tmp/start.out")"

admin() {  # create|count|delete TOPIC
  "$py" - "$bootstrap" "$@" <<'PY'
import sys
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
boot, op, topic = sys.argv[1:4]
if op == "create":
    a = AdminClient({"bootstrap.servers": boot})
    for f in a.create_topics([NewTopic(topic, 16, 1, config={"retention.ms": "-1"})]).values():
        f.result(30)
    c = Consumer({"bootstrap.servers": boot, "group.id": "partition-bench"})
    for _ in range(100):  # wait until every partition has a leader
        md = c.list_topics(topic, timeout=10).topics[topic]
        if md.error is None and len(md.partitions) == 16 and all(p.leader >= 0 for p in md.partitions.values()):
            break
    c.close()
elif op == "count":
    c = Consumer({"bootstrap.servers": boot, "group.id": "partition-bench"})
    print(sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(16)))
    c.close()
elif op == "delete":
    a = AdminClient({"bootstrap.servers": boot})
    for f in a.delete_topics([topic]).values():
        f.result(30)
PY
}

replay() {  # TABLE TOPIC -> one JSON line
  admin create "$2"
  /usr/bin/time -v -o "$tmp/$2.time" "$thaw" replay --catalog "$uri" --table "$1" --brokers "$bootstrap" \
    --topic "$2" --quiet --json >"$tmp/$2.out" 2>"$tmp/$2.err" || { cat "$tmp/$2.err" >&2; exit 1; }
  local got
  got="$(admin count "$2")"
  [[ "$got" == "$n" ]] || { echo "[partition-bench] FAILED: topic $2 holds $got records, expected $n" >&2; exit 1; }
  admin delete "$2"
  local i
  for i in $(seq 1 600); do
    compgen -G "$kdir/data/$2-*" >/dev/null || break
    sleep 0.1
  done
  sync
  "$py" - "$tmp/$2.out" "$tmp/$2.time" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1]))
t = open(sys.argv[2]).read()
def field(name):
    return float(re.search(re.escape(name) + r": ([0-9.]+)", t).group(1))
print(json.dumps({"records": j["records"], "bytes": j["bytes"], "seconds": j["seconds"],
                  "cpu": field("User time (seconds)") + field("System time (seconds)"),
                  "rss": field("Maximum resident set size (kbytes)") / 1024}))
PY
}

results=()
load_before="$(cut -d' ' -f1 /proc/loadavg)"
for i in $(seq 1 "$runs"); do
  echo "[partition-bench] run $i/$runs"
  results+=("$(replay bench.records "part-$i")")
  results+=("$(replay bench.unpart "unpart-$i")")
done
load_after="$(cut -d' ' -f1 /proc/loadavg)"
"$py" - "$load_before" "$load_after" "${results[@]}" <<'PY'
import json, sys
load_before, load_after = sys.argv[1:3]
rows = [json.loads(a) for a in sys.argv[3:]]
def median(rs):
    return sorted(rs, key=lambda r: r["seconds"])[len(rs) // 2]
p, u = median(rows[0::2]), median(rows[1::2])
print(f"replay of {p['records']:,} records (16 partitions) into a local single-node broker, thaw defaults")
for name, r in (("partitioned by kafka_partition", p), ("unpartitioned (16 in each row group)", u)):
    print(f"  {name:<38} {r['bytes'] / r['seconds'] / 1e6:8.1f} MB/s  {r['seconds']:6.1f} s  "
          f"{r['cpu'] / (r['bytes'] / 1e9):6.2f} CPU s/GB  peak RSS {r['rss']:.0f} MiB")
print(f"  ratio unpartitioned/partitioned {p['seconds'] / u['seconds']:.2f}x  (target >= 0.9x)")
print(f"(medians of {len(rows) // 2} interleaved runs; all runs: {[round(r['seconds'], 1) for r in rows[0::2]]} s vs "
      f"{[round(r['seconds'], 1) for r in rows[1::2]]} s; load average {load_before} before, {load_after} after)")
PY
