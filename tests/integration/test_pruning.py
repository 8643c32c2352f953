"""Planning prunes: a read starting at (partition p, offset o) plans only the
files whose partition and offset range can hold records >= o, and time ranges
select by record timestamp. Checked against pyiceberg's own plan of the table."""

from __future__ import annotations

import json

from test_inspect import expected, records, src


def planned_files(thaw, warehouse, name, *args):
    p = thaw.ok("inspect", *src(warehouse, name), "--json", *args)
    return json.loads(p.stdout)["data_files"]


def test_offset_seek_plans_only_files_that_can_hold_it(thaw, warehouse):
    name = "ns.canonical_v2"
    table = warehouse.table(name)
    files = [t.file for t in table.scan().plan_files()]
    total = planned_files(thaw, warehouse, name)
    assert total == len(files)
    want = expected(warehouse, name)
    p0 = [r for r in want if r["partition"] == 0]
    start = p0[len(p0) // 2]["offset"]
    # Files of partition 0 whose upper offset bound is >= start, per pyiceberg's metadata.
    from pyiceberg.conversions import from_bytes
    from pyiceberg.types import LongType
    offset_id = table.schema().find_field("kafka_offset").field_id
    can_hold = [f for f in files if f.partition[0] == 0 and from_bytes(LongType(), f.upper_bounds[offset_id]) >= start]
    got = planned_files(thaw, warehouse, name, "--partition", "0", "--from-offset", str(start))
    assert got == len(can_hold)
    assert got < total
    # And the records read from there are exactly the oracle's.
    assert records(thaw, warehouse, name, "--partition", "0", "--from-offset", str(start)) == \
        [r for r in p0 if r["offset"] >= start]


def test_time_range_selects_by_record_timestamp(thaw, warehouse):
    name = "ns.canonical_v2"
    want = expected(warehouse, name)
    ts = sorted(r["timestamp"] for r in want)
    lo, hi = ts[len(ts) // 4], ts[3 * len(ts) // 4]
    got = records(thaw, warehouse, name, "--from-time", str(lo), "--to-time", str(hi))
    assert got == [r for r in want if lo <= r["timestamp"] < hi]
    assert got


def test_key_prefix_prunes_files_by_key_bounds(tmp_path, thaw):
    # Three files (added with pyiceberg, which records key lower/upper
    # bounds): keys apple-*, banana-*, cherry-*. A key prefix in --where
    # (starts with, or like 'p%' as pyiceberg's row filters) plans only the
    # file whose bounds can hold it; records are still filtered exactly.
    import pyarrow as pa

    import fixtures
    import reader_tables as rt
    wh = str(tmp_path / "wh")
    rt.create_unpartitioned(wh, "ns.keys")
    paths = []
    for i, fruit in enumerate(["apple", "banana", "cherry"]):
        offs = list(range(i * 100, i * 100 + 100))
        t = rt.file_table(offs, pa.array([b"v%d" % o for o in offs], pa.binary()))
        t = t.set_column(4, "key", pa.array([b"%s-%03d" % (fruit.encode(), o) for o in offs], pa.binary()))
        paths.append(rt.write_file(f"{wh}/files/{fruit}.parquet", t, 50))
    rt.add_files(wh, "ns.keys", paths)
    args = ["--catalog", fixtures.catalog_uri(wh), "--table", "ns.keys"]

    def planned(*extra):
        return json.loads(thaw.ok("inspect", *args, "--json", *extra).stdout)["data_files"]

    def offsets(*extra):
        p = thaw.ok("inspect", *args, "--records", "--format", "json", *extra)
        return [json.loads(line)["offset"] for line in p.stdout.decode().splitlines()]

    assert planned() == 3
    for where in ["key starts with 'banana-'", "key like 'banana-%'", "key like 'banana-1%'",
                  "key >= 'banana-' and key < 'banana-2'"]:
        assert planned("--where", where) == 1, where
    assert offsets("--where", "key like 'banana-1%'") == list(range(100, 200))
    assert offsets("--where", "key like 'banana-150'") == [150]
    assert planned("--where", "key starts with 'b' or key starts with 'c'") == 3  # common prefix '' : no pruning
    assert planned("--where", "key starts with 'date'") == 0
    assert planned("--where", "key not like 'banana%'") == 3


def test_empty_where_is_an_error_like_blanks(thaw, warehouse):
    name = "ns.canonical_v2"
    for where in ["", "   "]:
        p = thaw("inspect", *src(warehouse, name), "--where", where)
        assert p.returncode == 2, (where, p.stderr.decode())
        assert "--where: the expression is empty" in p.stderr.decode(), where
