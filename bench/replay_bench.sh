#!/usr/bin/env bash
# Replay benchmark, two cases: 2,000,000 records x 1 KiB (bench.records) and
# 5,000,000 x 100 B (bench.small) into a fresh local single-node Kafka broker,
# each compared in the same run with
#   (a) kafka-producer-perf-test (org.apache.kafka.tools.ProducerPerformance,
#       from the same Kafka distribution as the broker): same record count and
#       record size, same broker -- the ingest ceiling;
#   (b) thaw replay of bench.records (peak RSS through /usr/bin/time -v);
#   (c) bench/replay_user_script.py: the script a user would otherwise write,
#       a pyiceberg scan feeding a confluent-kafka producer, same table.
#
# The 1 KiB case also replays bench.unpart (the same records, unpartitioned:
# every row group holds all 16 partitions) as a fourth interleaved phase.
#
#   bench/replay_bench.sh            (also run by scripts/bench.sh)
#
# Environment:
#   REPLAY_BENCH_RUNS    repetitions, interleaved a,b,c,a,b,c,...; medians are
#                        reported (default 3)
#   REPLAY_SCRIPT_LIMIT  run (c) on the first N records in scan order only and
#                        compare rates (default: all 2,000,000; (c) takes about
#                        a minute for them on a 2-core machine)
#
# Fairness, exactly:
#   * Every phase writes into its own new topic: 16 partitions, replication 1,
#     retention.ms=-1 (thaw replay refuses a topic whose retention would delete
#     the table's 2023 timestamps), otherwise broker defaults (compression.type=producer, so what the producer sends
#     is stored as is). After a phase its topic's record count is checked
#     against the expected count, then the topic is deleted and the script
#     waits until the broker has removed its files (the broker runs with
#     log.segment.delete.delay.ms=1000 instead of the default 60 s -- 0 would
#     make its delete task spin -- so no deletion lands in the middle of the
#     next phase, and the disk holds one phase's ~2.2 GB at a time), then
#     `sync` runs, so every phase starts with no dirty page cache from the
#     previous one.
#   * Producer settings -- all three: acks=all, enable.idempotence=true,
#     linger.ms=20, batch.size=1000000, no compression, a 256 MiB send buffer,
#     100 MiB maximum request. Thaw's are its built-in defaults
#     (src/thaw/replay/kafka_client.cc: enable.idempotence=true, linger.ms=20,
#     batch.size=1000000, queue.buffering.max.kbytes=262144,
#     message.max.bytes=104857600; librdkafka's acks default is all). The
#     perf-test gets the Java equivalents:
#       --producer-props acks=all enable.idempotence=true linger.ms=20
#         batch.size=1000000 buffer.memory=268435456
#         max.request.size=104857600 compression.type=none
#     The user script sets the same librdkafka properties as Thaw's.
#   * A warm-up perf-test of 200,000 records into a throwaway topic precedes
#     the measurements (broker JIT, idempotent-producer coordinator loaded).
#   * Records and bytes: the perf-test sends 1024-byte values with no key and
#     no headers; its MB/s is records/s x 1024 (record-size bytes). Thaw and
#     the script report key + value + header keys + header values (~1042
#     bytes per record for this table). Thaw, by default, also adds its
#     thaw.source.* link headers (~120 bytes a record on the wire); they are
#     sent but not counted, as a user of `thaw replay` gets them. MB = 10^6 bytes throughout.
#   * CPU: user + system seconds of each producing process (/usr/bin/time -v),
#     per GB of the bytes it reports; the perf-test's includes its JVM start-up
#     and JIT. The broker's CPU is not counted for anyone. In the 1 KiB case
#     all three are bound by the broker's ingest, so cost shows in CPU per GB
#     and in the 100-byte case, where Thaw runs with --link-headers=false
#     because the perf-test's records carry no headers.
#   * Time: each tool's own clock. perf-test: from its first send to its
#     last acknowledgement (JVM start-up excluded). Thaw and the script: from
#     loading the table (planning included) to the end of the final flush
#     (process start-up excluded).
#   * The machine is not isolated: anything else running (builds, other
#     brokers) competes for the same cores; the 1-minute load average before
#     and after the run is printed with the results.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
py="$root/.deps/venv/bin/python"
wh="$root/bench/.work/wh"
thaw="$root/build/bin/thaw"
runs="${REPLAY_BENCH_RUNS:-3}"
limit="${REPLAY_SCRIPT_LIMIT:-}"
size=1024  # the warm-up's record size
perf_props=(acks=all enable.idempotence=true linger.ms=20 batch.size=1000000 buffer.memory=268435456
            max.request.size=104857600 compression.type=none)

ninja -C "$root/build" -j2 thaw >/dev/null
echo "[replay-bench] preparing tables (cached in bench/.work)"
uri="$("$py" "$root/bench/make_bench_tables.py" "$wh" | tail -1)"

kdir="$root/bench/.work/kafka-$$"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/thaw-replay-bench.XXXXXX")"
cleanup() {
  if [[ -f "$kdir/.thaw-kafka" ]]; then "$root/scripts/kafka.sh" stop "$kdir" || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
echo "[replay-bench] starting a broker in $kdir"
load_before="$(cut -d' ' -f1 /proc/loadavg)"
bench_start_broker replay-bench "$kdir" "$tmp/start.out" "log.segment.delete.delay.ms=1000" || exit 1
bootstrap="$(sed -n 's/^BOOTSTRAP=//p' "$tmp/start.out")"

# Topic admin through librdkafka's admin API (seconds faster than a JVM tool
# per call): create TOPIC (16 partitions), count TOPIC (sum of high
# watermarks), delete TOPIC.
admin() {
  "$py" - "$bootstrap" "$@" <<'PY'
import sys
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
boot, op, topic = sys.argv[1:4]
if op == "create":
    a = AdminClient({"bootstrap.servers": boot})  # keep the handle alive while waiting
    for f in a.create_topics([NewTopic(topic, 16, 1, config={"retention.ms": "-1"})]).values():
        f.result(30)
    c = Consumer({"bootstrap.servers": boot, "group.id": "replay-bench"})
    for _ in range(100):  # wait until every partition has a leader
        md = c.list_topics(topic, timeout=10).topics[topic]
        if md.error is None and len(md.partitions) == 16 and all(p.leader >= 0 for p in md.partitions.values()):
            break
    c.close()
elif op == "count":
    c = Consumer({"bootstrap.servers": boot, "group.id": "replay-bench"})
    print(sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(16)))
    c.close()
elif op == "delete":
    a = AdminClient({"bootstrap.servers": boot})
    for f in a.delete_topics([topic]).values():
        f.result(30)
PY
}

finish_phase() { # TOPIC EXPECTED
  local got
  got="$(admin count "$1")"
  [[ "$got" == "$2" ]] || { echo "[replay-bench] FAILED: topic $1 holds $got records, expected $2" >&2; exit 1; }
  echo "$(du -sm "$kdir/data" | cut -f1)" >>"$tmp/disk_mb"
  admin delete "$1"
  local i
  for i in $(seq 1 600); do  # until the broker has removed the topic's files
    compgen -G "$kdir/data/$1-*" >/dev/null || break
    sleep 0.1
  done
  if compgen -G "$kdir/data/$1-*" >/dev/null; then
    echo "[replay-bench] warning: the broker has not removed topic $1's files after 60 s" >&2
  fi
  sync
}

maxrss_mib() { awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$1"; }

echo "[replay-bench] warm-up"
admin create warmup
"$root/scripts/kafka.sh" perf "$kdir" --topic warmup --num-records 200000 --record-size "$size" --throughput -1 \
  --producer-props "${perf_props[@]}" >/dev/null 2>"$tmp/warmup.err" || { cat "$tmp/warmup.err" >&2; exit 1; }
finish_phase warmup 200000

cpu_s() { awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.2f", u + s}' "$1"; }

# thaw_phase CASE TOOL TABLE TOPIC RECORDS THAW_ARGS...: one thaw replay.
thaw_phase() {
  local name="$1" tool="$2" table="$3" topic="$4" n="$5"; shift 5
  echo "[replay-bench] $name: thaw replay of $table"
  admin create "$topic"
  /usr/bin/time -v -o "$tmp/thaw.time" "$thaw" replay --catalog "$uri" --table "$table" \
    --brokers "$bootstrap" --topic "$topic" --quiet --json "$@" >"$tmp/thaw.out" 2>"$tmp/thaw.err" \
    || { cat "$tmp/thaw.err" >&2; exit 1; }
  "$py" -c 'import json,sys; j=json.load(open(sys.argv[3])); print(json.dumps({"case":sys.argv[1],"tool":sys.argv[2],"records":j["records"],"bytes":j["bytes"],"seconds":j["seconds"],"peak_rss_mib":float(sys.argv[4]),"cpu_s":float(sys.argv[5])}))' \
    "$name" "$tool" "$tmp/thaw.out" "$(maxrss_mib "$tmp/thaw.time")" "$(cpu_s "$tmp/thaw.time")" >>"$tmp/results"
  finish_phase "$topic" "$n"
}

# run_case NAME TABLE RECORDS VALUE_SIZE THAW_ARGS...: the three producers
# (and thaw replay of $also_table, when set),
# interleaved, REPLAY_BENCH_RUNS times; appends one JSON line per run to
# $tmp/results (fields: case, tool, records, bytes, seconds, peak_rss_mib, cpu_s).
run_case() {
  local name="$1" table="$2" n="$3" size="$4"; shift 4
  local script_n="${limit:-$n}" i line rps
  for i in $(seq 1 "$runs"); do
    echo "[replay-bench] $name run $i/$runs: perf-test"
    admin create "perf-$name-$i"
    /usr/bin/time -v -o "$tmp/perf.time" "$root/scripts/kafka.sh" perf "$kdir" --topic "perf-$name-$i" \
      --num-records "$n" --record-size "$size" --throughput -1 --producer-props "${perf_props[@]}" \
      >"$tmp/perf.out" 2>"$tmp/perf.err" || { cat "$tmp/perf.err" >&2; exit 1; }
    line="$(grep -E "^$n records sent" "$tmp/perf.out" | tail -1)" || { cat "$tmp/perf.out" "$tmp/perf.err" >&2; exit 1; }
    rps="$(sed -E 's/^[0-9]+ records sent, ([0-9.]+) records\/sec.*/\1/' <<<"$line")"
    "$py" -c 'import json,sys; c,n,s,r,m,cpu=sys.argv[1:]; print(json.dumps({"case":c,"tool":"perf","records":int(n),"bytes":int(n)*int(s),"seconds":int(n)/float(r),"peak_rss_mib":float(m),"cpu_s":float(cpu)}))' \
      "$name" "$n" "$size" "$rps" "$(maxrss_mib "$tmp/perf.time")" "$(cpu_s "$tmp/perf.time")" >>"$tmp/results"
    finish_phase "perf-$name-$i" "$n"

    thaw_phase "$name" thaw "$table" "thaw-$name-$i" "$n" "$@"
    if [[ -n "$also_table" ]]; then thaw_phase "$name" thaw-also "$also_table" "thaw-also-$name-$i" "$n" "$@"; fi

    echo "[replay-bench] $name run $i/$runs: pyiceberg + confluent-kafka script${limit:+ (first $limit records)}"
    admin create "script-$name-$i"
    /usr/bin/time -v -o "$tmp/script.time" "$py" "$root/bench/replay_user_script.py" "$uri" "$table" "$bootstrap" \
      "script-$name-$i" ${limit:+--limit "$limit"} >"$tmp/script.out" 2>"$tmp/script.err" \
      || { cat "$tmp/script.err" >&2; exit 1; }
    "$py" -c 'import json,sys; j=json.loads(open(sys.argv[2]).read().splitlines()[-1]); j.update(case=sys.argv[1], tool="script", cpu_s=float(sys.argv[3])); print(json.dumps(j))' \
      "$name" "$tmp/script.out" "$(cpu_s "$tmp/script.time")" >>"$tmp/results"
    finish_phase "script-$name-$i" "$script_n"
  done
}

# The 1 KiB case also replays bench.unpart: the same records in an
# unpartitioned table (every row group holds all 16 partitions), which must
# replay at >= 0.9x the partitioned table's rate (each row group is decoded
# once, not once per partition).
also_table=bench.unpart run_case 1KiB bench.records 2000000 1024
also_table=
# The 100-byte case compares the producers' cost per record: the perf-test
# sends bare 100-byte values, so Thaw replays without its link headers (they
# would add ~120 bytes to every 100-byte record).
run_case 100B bench.small 5000000 100 --link-headers=false

disk_mb="$(sort -n "$tmp/disk_mb" | tail -1)"
load_after="$(cut -d' ' -f1 /proc/loadavg)"
"$py" - "$disk_mb" "$limit" "$load_before" "$load_after" "$tmp/results" <<'PY'
import json, sys
disk_mb, limit, load_before, load_after, path = sys.argv[1:6]
rows = [json.loads(l) for l in open(path)]
also = [r for r in rows if r["tool"] == "thaw-also"]
rows = [r for r in rows if r["tool"] != "thaw-also"]
def median(rs):
    return sorted(rs, key=lambda r: r["seconds"])[len(rs) // 2]
def rate(r):
    return r["bytes"] / r["seconds"] / 1e6, r["records"] / r["seconds"]
def cpu_per_gb(r):
    return r["cpu_s"] / (r["bytes"] / 1e9)
labels = {"perf": "kafka-producer-perf-test (a)", "thaw": "thaw replay (b)", "script": "pyiceberg + confluent-kafka (c)"}
for case in dict.fromkeys(r["case"] for r in rows):
    rs = [r for r in rows if r["case"] == case]
    med = {t: median([r for r in rs if r["tool"] == t]) for t in labels}
    runs = len(rs) // 3
    n = med["perf"]["records"]
    print(f"replay {case}: {n:,} records into 16 partitions of a local single-node broker "
          f"(acks=all, idempotent, linger.ms=20, batch.size=1000000, no compression)")
    print(f"  {'':34}{'MB/s':>8} {'records/s':>12} {'seconds':>8} {'peak RSS':>10} {'CPU s':>7} {'CPU s/GB':>9}")
    for t, label in labels.items():
        r = med[t]
        mb, rec = rate(r)
        print(f"  {label:34}{mb:8.1f} {rec:12,.0f} {r['seconds']:8.1f} {r['peak_rss_mib']:6.0f} MiB {r['cpu_s']:7.1f} "
              f"{cpu_per_gb(r):9.1f}   {r['bytes'] / r['records']:.0f} B/record"
              + (f"; first {r['records']:,} records only" if t == "script" and limit else ""))
    (pm, pr), (tm, tr), (sm, sr) = (rate(med[t]) for t in labels)
    print(f"  thaw / perf-test: {tm / pm:.2f}x MB/s, {tr / pr:.2f}x records/s   (target >= 0.9x)")
    print(f"  thaw / script:    {tm / sm:.2f}x MB/s, {tr / sr:.2f}x records/s;  CPU per GB "
          f"{cpu_per_gb(med['thaw']) / cpu_per_gb(med['script']):.2f}x the script's (target <= 0.2x)")
    if any(r["case"] == case for r in also):
        u = median([r for r in also if r["case"] == case])
        um, _ = rate(u)
        print(f"  {'thaw replay, unpartitioned table':34}{um:8.1f} {u['records'] / u['seconds']:12,.0f} "
              f"{u['seconds']:8.1f} {u['peak_rss_mib']:6.0f} MiB {u['cpu_s']:7.1f} {cpu_per_gb(u):9.1f}   "
              f"same records, all 16 partitions in every row group")
        print(f"  unpartitioned / partitioned: {um / tm:.2f}x MB/s   (target >= 0.9x; all runs "
              f"{[round(r['seconds'], 1) for r in also if r['case'] == case]} s)")
    print(f"  thaw peak RSS:    {med['thaw']['peak_rss_mib']:.0f} MiB   (max over runs "
          f"{max(r['peak_rss_mib'] for r in rs if r['tool'] == 'thaw'):.0f} MiB)")
    print(f"  (medians of {runs} interleaved runs, by seconds; all runs: "
          + ", ".join(f"{t} {[round(r['seconds'], 1) for r in rs if r['tool'] == t]} s" for t in labels) + ")")
print(f"CPU s = user + system seconds of the producing process (/usr/bin/time; the perf-test's includes its JVM "
      f"start-up, the broker's is not counted). Broker data dir at most {disk_mb} MB, each topic deleted after its "
      f"phase; load average {load_before} before, {load_after} after.")
PY
