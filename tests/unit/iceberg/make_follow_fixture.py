#!/usr/bin/env python3
"""Writes a table whose manifests pyiceberg merged, for table_scan_test.cc.

  make_follow_fixture.py OUT_DIR

A v2 table (SqlCatalog on SQLite under OUT_DIR) partitioned by identity(part),
with commit.manifest-merge.enabled=true and min-count-to-merge 2, and three
appends of ROWS[i] rows each: from the second on, each append rewrites the
earlier manifests into one, so the current snapshot lists the earlier
appends' files as EXISTING. Prints one JSON object:

  {"metadata": PATH, "snapshots": [ID, ...], "rows": [N, ...],
   "manifest_lists": [PATH, ...]}

Exits 77 when pyiceberg/pyarrow are missing so the C++ test can GTEST_SKIP.
"""
import json
import os
import sys

SKIP = 77
ROWS = [2, 3, 4]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import pyarrow as pa
        from pyiceberg.catalog.sql import SqlCatalog
        from pyiceberg.partitioning import PartitionField, PartitionSpec
        from pyiceberg.schema import Schema
        from pyiceberg.transforms import IdentityTransform
        from pyiceberg.types import IntegerType, LongType, NestedField
    except ImportError as e:
        print(f"pyiceberg/pyarrow unavailable: {e}", file=sys.stderr)
        return SKIP

    wh = os.path.abspath(os.path.join(sys.argv[1], "wh"))
    os.makedirs(wh, exist_ok=True)
    catalog = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    catalog.create_namespace_if_not_exists("ns")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "part", IntegerType(), required=True),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="part"))
    table = catalog.create_table(
        "ns.t",
        schema=schema,
        partition_spec=spec,
        location=f"file://{wh}/ns/t",
        properties={
            "format-version": "2",
            "commit.manifest-merge.enabled": "true",
            "commit.manifest.min-count-to-merge": "2",
        },
    )
    arrow_schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("part", pa.int32(), nullable=False)])
    snapshots, lists = [], []
    next_id = 0
    for i, n in enumerate(ROWS):
        rows = [{"id": next_id + k, "part": i % 2} for k in range(n)]
        next_id += n
        table.append(pa.Table.from_pylist(rows, schema=arrow_schema))
        table = table.refresh()
        snap = table.current_snapshot()
        snapshots.append(snap.snapshot_id)
        lists.append(snap.manifest_list.removeprefix("file://"))
    print(json.dumps({
        "metadata": table.metadata_location.removeprefix("file://"),
        "snapshots": snapshots,
        "rows": ROWS,
        "manifest_lists": lists,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
