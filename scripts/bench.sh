#!/usr/bin/env bash
# Read benchmark: Thaw's record reader vs pyarrow on the same files, same run.
# Results go to stdout; copy them into docs/benchmarks.md with this command.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="$root/.deps/venv/bin/python"
wh="$root/bench/.work/wh"
bin="$root/build/bin"
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
"$py" - "${runs[@]}" <<'PY'
import json, statistics, sys
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
"$py" - "${runs[@]}" <<'PY'
import json, sys
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
PY
"$root/bench/replay_bench.sh"
"$root/bench/serve_bench.sh"
"$root/bench/object_store_bench.sh"
"$root/bench/archive_bench.sh"
echo "[bench] overlapping files in one partition: peak memory vs pyiceberg"
"$py" "$root/bench/overlap_memory.py"
