"""What the record reader decodes, as `thaw inspect --json` reports it
("read": row groups decoded, their rows, the bytes of the decoded batches):

* a row group holding several Kafka partitions (an unpartitioned table) is
  decoded once, not once per partition, and its records still come out in
  offset order per partition;
* inspect's summary reads only partition, offset and timestamp columns:
  a table of huge values is summarised without decoding them.
"""

from __future__ import annotations

import json
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq

import fixtures
import reader_tables as rt


def src(wh, name):
    return ["--catalog", fixtures.catalog_uri(wh), "--table", name]


def interleaved(offsets_per_partition: int, partitions: int, value: int, rng: random.Random) -> pa.Table:
    """Rows in (offset, partition) order, as a sink consuming every partition writes them."""
    parts, offs = [], []
    for o in range(offsets_per_partition):
        for p in range(partitions):
            parts.append(p)
            offs.append(o)
    n = len(offs)
    return pa.Table.from_arrays([
        pa.array(parts, pa.int32()),
        pa.array(offs, pa.int64()),
        pa.array([(1_700_000_000_000 + 10 * o + p) * 1000 for p, o in zip(parts, offs)],
                 pa.timestamp("us", tz="UTC")),
        pa.array([0] * n, pa.int32()),
        pa.array([b"k%d-%d" % (p, o) for p, o in zip(parts, offs)], pa.binary()),
        rt.fixed_values(n, value, rng),
        pa.array([None] * n, rt.ARROW_SCHEMA.field("headers").type),
    ], schema=rt.ARROW_SCHEMA)


def test_row_groups_holding_many_partitions_decode_once(tmp_path, thaw):
    wh = str(tmp_path / "wh")
    rt.create_unpartitioned(wh, "ns.mixed")
    # 8 partitions x 60 offsets, 80-row row groups: 6 row groups, each holding all 8 partitions.
    t = interleaved(60, 8, 100, random.Random(3))
    path = rt.write_file(f"{wh}/files/mixed.parquet", t, 80)
    assert pq.ParquetFile(path).num_row_groups == 6
    rt.add_files(wh, "ns.mixed", [path])

    s = json.loads(thaw.ok("inspect", *src(wh, "ns.mixed"), "--json").stdout)
    assert s["records"] == 480
    assert s["read"]["row_groups"] == 6, s["read"]  # before: 48, once per partition
    assert s["read"]["rows"] == 480
    assert [(p["partition"], p["records"], p["min_offset"], p["max_offset"], p["gap_count"])
            for p in s["partitions"]] == [(p, 60, 0, 59, 0) for p in range(8)]
    # The records: all of partition 0, then 1, ... each in offset order.
    out = thaw.ok("inspect", *src(wh, "ns.mixed"), "--records", "--format", "%p:%o\\n").stdout.decode().split()
    assert out == [f"{p}:{o}" for p in range(8) for o in range(60)]


def test_summary_reads_no_values(tmp_path, thaw):
    wh = str(tmp_path / "wh")
    rt.create_unpartitioned(wh, "ns.huge")
    rng = random.Random(4)
    value = 256 << 10
    paths = []
    for i in range(2):
        offs = list(range(i * 32, (i + 1) * 32))
        t = rt.file_table(offs, rt.fixed_values(len(offs), value, rng))
        paths.append(rt.write_file(f"{wh}/files/huge{i}.parquet", t, 8, compression="none"))
    rt.add_files(wh, "ns.huge", paths)
    value_bytes = 64 * value

    s = json.loads(thaw.ok("inspect", *src(wh, "ns.huge"), "--json").stdout)
    assert s["records"] == 64
    assert s["partitions"][0]["max_offset"] == 63
    assert s["read"]["row_groups"] == 8
    # 16 MiB of values; partition, offset and timestamps are a few bytes a row.
    assert s["read"]["bytes_decoded"] < 64 << 10, s["read"]

    # --where may look at values: then they are read.
    s = json.loads(thaw.ok("inspect", *src(wh, "ns.huge"), "--json", "--where", "offset >= 0").stdout)
    assert s["records"] == 64
    assert s["read"]["bytes_decoded"] >= value_bytes, s["read"]
    # And --records prints them.
    out = thaw.ok("inspect", *src(wh, "ns.huge"), "--records", "--limit", "1", "--format", "%S\\n").stdout
    assert out == b"%d\n" % value
