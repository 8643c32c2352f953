#!/usr/bin/env python3
"""Writes a small Iceberg table with pyiceberg, for avro_test.cc.

  make_avro_fixture.py OUT_DIR

Creates a SQLite SqlCatalog warehouse under OUT_DIR, appends ROWS rows to a
v2 table partitioned by identity(part) (so manifests carry a partition record
and bounds maps), and prints one JSON object to stdout:

  {"manifest_list": PATH, "manifests": [PATH, ...], "rows": N,
   "data_files": N, "snapshot_id": N}

Exits 77 when pyiceberg/pyarrow are missing so the C++ test can GTEST_SKIP.
"""
import json
import os
import sys

SKIP = 77


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
        from pyiceberg.types import IntegerType, LongType, NestedField, StringType
    except ImportError as e:
        print(f"pyiceberg/pyarrow unavailable: {e}", file=sys.stderr)
        return SKIP

    wh = os.path.abspath(os.path.join(sys.argv[1], "wh"))
    os.makedirs(wh, exist_ok=True)
    catalog = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    catalog.create_namespace_if_not_exists("ns")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType(), required=False),
        NestedField(3, "part", IntegerType(), required=True),
    )
    spec = PartitionSpec(
        PartitionField(source_id=3, field_id=1000, transform=IdentityTransform(), name="part")
    )
    table = catalog.create_table(
        "ns.t",
        schema=schema,
        partition_spec=spec,
        location=f"file://{wh}/ns/t",
        properties={"format-version": "2"},
    )
    rows = 7
    arrow_schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("name", pa.string()),
            pa.field("part", pa.int32(), nullable=False),
        ]
    )
    data = pa.table(
        {
            "id": list(range(rows)),
            "name": [f"row-{i}" if i % 3 else None for i in range(rows)],
            "part": [i % 2 for i in range(rows)],
        },
        schema=arrow_schema,
    )
    table.append(data)
    table = catalog.load_table("ns.t")
    snapshot = table.current_snapshot()
    manifests = snapshot.manifests(table.io)

    def local(path):
        return path[len("file://"):] if path.startswith("file://") else path

    print(
        json.dumps(
            {
                "manifest_list": local(snapshot.manifest_list),
                "manifests": [local(m.manifest_path) for m in manifests],
                "rows": rows,
                "data_files": 2,  # one per value of `part`
                "snapshot_id": snapshot.snapshot_id,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
