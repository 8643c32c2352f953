"""The record reader on tables whose data files overlap in offset range, and
on duplicate offsets (docs/layouts.md, "Duplicate offsets"):

* files that overlap are merged in offset order; with a memory budget too
  small to decode them at once, files sorted by offset stream into a k-way
  merge and the others are sorted through sorted runs spilled to --spill-dir
  (a private subdirectory, removed at exit) -- the output is the same;
* of rows with the same partition and offset, the one of the highest data
  sequence number (the later commit) wins, then the newest file; inspect
  counts duplicates and those whose contents differ, in text and --json;
* a record timestamp of 0 stays 0.
"""

from __future__ import annotations

import json
import os
import random

import pyarrow as pa

import fixtures
import reader_tables as rt


def src(wh, name):
    return ["--catalog", fixtures.catalog_uri(wh), "--table", name]


def records_json(thaw, wh, name, *extra):
    out = thaw.ok("inspect", *src(wh, name), "--records", "--format", "json", *extra).stdout.decode()
    return [json.loads(line) for line in out.splitlines()]


def summary_json(thaw, wh, name, *extra):
    return json.loads(thaw.ok("inspect", *src(wh, name), "--json", *extra).stdout)


# ---------------------------------------------------------------------------
# duplicates written by two pyiceberg appends


def test_later_append_wins_duplicate_offsets_and_inspect_counts_them(tmp_path, thaw):
    wh = str(tmp_path / "wh")
    os.makedirs(wh)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace("ns")
    name = "ns.dups"
    t = fixtures.create(cat, wh, name, fixtures.canonical_schema(), spec=fixtures.CANONICAL_SPEC,
                        properties=fixtures.thaw_props("dups"))

    def row(p, o, value, ts=None):
        return fixtures.canonical_row(fixtures.rec(p, o, 1_700_000_000_000 + o if ts is None else ts, b"k%d" % o, value,
                                                   [("h", b"x")]))

    # First append: partition 0 offsets 0..9 (offset 0 with a real timestamp of 0), partition 1 offsets 3..6.
    first = [row(0, o, b"old-%d" % o, ts=0 if o == 0 else None) for o in range(10)]
    first += [row(1, o, b"old-%d" % o) for o in range(3, 7)]
    fixtures.append_rows(t, first)
    # Second append: partition 0 offsets 5..14 -- 5..7 with other values, 8..9 identical;
    # partition 1 offsets 0..4 -- 3..4 with other values (this file's offsets start lower).
    second = [row(0, o, b"new-%d" % o if o < 8 or o >= 10 else b"old-%d" % o) for o in range(5, 15)]
    second += [row(1, o, b"new-%d" % o) for o in range(0, 5)]
    fixtures.append_rows(cat.load_table(name), second)

    want = {(0, o): b"old-%d" % o for o in range(0, 5)}
    want.update({(0, o): b"new-%d" % o for o in range(5, 8)})
    want.update({(0, o): b"old-%d" % o for o in range(8, 10)})
    want.update({(0, o): b"new-%d" % o for o in range(10, 15)})
    want.update({(1, o): b"new-%d" % o for o in range(0, 5)})
    want.update({(1, o): b"old-%d" % o for o in range(5, 7)})

    recs = records_json(thaw, wh, name)
    assert [(r["partition"], r["offset"]) for r in recs] == sorted(want)
    assert {(r["partition"], r["offset"]): fixtures.json_bytes(r) for r in recs} == want
    assert recs[0]["offset"] == 0 and recs[0]["timestamp"] == 0  # a real 0 is not "missing"

    s = summary_json(thaw, wh, name)
    # partition 0: 5..9 twice (5..7 differ); partition 1: 3..4 twice (both differ)
    assert s["duplicates"] == 7
    assert s["duplicates_differing"] == 5
    assert s["records"] == 22
    p0 = next(p for p in s["partitions"] if p["partition"] == 0)
    assert p0["min_timestamp"] == 0

    text = thaw.ok("inspect", *src(wh, name)).stdout.decode()
    assert "duplicates 7 duplicate offsets dropped, 5 with different contents" in text
    assert "1970-01-01T00:00:00.000Z" in text


def test_a_table_without_duplicates_reports_zero(tmp_path, thaw):
    wh = str(tmp_path / "wh")
    fixtures.build_small_canonical(wh, "ns.small")
    s = summary_json(thaw, wh, "ns.small")
    assert s["duplicates"] == 0 and s["duplicates_differing"] == 0
    assert "duplicates 0\n" in thaw.ok("inspect", *src(wh, "ns.small")).stdout.decode()


# ---------------------------------------------------------------------------
# files that overlap: merge, spill, and duplicates across commits

N = 8000
FILES = 4
VALUE = 512


def build_overlapping(wh, name, *, unsorted_files, dup_file=True, seed=7):
    """FILES files of one partition, file i holding the offsets = i mod FILES (all
    overlap), in row groups of 500 rows; the files in `unsorted_files` are
    shuffled. With dup_file, a later commit adds a shuffled file re-carrying
    offsets 100..199: new values for 100..149, identical rows for 150..199."""
    rng = random.Random(seed)
    rt.create_unpartitioned(wh, name)
    want = {}
    paths = []
    for i in range(FILES):
        offs = list(range(i, N, FILES))
        if i in unsorted_files:
            rng.shuffle(offs)
        values = rt.fixed_values(len(offs), VALUE, rng)
        for o, v in zip(offs, values.to_pylist()):
            want[o] = v
        paths.append(rt.write_file(f"{wh}/files/f{i}.parquet", rt.file_table(offs, values), 500))
    rt.add_files(wh, name, paths)
    if dup_file:
        offs = list(range(100, 200))
        rng.shuffle(offs)
        vals = [b"new-%d" % o if o < 150 else want[o] for o in offs]
        t = rt.file_table(offs, pa.array(vals, pa.binary()))
        rt.add_files(wh, name, [rt.write_file(f"{wh}/files/dup.parquet", t, 30)])
        for o in range(100, 150):
            want[o] = b"new-%d" % o
    return want


def check_records(recs, want):
    assert [r["offset"] for r in recs] == list(range(N))
    for r in recs:
        assert fixtures.json_bytes(r) == want[r["offset"]], r["offset"]
        assert fixtures.json_bytes(r, "key") == b"k%d" % r["offset"]
        assert r["timestamp"] == 1_700_000_000_000 + r["offset"]


def test_overlapping_unsorted_files_sort_through_spill_with_a_tiny_budget(tmp_path, thaw):
    wh = str(tmp_path / "wh")
    want = build_overlapping(wh, "ns.overlap", unsorted_files={2, 3})
    spill = tmp_path / "spill"
    spill.mkdir()

    # Default budget: the overlapping row groups are decoded at once.
    at_once = records_json(thaw, wh, "ns.overlap")
    check_records(at_once, want)
    # 1 MiB: sorted files stream, unsorted ones are spilled in sorted runs, then all merged.
    merged = records_json(thaw, wh, "ns.overlap", "--memory-budget", "1", "--spill-dir", str(spill))
    check_records(merged, want)
    assert merged == at_once
    assert os.listdir(spill) == []  # the private spill directory is gone

    for extra in ([], ["--memory-budget", "1", "--spill-dir", str(spill)]):
        s = summary_json(thaw, wh, "ns.overlap", *extra)
        assert s["records"] == N
        assert s["duplicates"] == 100 and s["duplicates_differing"] == 50, extra
        assert s["partitions"][0]["gap_count"] == 0

    # The spill path really is taken: an unusable spill directory fails, naming the fix.
    p = thaw("inspect", *src(wh, "ns.overlap"), "--json", "--memory-budget", "1", "--spill-dir", "/nonexistent/dir")
    assert p.returncode == 1
    err = p.stderr.decode()
    assert "/nonexistent/dir" in err and "--spill-dir" in err, err


def test_overlapping_sorted_files_stream_without_spilling(tmp_path, thaw):
    wh = str(tmp_path / "wh")
    want = build_overlapping(wh, "ns.sorted", unsorted_files=set(), dup_file=False)
    # Nothing needs sorting: a spill directory that cannot be made is never touched.
    recs = records_json(thaw, wh, "ns.sorted", "--memory-budget", "1", "--spill-dir", "/nonexistent/dir")
    check_records(recs, want)
