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

and two tables of two source topics "a" and "b" (a kafka_topic column; both
topics have partitions 0 and 1 with offsets 0 .. TOPIC_OFFSETS-1; values
"<topic>:<partition>:<offset>"):

  ns.topics_part   partitioned by identity(kafka_partition), identity(kafka_topic)
  ns.topics_mixed  unpartitioned: a first append of both topics' rows in one
                   file (its topic bounds differ), then one of topic a only

and a table whose files all overlap (streamed_segments_test.cc):

  ns.shuffled  one partition, offsets 0 .. SHUFFLED_OFFSETS-1 in
               SHUFFLED_FILES appends, file i holding the offsets = i mod
               SHUFFLED_FILES in a shuffled order (a compaction sorted on
               another column), 40-row row groups: every row group spans
               the whole partition

Partition p holds offsets 0 .. APPENDS*OFFSETS-1 except those in GAPS[p];
timestamps are 1_700_000_000_000 + 10 * offset + p ms; values are VALUE_SIZE
bytes. Prints one JSON object:

  {"unpart": METADATA_PATH, "part": METADATA_PATH, "topics_part": ..., "topics_mixed": ..., "partitions": P,
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
TOPIC_OFFSETS = 30
SHUFFLED_FILES = 12
SHUFFLED_OFFSETS = 960


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
        from pyiceberg.types import NestedField, StringType
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
    # Two source topics in one table.
    topic_schema = canonical_schema([NestedField(0, "kafka_topic", StringType(), required=True)])
    topic_spec = PartitionSpec(
        PartitionField(source_id=1, field_id=1000, transform=IdentityTransform(), name="kafka_partition"),
        PartitionField(source_id=100, field_id=1001, transform=IdentityTransform(), name="kafka_topic"))
    topic_props = {"format-version": "2", "thaw.layout": "thaw/1"}
    topic_tables = {
        "topics_part": catalog.create_table("ns.topics_part", schema=topic_schema, partition_spec=topic_spec,
                                            location=f"file://{wh}/ns/topics_part", properties=topic_props),
        "topics_mixed": catalog.create_table("ns.topics_mixed", schema=topic_schema,
                                             location=f"file://{wh}/ns/topics_mixed", properties=topic_props),
    }
    topic_arrow = schema_to_pyarrow(topic_tables["topics_part"].schema())

    def topic_rows(topics):
        out = []
        for o in range(TOPIC_OFFSETS):
            for p in range(2):
                for topic in topics:
                    out.append({"kafka_partition": p, "kafka_offset": o,
                                "kafka_timestamp": (1_700_000_000_000 + 10 * o + p) * 1000, "kafka_timestamp_type": 0,
                                "key": None, "value": f"{topic}:{p}:{o}".encode(), "headers": [],
                                "kafka_topic": topic})
        t = pa.Table.from_pylist(out, schema=topic_arrow)
        return t.set_column(2, topic_arrow.field(2), t.column(2).cast(pa.timestamp("us", tz="UTC")))

    topic_tables["topics_part"].append(topic_rows(["a", "b"]))
    topic_tables["topics_mixed"].append(topic_rows(["a", "b"]))
    topic_tables["topics_mixed"].append(topic_rows(["a"]))
    # Files that all overlap, rows shuffled inside each.
    import random
    rng = random.Random(11)
    shuffled = catalog.create_table("ns.shuffled", schema=schema, location=f"file://{wh}/ns/shuffled",
                                    properties=props)
    for i in range(SHUFFLED_FILES):
        offsets = list(range(i, SHUFFLED_OFFSETS, SHUFFLED_FILES))
        rng.shuffle(offsets)
        rows = [{"kafka_partition": 0, "kafka_offset": o, "kafka_timestamp": (1_700_000_000_000 + o) * 1000,
                 "kafka_timestamp_type": 0, "key": f"k{o}".encode(), "value": (f"v{o}:".encode() * 128)[:512],
                 "headers": []} for o in offsets]
        t = pa.Table.from_pylist(rows, schema=arrow_schema)
        shuffled.append(t.set_column(2, arrow_schema.field(2), t.column(2).cast(pa.timestamp("us", tz="UTC"))))
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
        "topics_part": topic_tables["topics_part"].refresh().metadata_location.removeprefix("file://"),
        "topics_mixed": topic_tables["topics_mixed"].refresh().metadata_location.removeprefix("file://"),
        "shuffled": shuffled.refresh().metadata_location.removeprefix("file://"),
        "shuffled_offsets": SHUFFLED_OFFSETS,
        "partitions": PARTITIONS,
        "records": records,
        "value_bytes": value_bytes,
        "row_groups": row_groups,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
