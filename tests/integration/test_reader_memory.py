"""Memory bounded for any table (issue 6): a single-partition table of 2 GiB
of incompressible record values in 16 files that all overlap in offset range
(file i holds the offsets = i mod 16; half the files are shuffled inside) is
read by `thaw inspect --records` with the default memory budget. Every
offset must arrive exactly once and in order, and the process's peak RSS
must stay <= 1 GiB (decoding the overlapping files at once, as the reader did
before, needs more than the whole partition).

Prints the measured peak RSS and time (pytest -s shows them)."""

from __future__ import annotations

import os
import time

import peak_rss
import reader_tables as rt

FILES = 16
RECORDS = 2 * 1024 * 1024  # x 1 KiB values = 2 GiB of record bytes
VALUE = 1024
ROW_GROUP = 8192           # 8 MiB row groups
PEAK_RSS_LIMIT = 1 << 30


def test_overlapping_multi_gb_partition_reads_in_order_within_1_gib(tmp_path, thaw_bin):
    wh = str(tmp_path / "wh")
    name = "ns.big"
    t0 = time.monotonic()
    paths = rt.build_overlapping(wh, name, FILES, RECORDS, VALUE, ROW_GROUP)
    written = time.monotonic() - t0
    data_bytes = sum(os.path.getsize(p) for p in paths)
    assert data_bytes >= 2 * 10**9

    spill = tmp_path / "spill"
    spill.mkdir()
    out_path = tmp_path / "offsets.txt"
    # Started through peak_rss (a small Python of its own): a child forked from pytest would report
    # pytest's own high-water mark as its ru_maxrss.
    with open(out_path, "wb") as out:
        rc, peak, read_seconds, killed = peak_rss.run_measured(
            [str(thaw_bin), "inspect", "--catalog", f"sqlite:///{wh}/catalog.db", "--table", name, "--records",
             "--format", "%o\\n", "--spill-dir", str(spill)], out, tmp_path / "stderr.txt", timeout=600)
    assert killed is None and rc == 0, (killed, rc, (tmp_path / "stderr.txt").read_text()[:4000])
    print(f"\n[reader memory] {RECORDS:,} records, {data_bytes / 2**30:.2f} GiB in {FILES} overlapping files "
          f"(written in {written:.1f} s); thaw inspect --records read them in {read_seconds:.1f} s, "
          f"peak RSS {peak / 2**20:.0f} MiB")

    with open(out_path, "rb") as f:
        got = f.read().split(b"\n")
    assert got[-1] == b""
    got = got[:-1]
    assert len(got) == RECORDS, f"{len(got)} records, want {RECORDS}"
    bad = next((k for k, o in enumerate(got) if int(o) != k), None)
    assert bad is None, f"position {bad}: offset {got[bad]!r}, want {bad}"
    assert os.listdir(spill) == []
    assert peak <= PEAK_RSS_LIMIT, f"peak RSS {peak / 2**20:.0f} MiB > 1024 MiB"
