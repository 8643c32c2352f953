"""Writes the benchmark tables with pyiceberg (idempotent: skipped when present).

  bench.records  2,000,000 records x 1 KiB values, 16 partitions, Thaw layout,
                 zstd Parquet (pyiceberg's default), partitioned by kafka_partition
  bench.small    5,000,000 records x 100 B values, no key, no headers (what
                 kafka-producer-perf-test --record-size 100 sends), otherwise
                 as bench.records
  bench.unpart   the same 2,000,000 records (same values), unpartitioned: rows
                 in (offset, partition) order as a sink consuming all 16
                 partitions writes them, 25,000-row row groups (as bench.records'
                 files), so every row group holds all 16 partitions
  bench.many     10,000 data files (one partition, 100 records each), added in
                 one commit, for the time to the first record of a mid-partition seek
"""
import os
import sys

import random
import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (BinaryType, IntegerType, ListType, LongType, NestedField, StringType, StructType,
                             TimestamptzType)

wh = os.path.abspath(sys.argv[1])
os.makedirs(wh, exist_ok=True)
cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
cat.create_namespace_if_not_exists("bench")

SCHEMA = Schema(
    NestedField(1, "kafka_partition", IntegerType(), required=True),
    NestedField(2, "kafka_offset", LongType(), required=True),
    NestedField(3, "kafka_timestamp", TimestamptzType(), required=True),
    NestedField(4, "kafka_timestamp_type", IntegerType(), required=True),
    NestedField(5, "key", BinaryType(), required=False),
    NestedField(6, "value", BinaryType(), required=False),
    NestedField(7, "headers", ListType(8, StructType(NestedField(9, "key", StringType(), required=True),
                                                      NestedField(10, "value", BinaryType(), required=False)),
                                       element_required=True), required=False),
)
SPEC = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=IdentityTransform(), name="kafka_partition"))


def arrow_schema():
    return pa.schema([
        pa.field("kafka_partition", pa.int32(), nullable=False),
        pa.field("kafka_offset", pa.int64(), nullable=False),
        pa.field("kafka_timestamp", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("kafka_timestamp_type", pa.int32(), nullable=False),
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("headers", pa.list_(pa.field("element", pa.struct([pa.field("key", pa.string(), nullable=False),
                                                                    pa.field("value", pa.binary())]), nullable=False))),
    ])


def batch(partition, start, n, value_size, rng, keys=True, headers=True):
    offs = list(range(start, start + n))
    # Semi-compressible values, like JSON events: a random prefix + repeated text.
    body = (b'{"event":"order","payload":"' + b"x" * value_size)[: value_size - 40]
    values = [rng.randbytes(20).hex().encode() + body for _ in range(n)]
    return pa.table({
        "kafka_partition": pa.array([partition] * n, pa.int32()),
        "kafka_offset": pa.array(offs, pa.int64()),
        "kafka_timestamp": pa.array([1_700_000_000_000_000 + o * 1000 for o in offs], pa.timestamp("us", tz="UTC")),
        "kafka_timestamp_type": pa.array([0] * n, pa.int32()),
        "key": pa.array([f"key-{o % 1000}".encode() if keys else None for o in offs], pa.binary()),
        "value": pa.array(values, pa.binary()),
        "headers": pa.array([[{"key": "source", "value": b"bench"}] if headers else []] * n,
                            arrow_schema().field("headers").type),
    }, schema=arrow_schema())


def make_records(n_total=2_000_000, parts=16, name="records", value_size=1024, keys=True, headers=True):
    if cat.table_exists(f"bench.{name}"):
        return
    t = cat.create_table(f"bench.{name}", schema=SCHEMA, partition_spec=SPEC, location=f"file://{wh}/bench/{name}",
                         properties={"thaw.layout": "thaw/1"})
    rng = random.Random(1)
    per = n_total // parts
    chunk = 25_000
    for start in range(0, per, chunk):
        tables = [batch(p, start, min(chunk, per - start), value_size, rng, keys, headers) for p in range(parts)]
        t.append(pa.concat_tables(tables))


def make_unpart(n_total=2_000_000, parts=16):
    if cat.table_exists("bench.unpart"):
        return
    t = cat.create_table("bench.unpart", schema=SCHEMA, location=f"file://{wh}/bench/unpart",
                         properties={"thaw.layout": "thaw/1", "write.parquet.row-group-limit": "25000"})
    rng = random.Random(1)  # the values of bench.records, drawn in the same order
    per = n_total // parts
    chunk = 25_000
    for start in range(0, per, chunk):
        tables = [batch(p, start, min(chunk, per - start), 1024, rng) for p in range(parts)]
        mixed = pa.concat_tables(tables).sort_by([("kafka_offset", "ascending"), ("kafka_partition", "ascending")])
        t.append(mixed)


def make_many(files=10_000, per_file=100):
    if cat.table_exists("bench.many"):
        return
    t = cat.create_table("bench.many", schema=SCHEMA, location=f"file://{wh}/bench/many",
                         properties={"thaw.layout": "thaw/1"})
    rng = random.Random(2)
    d = f"{wh}/bench/many/data"
    os.makedirs(d, exist_ok=True)
    paths = []
    for i in range(files):
        p = f"{d}/f{i:05d}.parquet"
        pq.write_table(batch(0, i * per_file, per_file, 64, rng), p, compression="zstd")
        paths.append(f"file://{p}")
    t.add_files(paths)


make_records(int(os.environ.get("BENCH_RECORDS", 2_000_000)))
make_records(int(os.environ.get("BENCH_SMALL_RECORDS", 5_000_000)), name="small", value_size=100, keys=False,
             headers=False)
make_unpart(int(os.environ.get("BENCH_RECORDS", 2_000_000)))
make_many(int(os.environ.get("BENCH_FILES", 10_000)))
print(f"sqlite:///{wh}/catalog.db")
