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
