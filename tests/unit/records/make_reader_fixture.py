#!/usr/bin/env python3
"""Writes two tables holding the same Kafka records, for record_reader_test.cc.

  make_reader_fixture.py OUT_DIR

Both are Thaw-layout v2 tables (SqlCatalog on SQLite under OUT_DIR) written by
pyiceberg with 40-row row groups (write.parquet.row-group-limit):

  ns.unpart  unpartitioned: each of the APPENDS appends holds OFFSETS offsets of
             all PARTITIONS partitions, rows in (offset, partition) order, as a
             sink consuming every partition writes them; a row group holds 10
             offsets of every partition
  ns.part    the same records, partitioned by identity(kafka_partition)

Partition p holds offsets 0 .. APPENDS*OFFSETS-1 except those in GAPS[p];
timestamps are 1_700_000_000_000 + 10 * offset + p ms; values are VALUE_SIZE
bytes. Prints one JSON object:

  {"unpart": METADATA_PATH, "part": METADATA_PATH, "partitions": P,
   "records": N, "value_bytes": B, "row_groups": {"unpart": R, "part": R2}}

Exits 77 when pyiceberg/pyarrow are missing so the C++ test can GTEST_SKIP.
"""
import json
import os
import sys

SKIP = 77
PARTITIONS = 4
APPENDS = 3
OFFSETS = 100
ROW_GROUP_ROWS = 40
VALUE_SIZE = 2048
GAPS = {1: {5, 6, 7}, 3: {150}}


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
        from pyiceberg.catalog.sql import SqlCatalog
        from pyiceberg.io.pyarrow import schema_to_pyarrow
        from pyiceberg.partitioning import PartitionField, PartitionSpec
        from pyiceberg.transforms import IdentityTransform
        # Thaw's canonical schema, as the integration fixtures define it.
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "integration"))
        from fixtures import canonical_schema
    except ImportError as e:
        print(f"pyiceberg/pyarrow unavailable: {e}", file=sys.stderr)
        return SKIP

    wh = os.path.abspath(os.path.join(sys.argv[1], "wh"))
    os.makedirs(wh, exist_ok=True)
    catalog = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    catalog.create_namespace_if_not_exists("ns")
    schema = canonical_schema()
    spec = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=IdentityTransform(),
                                        name="kafka_partition"))
    props = {"format-version": "2", "thaw.layout": "thaw/1", "thaw.source.topic": "t",
             "write.parquet.row-group-limit": str(ROW_GROUP_ROWS)}
    tables = {
        "unpart": catalog.create_table("ns.unpart", schema=schema, location=f"file://{wh}/ns/unpart",
                                       properties=props),
        "part": catalog.create_table("ns.part", schema=schema, partition_spec=spec,
                                     location=f"file://{wh}/ns/part", properties=props),
    }
    arrow_schema = schema_to_pyarrow(tables["unpart"].schema())
    records = 0
    value_bytes = 0
    for a in range(APPENDS):
        rows = []
        for o in range(a * OFFSETS, (a + 1) * OFFSETS):
            for p in range(PARTITIONS):
                if o in GAPS.get(p, set()):
                    continue
                value = (f"p{p}o{o}:".encode() * VALUE_SIZE)[:VALUE_SIZE]
                rows.append({
                    "kafka_partition": p,
                    "kafka_offset": o,
                    "kafka_timestamp": (1_700_000_000_000 + 10 * o + p) * 1000,
                    "kafka_timestamp_type": 0,
                    "key": f"k{p}-{o}".encode(),
                    "value": value,
                    "headers": [{"key": "h", "value": f"{p}:{o}".encode()}],
                })
                records += 1
                value_bytes += len(value)
        t = pa.Table.from_pylist(rows, schema=arrow_schema)
        t = t.set_column(2, arrow_schema.field(2), t.column(2).cast(pa.timestamp("us", tz="UTC")))
        for tbl in tables.values():
            tbl.append(t)
    row_groups = {}
    for name, tbl in tables.items():
        tbl = tbl.refresh()
        n = 0
        for task in tbl.scan().plan_files():
            n += pq.ParquetFile(task.file.file_path.removeprefix("file://")).num_row_groups
        row_groups[name] = n
    print(json.dumps({
        "unpart": tables["unpart"].refresh().metadata_location.removeprefix("file://"),
        "part": tables["part"].refresh().metadata_location.removeprefix("file://"),
        "partitions": PARTITIONS,
        "records": records,
        "value_bytes": value_bytes,
        "row_groups": row_groups,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
