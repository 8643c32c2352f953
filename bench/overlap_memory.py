"""Memory benchmark (issue 6): one Kafka partition of 2 GiB of record values
in 16 Parquet files that all overlap in offset range (file i holds the
offsets = i mod 16; the odd files are shuffled inside), read in offset order
by
  (a) thaw inspect --records (the record reader: sorted files merged as
      streams, the shuffled ones sorted externally through --spill-dir), and
  (b) the peer a user would reach for: pyiceberg's scan of the same table
      into Arrow, sorted by offset (pyarrow's sort_by).
Both write every offset (a) or count the rows (b); peak RSS from wait4.

    .deps/venv/bin/python bench/overlap_memory.py [WORKDIR]   (make bench runs it)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import reader_tables as rt  # noqa: E402

FILES, RECORDS, VALUE, ROW_GROUP = 16, 2 * 1024 * 1024, 1024, 8192


def build(wh: str, name: str) -> None:
    if os.path.exists(os.path.join(wh, "catalog.db")):
        return
    rt.build_overlapping(wh, name, FILES, RECORDS, VALUE, ROW_GROUP)


def measure(cmd: list[str]) -> tuple[float, float, str]:
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{cmd[0]} failed: {err}")
    return time.monotonic() - t0, ru.ru_maxrss / 1024, out.decode()


PEER = r"""
import sys
from pyiceberg.catalog.sql import SqlCatalog
wh, name = sys.argv[1], sys.argv[2]
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
import pyarrow as pa
t = cat.load_table(name).scan(selected_fields=("kafka_partition", "kafka_offset", "kafka_timestamp", "key",
                                               "value")).to_arrow()
# More than 2 GiB of values: 64-bit offsets, or Arrow cannot concatenate them.
t = t.cast(pa.schema([f.with_type(pa.large_binary()) if pa.types.is_binary(f.type) else f for f in t.schema]))
t = t.sort_by([("kafka_partition", "ascending"), ("kafka_offset", "ascending")])
print(t.num_rows)
"""


def main() -> None:
    work = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "bench", ".work", "overlap")
    wh, name = os.path.join(work, "wh"), "ns.big"
    build(wh, name)
    spill = os.path.join(work, "spill")
    os.makedirs(spill, exist_ok=True)
    thaw = os.path.join(ROOT, "build", "bin", "thaw")
    runs = {"thaw": [], "pyiceberg": []}
    for _ in range(2):
        s, rss, out = measure([thaw, "inspect", "--catalog", f"sqlite:///{wh}/catalog.db", "--table", name,
                               "--records", "--format", r"%o\n", "--spill-dir", spill])
        assert out.count("\n") == RECORDS, out.count("\n")
        runs["thaw"].append((s, rss))
        s, rss, out = measure([sys.executable, "-c", PEER, wh, name])
        assert int(out) == RECORDS
        runs["pyiceberg"].append((s, rss))
    best = {k: min(v, key=lambda r: r[1]) for k, v in runs.items()}
    data = sum(os.path.getsize(os.path.join(wh, "files", f)) for f in os.listdir(os.path.join(wh, "files")))
    print(f"one partition, {RECORDS:,} records x {VALUE} B in {FILES} overlapping files ({data / 2**30:.2f} GiB)")
    for k, (s, rss) in best.items():
        print(f"  {k:10s} peak RSS {rss:8.0f} MiB  {s:6.1f} s   (all runs: {runs[k]})")
    t, p = best["thaw"], best["pyiceberg"]
    print(f"  ratio pyiceberg/thaw peak RSS {p[1] / t[1]:.1f}x, time {p[0] / t[0]:.2f}x")


if __name__ == "__main__":
    main()
