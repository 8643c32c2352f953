"""Tables whose files overlap in offset range, written with pyarrow and added
to a pyiceberg table (add_files), for the record reader's merge, spill and
duplicate tests (test_reader_merge.py, test_reader_memory.py)."""

from __future__ import annotations

import os
import random

import pyarrow as pa
import pyarrow.parquet as pq

import fixtures

ARROW_SCHEMA = pa.schema([
    pa.field("kafka_partition", pa.int32(), nullable=False),
    pa.field("kafka_offset", pa.int64(), nullable=False),
    pa.field("kafka_timestamp", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("kafka_timestamp_type", pa.int32(), nullable=False),
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("headers", pa.list_(pa.field("element", pa.struct([pa.field("key", pa.string(), nullable=False),
                                                                pa.field("value", pa.binary())]), nullable=False))),
])


def create_unpartitioned(wh: str, name: str):
    os.makedirs(wh, exist_ok=True)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists(name.split(".")[0])
    return fixtures.create(cat, wh, name, fixtures.canonical_schema(), properties=fixtures.thaw_props("t"))


def fixed_values(n: int, size: int, rng: random.Random) -> pa.Array:
    """n incompressible values of `size` bytes, built without a Python object per value."""
    data = rng.randbytes(n * size)
    offsets = pa.array(range(0, n * size + 1, size), pa.int32())
    return pa.Array.from_buffers(pa.binary(), n, [None, offsets.buffers()[1], pa.py_buffer(data)])


def file_table(offsets: list[int], values: pa.Array, ts_ms=lambda o: 1_700_000_000_000 + o) -> pa.Table:
    n = len(offsets)
    return pa.Table.from_arrays([
        pa.array([0] * n, pa.int32()),
        pa.array(offsets, pa.int64()),
        pa.array([ts_ms(o) * 1000 for o in offsets], pa.timestamp("us", tz="UTC")),
        pa.array([0] * n, pa.int32()),
        pa.array([b"k%d" % o for o in offsets], pa.binary()),
        values,
        pa.array([None] * n, ARROW_SCHEMA.field("headers").type),
    ], schema=ARROW_SCHEMA)


def write_file(path: str, t: pa.Table, row_group_rows: int, compression: str = "zstd") -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(t, path, row_group_size=row_group_rows, compression=compression)
    return path


def add_files(wh: str, name: str, paths: list[str]) -> None:
    t = fixtures.open_catalog(wh).load_table(name)
    t.add_files(file_paths=[f"file://{p}" for p in paths])


def build_overlapping(wh: str, name: str, files: int, records: int, value: int, row_group: int,
                      seed: int = 6) -> list[str]:
    """One partition whose `files` files all overlap in offset range: file i
    holds the offsets = i mod `files`; the odd files are shuffled inside.
    Incompressible `value`-byte values, no compression. Returns the paths."""
    rng = random.Random(seed)
    create_unpartitioned(wh, name)
    paths = []
    for i in range(files):
        offs = list(range(i, records, files))
        if i % 2:
            rng.shuffle(offs)
        t = file_table(offs, fixed_values(len(offs), value, rng))
        paths.append(write_file(f"{wh}/files/f{i:02d}.parquet", t, row_group, compression="none"))
        del t
    add_files(wh, name, paths)
    return paths
