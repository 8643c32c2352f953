#!/usr/bin/env bash
# Read benchmark: Thaw's record reader vs pyarrow on the same files, same run.
# Results go to stdout; copy them into docs/benchmarks.md with this command.
# Every section also appends its figures as rows (JSON lines) to
# $THAW_BENCH_RESULTS (default bench/.work/bench-results.jsonl, emptied here),
# the sub-benches' output is kept in bench/.work/bench-logs/, and the end
# prints the rows as the table docs/benchmarks.md opens with (bench/summary.py;
# measures, peers and targets in bench/targets.json).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="$root/.deps/venv/bin/python"
wh="$root/bench/.work/wh"
bin="$root/build/bin"
export THAW_BENCH_RESULTS="${THAW_BENCH_RESULTS:-$root/bench/.work/bench-results.jsonl}"
logs="$root/bench/.work/bench-logs"
mkdir -p "$(dirname "$THAW_BENCH_RESULTS")" "$logs"
: >"$THAW_BENCH_RESULTS"
summary="$root/bench/summary.py"
# rows KIND LOG COMMAND ENV_PREFIX: the summary rows of a sub-bench, from its
# output; a failure here costs only the rows (shown as "not measured").
rows() {
  "$py" "$summary" parse "$1" "$2" --command "$3" --env-prefix "$4" \
    || echo "[bench] could not read the $1 figures from $2 for the summary" >&2
}
ninja -C "$root/build" -j2 read_bench >/dev/null
echo "[bench] preparing tables (cached in bench/.work)"
uri="$("$py" "$root/bench/make_bench_tables.py" "$wh" | tail -1)"
# Both sides use Arrow's default memory pool (mimalloc in the pyarrow wheel).
# Warm the page cache so both readers see the same state; each measurement
# is the median of 3 runs, interleaved.
cat "$wh"/bench/records/data/*/*.parquet > /dev/null
runs=()
for i in 1 2 3; do
  runs+=("$("$bin/read_bench" "$uri" bench.records)")
  runs+=("$("$py" "$root/bench/pyarrow_scan.py" "$uri" bench.records single)")
  runs+=("$("$py" "$root/bench/pyarrow_scan.py" "$uri" bench.records threads)")
  runs+=("$("$bin/read_bench" "$uri" bench.many --partition 0 --from-offset 500050 --limit 1)")
done
PYTHONPATH="$root/bench" "$py" - "${runs[@]}" <<'PY'
import json, statistics, sys
import summary
rows = [json.loads(a) for a in sys.argv[1:]]
def median(rs, key="seconds"):
    return sorted(rs, key=lambda r: r[key])[len(rs) // 2]
t, p1, pn = (median(rows[k::4]) for k in range(3))
s = median(rows[3::4], "first_record_ms")
def rate(r):
    return r["bytes"] / r["seconds"] / 1e6, r["records"] / r["seconds"]
tm, tr = rate(t); m1, r1 = rate(p1); mn, rn = rate(pn)
print(f"full read, {t['records']:,} records, {t['files']} files")
print(f"  thaw record reader   {tm:8.1f} MB/s {tr:12,.0f} rec/s  peak RSS {t['peak_rss_mib']:.0f} MiB")
print(f"  pyarrow 1 thread     {m1:8.1f} MB/s {r1:12,.0f} rec/s  peak RSS {p1['peak_rss_mib']:.0f} MiB  ratio thaw/pyarrow {tm/m1:.2f}x")
print(f"  pyarrow all threads  {mn:8.1f} MB/s {rn:12,.0f} rec/s  peak RSS {pn['peak_rss_mib']:.0f} MiB  ratio thaw/pyarrow {tm/mn:.2f}x")
print(f"(medians of 3 runs; all runs: thaw {[r['seconds'] for r in rows[0::4]]} s, pyarrow-1 {[r['seconds'] for r in rows[1::4]]} s)")
print(f"seek: first record of partition 0 from offset 500050 in a {s['files']}-file plan: {s['first_record_ms']:.1f} ms")
cmd = "make bench"
summary.record("read.pyarrow_1", thaw=f"{tm:.1f} MB/s", peer_value=f"{m1:.1f} MB/s", ratio=tm / m1, command=cmd)
summary.record("read.pyarrow_all", thaw=f"{tm:.1f} MB/s", peer_value=f"{mn:.1f} MB/s", ratio=tm / mn, command=cmd)
summary.record("read.peak_rss", thaw=f"{t['peak_rss_mib']:.0f} MiB", peer_value=f"{p1['peak_rss_mib']:.0f} MiB",
               ratio=t["peak_rss_mib"] / p1["peak_rss_mib"], value=t["peak_rss_mib"], command=cmd)
summary.record("read.seek", thaw=f"{s['first_record_ms']:.1f} ms", value=s["first_record_ms"], command=cmd,
               note=f"{s['files']}-file plan after pruning")
PY
# One table's records in two layouts: 16 Kafka partitions in every row group
# (unpartitioned) vs partitioned by kafka_partition; each row group must be
# decoded once however many partitions it holds (target: >= 0.9x).
cat "$wh"/bench/unpart/data/*.parquet > /dev/null
runs=()
for i in 1 2 3; do
  runs+=("$("$bin/read_bench" "$uri" bench.records)")
  runs+=("$("$bin/read_bench" "$uri" bench.unpart)")
done
PYTHONPATH="$root/bench" "$py" - "${runs[@]}" <<'PY'
import json, sys
import summary
rows = [json.loads(a) for a in sys.argv[1:]]
def median(rs):
    return sorted(rs, key=lambda r: r["seconds"])[len(rs) // 2]
p, u = median(rows[0::2]), median(rows[1::2])
assert p["records"] == u["records"], (p["records"], u["records"])
def line(name, r):
    print(f"  {name:<34} {r['bytes'] / r['seconds'] / 1e6:8.1f} MB/s  {r['records'] / r['seconds']:12,.0f} rec/s  "
          f"row groups decoded {r['row_groups_decoded']}  peak RSS {r['peak_rss_mib']:.0f} MiB")
print(f"16 partitions, {p['records']:,} records: partitioned vs unpartitioned table")
line("partitioned by kafka_partition", p)
line("unpartitioned (16 in each row group)", u)
print(f"  ratio unpartitioned/partitioned {p['seconds'] / u['seconds']:.2f}x (target >= 0.9x; medians of 3, "
      f"all runs: {[r['seconds'] for r in rows[0::2]]} s vs {[r['seconds'] for r in rows[1::2]]} s)")
summary.record("read.unpart", thaw=f"{u['bytes'] / u['seconds'] / 1e6:.1f} MB/s",
               peer_value=f"{p['bytes'] / p['seconds'] / 1e6:.1f} MB/s", ratio=p["seconds"] / u["seconds"],
               command="make bench")
PY
# The sub-benches' output is kept (tee) for their summary rows; pipefail keeps
# a failing bench fatal, as before.
"$root/bench/replay_bench.sh" | tee "$logs/replay.out"
rows replay "$logs/replay.out" bench/replay_bench.sh REPLAY_
"$root/bench/serve_bench.sh" | tee "$logs/serve.out"
rows serve "$logs/serve.out" bench/serve_bench.sh SERVE_BENCH_
"$root/bench/object_store_bench.sh" | tee "$logs/objstore.out"
rows objstore "$logs/objstore.out" bench/object_store_bench.sh OBJSTORE_BENCH_
"$root/bench/archive_bench.sh"
rows archive "$root/bench/.work/archive_bench.results" bench/archive_bench.sh ARCHIVE_BENCH_
"$root/bench/tls_bench.sh" | tee "$logs/tls.out"
"$root/bench/tls_peer_bench.sh" | tee "$logs/tls_peer.out"
"$root/bench/metrics_bench.sh" | tee "$logs/metrics.out"
"$root/bench/tiered_bench.sh"
rows tiered "$root/bench/.work/tiered_bench.results" bench/tiered_bench.sh TIERED_BENCH_
echo "[bench] overlapping files in one partition: peak memory vs pyiceberg"
"$py" "$root/bench/overlap_memory.py" | tee "$logs/overlap.out"
rows overlap "$logs/overlap.out" ".deps/venv/bin/python bench/overlap_memory.py" ""
echo
echo "[bench] summary: every measure against its peer and target (the table docs/benchmarks.md opens with;"
echo "        rows in ${THAW_BENCH_RESULTS#"$root"/})"
"$py" "$summary" --markdown "$THAW_BENCH_RESULTS" --missing
