"""Seeks that decode only the rows they return (issue 19): a row group that
an offset range cuts, whose offsets ascend in row order, is read over the rows
that can hold the range -- its offset column first, then only the data pages
of the other columns holding those rows (RecordReader's NarrowRows,
ParquetFile::ReadRows) -- and `thaw serve` answers a Fetch into a segment it
has not read yet that way.

* `thaw inspect --json` reports the rows decoded ("read.rows"): exactly the
  rows of the range on a sorted row group, the whole row group on a shuffled
  one (which cannot be narrowed and is read as before);
* the records are the same either way, at every position tried, page
  boundaries included, values and headers byte for byte;
* a real Kafka consumer (confluent-kafka) assigned to the middle of a served
  partition gets the records from there on, and `thaw serve` (its debug log)
  decoded about a fetch's worth of rows for its first answer.
"""

from __future__ import annotations

import json
import os
import random
import time

import pyarrow as pa
import pyarrow.parquet as pq
from confluent_kafka import Consumer, TopicPartition

import fixtures
import reader_tables as rt
from serve_harness import ThawServer, Topic

ROWS = 20_000
VALUE = 1024


def table(offsets: list[int], rng: random.Random) -> pa.Table:
    """Printable 1 KiB values (offset first) and a header on every third record."""
    letters = b"abcdefghijklmnopqrstuvwxyz"
    values = [b"%08d:" % o + bytes(rng.choice(letters) for _ in range(16)) * ((VALUE - 9) // 16) for o in offsets]
    header_type = rt.ARROW_SCHEMA.field("headers").type
    headers = [[{"key": "h", "value": b"%d" % o}] if o % 3 == 0 else None for o in offsets]
    n = len(offsets)
    return pa.Table.from_arrays([
        pa.array([0] * n, pa.int32()),
        pa.array(offsets, pa.int64()),
        pa.array([(1_700_000_000_000 + o) * 1000 for o in offsets], pa.timestamp("us", tz="UTC")),
        pa.array([0] * n, pa.int32()),
        pa.array([b"k%d" % o for o in offsets], pa.binary()),
        pa.array(values, pa.binary()),
        pa.array(headers, header_type),
    ], schema=rt.ARROW_SCHEMA)


def build(wh: str, name: str, shuffled: bool) -> pa.Table:
    rng = random.Random(19)
    offsets = list(range(ROWS))
    if shuffled:
        rng.shuffle(offsets)
    t = table(offsets, rng)
    rt.create_unpartitioned(wh, name)
    path = f"{wh}/files/{name.split('.')[1]}.parquet"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # One row group, small pages (as most writers' 1 MiB pages are to 1 KiB values).
    pq.write_table(t, path, row_group_size=ROWS, compression="zstd", data_page_size=64 << 10,
                   use_dictionary=False)
    assert pq.ParquetFile(path).num_row_groups == 1
    rt.add_files(wh, name, [path])
    return t


def expected(t: pa.Table, lo: int, hi: int) -> list[str]:
    rows = sorted(t.to_pylist(), key=lambda r: r["kafka_offset"])
    out = []
    for r in rows[lo:hi]:
        h = ",".join(f"{x['key']}={x['value'].decode()}" for x in (r["headers"] or []))
        out.append(f"{r['kafka_offset']} {r['key'].decode()} {r['value'].decode()} [{h}]")
    return out


def src(wh, name):
    return ["--catalog", fixtures.catalog_uri(wh), "--table", name]


def test_inspect_decodes_only_the_rows_of_the_range(tmp_path, thaw):
    wh = str(tmp_path / "wh")
    sorted_t = build(wh, "ns.sorted", shuffled=False)
    shuffled_t = build(wh, "ns.shuffled", shuffled=True)
    ranges = [(0, ROWS), (7777, ROWS), (12345, 12400), (ROWS - 1, ROWS), (5000, 5001), (63, 64 + 63)]
    for name, t, narrowed in [("ns.sorted", sorted_t, True), ("ns.shuffled", shuffled_t, False)]:
        for lo, hi in ranges:
            args = [*src(wh, name), "--partition", "0", "--from-offset", str(lo)]
            if hi < ROWS:
                args += ["--to-offset", str(hi)]
            got = thaw.ok("inspect", *args, "--records", "--format", "%o %k %s [%h]\\n").stdout.decode().splitlines()
            assert got == expected(t, lo, hi), (name, lo, hi)
            summary = json.loads(thaw.ok("inspect", *args, "--json").stdout)
            want_rows = (hi - lo) if narrowed and (lo, hi) != (0, ROWS) else ROWS
            assert summary["read"]["rows"] == want_rows, (name, lo, hi, summary["read"])


def test_a_consumer_from_the_middle_of_a_served_partition(tmp_path, thaw_bin):
    wh = str(tmp_path / "wh")
    t = build(wh, "ns.sorted", shuffled=False)
    want = expected(t, 12345, 12345 + 3000)
    srv = ThawServer(thaw_bin, fixtures.catalog_uri(wh), [Topic("sorted", "ns.sorted", "thaw")], tmp_path / "serve",
                     extra=["--log-level", "debug"])
    srv.start()
    try:
        c = Consumer({"bootstrap.servers": srv.bootstrap, "group.id": "narrow", "enable.auto.commit": False,
                      "fetch.message.max.bytes": 256 << 10})
        c.assign([TopicPartition("sorted", 0, 12345)])
        got, deadline = [], time.time() + 60
        while len(got) < len(want) and time.time() < deadline:
            m = c.poll(1.0)
            if m is None or m.error():
                continue
            h = ",".join(f"{k}={v.decode()}" for k, v in (m.headers() or []))
            got.append(f"{m.offset()} {m.key().decode()} {m.value().decode()} [{h}]")
        c.close()
    finally:
        srv.stop()
    log = srv.stderr(limit=1 << 30)
    assert got[:len(want)] == want
    # The first Fetch decoded about its 256 KiB of rows, not the 20,000-row row group.
    answered = [ln for ln in log.splitlines() if "answered from the" in ln and "from offset 12345 " in ln]
    assert answered, log[-3000:]
    rows = int(answered[0].split("answered from the ")[1].split()[0])
    assert 0 < rows <= 1000, answered[0]
