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
export ARROW_DEFAULT_MEMORY_POOL=system
# Warm the page cache so both readers see the same state.
cat "$wh"/bench/records/data/*/*.parquet > /dev/null
thaw="$("$bin/read_bench" "$uri" bench.records)"
pa1="$("$py" "$root/bench/pyarrow_scan.py" "$uri" bench.records single)"
paN="$("$py" "$root/bench/pyarrow_scan.py" "$uri" bench.records threads)"
seek="$("$bin/read_bench" "$uri" bench.many --partition 0 --from-offset 500050 --limit 1)"
"$py" - "$thaw" "$pa1" "$paN" "$seek" <<'PY'
import json, sys
t, p1, pn, s = (json.loads(a) for a in sys.argv[1:])
def rate(r):
    return r["bytes"] / r["seconds"] / 1e6, r["records"] / r["seconds"]
tm, tr = rate(t); m1, r1 = rate(p1); mn, rn = rate(pn)
print(f"full read, {t['records']:,} records, {t['files']} files")
print(f"  thaw record reader   {tm:8.1f} MB/s {tr:12,.0f} rec/s  peak RSS {t['peak_rss_mib']:.0f} MiB")
print(f"  pyarrow 1 thread     {m1:8.1f} MB/s {r1:12,.0f} rec/s  peak RSS {p1['peak_rss_mib']:.0f} MiB  ratio thaw/pyarrow {tm/m1:.2f}x")
print(f"  pyarrow all threads  {mn:8.1f} MB/s {rn:12,.0f} rec/s  peak RSS {pn['peak_rss_mib']:.0f} MiB  ratio thaw/pyarrow {tm/mn:.2f}x")
print(f"seek: first record of partition 0 from offset 500050 in a {s['files']}-file plan: {s['first_record_ms']:.1f} ms")
PY
