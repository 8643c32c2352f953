#!/usr/bin/env python3
"""Tables for the served-topic tests (tests/unit/serve/*_test.cc), written by pyiceberg.

  make_serve_fixture.py WAREHOUSE            build every table, print JSON
  make_serve_fixture.py WAREHOUSE append     append to ns.serve_tail
  make_serve_fixture.py WAREHOUSE delete     copy-on-write delete in ns.serve_tail
  make_serve_fixture.py WAREHOUSE epochs-delete   ns.serve_epochs: partition 1 from offset 90 deleted
  make_serve_fixture.py WAREHOUSE epochs-append   ns.serve_epochs: partition 1 offsets 90-97 again

A SqlCatalog "default" at WAREHOUSE/catalog.db (namespace ns) with:

  serve_part     canonical layout, identity(kafka_partition), partitions 0, 1
                 and 3 (2 is empty), the integration fixtures' edge-case records
                 (offset gaps, null / empty keys and values, null header values,
                 LogAppendTime rows, timestamps going backwards), 8-row row
                 groups, 3 appends
  serve_unpart   canonical, unpartitioned: every 40-row row group holds the
                 same 10 offsets of each of 4 partitions (a sink consuming
                 every partition); offsets 5-7 missing; 2 KiB values; 2 appends
  serve_tail     canonical, identity(kafka_partition), partitions 0 and 1,
                 10-row row groups; `append` adds offsets at the end of both,
                 `delete` removes partition 0's first 5 offsets and partition
                 1's last 3
  serve_unpart_tail  canonical, unpartitioned, partitions 0 and 1 interleaved,
                 offsets 0-49, 10-row row groups; `append` adds offsets 50-59
  plus the integration fixtures' canonical_v2 (1 MiB values), canonical_cow_delete,
  canonical_snappy_unpartitioned, redpanda, connect_flat and plain.

Prints {"warehouse": DIR, "catalog": URI, "row_groups": {"serve_unpart": N, ...}}.
Exits 77 when pyiceberg / pyarrow are missing.
"""
import json
import os
import sys

SKIP = 77


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import pyarrow.parquet as pq
        from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, LessThan, Or
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "integration"))
        import fixtures as fx
    except ImportError as e:
        print(f"pyiceberg/pyarrow unavailable: {e}", file=sys.stderr)
        return SKIP

    wh = os.path.abspath(sys.argv[1])
    os.makedirs(wh, exist_ok=True)
    cat = fx.open_catalog(wh)
    mode = sys.argv[2] if len(sys.argv) == 3 else "build"

    if mode == "append":
        t = cat.load_table("ns.serve_tail")
        recs = [fx.rec(p, 100 + i, fx.BASE_TS_MS + 500_000 + i, f"k{p}-{i}".encode(), f"tail {p} {i}".encode(),
                       [("h", f"{i}".encode())]) for p in (0, 1) for i in range(25)]
        fx.append_rows(t, [fx.canonical_row(r) for r in recs])
        t = cat.load_table("ns.serve_unpart_tail")
        fx.append_rows(t, [fx.canonical_row(fx.rec(p, o, fx.BASE_TS_MS + o, None, b"v", []))
                           for o in range(50, 60) for p in (0, 1)])
        print(json.dumps({"ok": True}))
        return 0
    if mode == "epochs-delete":
        t = cat.load_table("ns.serve_epochs")
        t.delete(delete_filter=And(EqualTo("kafka_partition", 1), GreaterThanOrEqual("kafka_offset", 90)))
        print(json.dumps({"ok": True}))
        return 0
    if mode == "epochs-append":
        # New records where the delete ended partition 1 (90..97): a new leader epoch's records.
        t = cat.load_table("ns.serve_epochs")
        fx.append_rows(t, [fx.canonical_row(fx.rec(1, o, fx.BASE_TS_MS + 900_000 + o, None, f"new {o}".encode(), []))
                           for o in range(90, 98)])
        print(json.dumps({"ok": True}))
        return 0
    if mode == "delete":
        t = cat.load_table("ns.serve_tail")
        t.delete(delete_filter=Or(And(EqualTo("kafka_partition", 0), LessThan("kafka_offset", 5)),
                                  And(EqualTo("kafka_partition", 1), GreaterThanOrEqual("kafka_offset", 122))))
        print(json.dumps({"ok": True}))
        return 0

    cat.create_namespace_if_not_exists(fx.NS)
    for build in (fx.build_canonical_v2, fx.build_canonical_cow_delete, fx.build_canonical_snappy_unpartitioned,
                  fx.build_redpanda, fx.build_connect_flat, fx.build_plain):
        build(cat, wh)

    props = dict(fx.thaw_props("served"))
    # serve_part
    t = fx.create(cat, wh, "ns.serve_part", fx.canonical_schema(), spec=fx.CANONICAL_SPEC,
                  properties=dict(props, **{"write.parquet.row-group-limit": "8"}))
    records = fx.edge_case_records([0, 1, 3], 40, seed=21, start_offsets={1: 7, 3: 500})
    for part in fx.chunks(records, 3):
        fx.append_rows(t, [fx.canonical_row(r) for r in part])

    # serve_unpart: rows in (offset, partition) order, as a sink writes them
    t = fx.create(cat, wh, "ns.serve_unpart", fx.canonical_schema(),
                  properties=dict(props, **{"write.parquet.row-group-limit": "40"}))
    for a in range(2):
        rows = []
        for o in range(a * 53, (a + 1) * 53):
            if o in (5, 6, 7):
                continue  # a gap in every partition (row groups stay 10 whole offsets: none share an offset)
            for p in range(4):
                r = fx.rec(p, o, fx.BASE_TS_MS + 10 * o + p, f"k{p}-{o}".encode(),
                           (f"p{p}o{o}:".encode() * 2048)[:2048], [("h", f"{p}:{o}".encode())])
                rows.append(fx.canonical_row(r))
        fx.append_rows(t, rows)

    # serve_tail
    t = fx.create(cat, wh, "ns.serve_tail", fx.canonical_schema(), spec=fx.CANONICAL_SPEC,
                  properties=dict(props, **{"write.parquet.row-group-limit": "10"}))
    recs = [fx.rec(p, i, fx.BASE_TS_MS + 1000 * i, f"k{p}-{i}".encode(), f"v{p}-{i}".encode(), [])
            for p in (0, 1) for i in range(100)]
    fx.append_rows(t, [fx.canonical_row(r) for r in recs])

    # serve_epochs: partitions 0 and 1, offsets 0-99 (leader epochs: epochs-delete, epochs-append)
    t = fx.create(cat, wh, "ns.serve_epochs", fx.canonical_schema(), spec=fx.CANONICAL_SPEC,
                  properties=dict(props, **{"write.parquet.row-group-limit": "10"}))
    fx.append_rows(t, [fx.canonical_row(fx.rec(p, i, fx.BASE_TS_MS + i, None, f"v{p}-{i}".encode(), []))
                       for p in (0, 1) for i in range(100)])

    # serve_unpart_tail
    t = fx.create(cat, wh, "ns.serve_unpart_tail", fx.canonical_schema(),
                  properties=dict(props, **{"write.parquet.row-group-limit": "10"}))
    fx.append_rows(t, [fx.canonical_row(fx.rec(p, o, fx.BASE_TS_MS + o, None, b"v", []))
                       for o in range(50) for p in (0, 1)])

    row_groups = {}
    for name in ("serve_part", "serve_unpart", "serve_tail"):
        tbl = cat.load_table(f"ns.{name}")
        n = 0
        for task in tbl.scan().plan_files():
            n += pq.ParquetFile(task.file.file_path.removeprefix("file://")).num_row_groups
        row_groups[name] = n
    print(json.dumps({"warehouse": wh, "catalog": f"sqlite:///{wh}/catalog.db", "row_groups": row_groups}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
