"""Tables whose files overlap in offset range, written with pyarrow and added
to a pyiceberg table (add_files), for the record reader's merge, spill and
duplicate tests (test_reader_merge.py, test_reader_memory.py); and tables
written by pyiceberg whose values decode to far more than the Parquet footers
say -- dictionary-encoded or highly compressible values, in shuffled,
overlapping or plain files -- for test_reader_memory_encodings.py (issue 19)."""

from __future__ import annotations

import hashlib
import json
import os
import random
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.io.pyarrow import schema_to_pyarrow

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


# ---------------------------------------------------------------------------
# Tables whose values decode to far more than the Parquet footer says (issue
# 19, tests/integration/test_reader_memory_encodings.py). Written by pyiceberg
# itself (Table.append: pyarrow's ParquetWriter with pyiceberg's defaults --
# zstd, dictionary encoding on, 2 MB dictionary pages, row groups of up to
# 1,048,576 rows whatever their bytes), one file per append.

BASE_MS = 1_700_000_000_000


def _indices(rng: random.Random, n: int, modulus: int) -> pa.Array:
    """n random integers in [0, modulus) (modulus a power of two <= 65536), built without a Python object
    per value."""
    assert modulus & (modulus - 1) == 0 and modulus <= 1 << 16
    raw = pa.Array.from_buffers(pa.uint16(), n, [None, pa.py_buffer(rng.randbytes(2 * n))])
    return pc.bit_wise_and(raw, pa.scalar(modulus - 1, pa.uint16()))


def canonical_arrow(table, partition: int | list[int], offsets: list[int], keys: pa.Array, values: pa.Array,
                    ts_ms=lambda o: BASE_MS + o) -> pa.Table:
    """Rows of the canonical layout in the pyiceberg table's own Arrow schema (field ids included)."""
    schema = schema_to_pyarrow(table.schema())
    n = len(offsets)
    parts = [partition] * n if isinstance(partition, int) else partition
    return pa.Table.from_arrays([
        pa.array(parts, pa.int32()),
        pa.array(offsets, pa.int64()),
        pa.array([ts_ms(o) * 1000 for o in offsets], pa.timestamp("us", tz="UTC")),
        pa.array([0] * n, pa.int32()),
        keys.cast(pa.binary()),
        values.cast(pa.binary()),
        pa.nulls(n, schema.field("headers").type),
    ], schema=schema)


def create_canonical(wh: str, name: str, partitioned: bool, properties: dict[str, str] | None = None):
    """A canonical-layout table (thaw/1; identity(kafka_partition) when `partitioned`, else unpartitioned)."""
    os.makedirs(wh, exist_ok=True)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists(name.split(".")[0])
    props = dict(fixtures.thaw_props("t"), **(properties or {}))
    return fixtures.create(cat, wh, name, fixtures.canonical_schema(),
                           spec=fixtures.CANONICAL_SPEC if partitioned else None, properties=props)


def data_files(table) -> list[str]:
    """The local paths of the table's data files (current snapshot), in manifest order."""
    return [t.file.file_path.removeprefix("file://") for t in table.scan().plan_files()]


@dataclass
class ParquetFacts:
    """What the footers of a table's data files say, against what the rows are."""
    files: int
    disk_bytes: int            # the data files' sizes
    row_groups: int
    footer_bytes: int          # sum of the row groups' total_byte_size (uncompressed page bytes)
    value_footer_bytes: int    # the value column chunks' total_uncompressed_size
    value_encodings: set[str]  # every encoding of the value column chunks
    value_dictionary: bool     # every value column chunk has a dictionary page
    max_row_group_rows: int


@dataclass
class Written:
    """A table a builder wrote: the pyiceberg table, its records per Kafka partition (offsets 0..n-1 each),
    the bytes of its record values."""
    table: object
    records: dict[int, int]
    value_bytes: int

    @property
    def total(self) -> int:
        return sum(self.records.values())


def parquet_facts(paths: list[str]) -> ParquetFacts:
    disk = rgs = footer = vfooter = max_rows = 0
    encodings: set[str] = set()
    all_dict = True
    for p in paths:
        disk += os.path.getsize(p)
        md = pq.ParquetFile(p).metadata
        vi = next(i for i in range(md.num_columns) if md.schema.column(i).path == "value")
        for r in range(md.num_row_groups):
            rg = md.row_group(r)
            rgs += 1
            footer += rg.total_byte_size
            max_rows = max(max_rows, rg.num_rows)
            cc = rg.column(vi)
            vfooter += cc.total_uncompressed_size
            encodings |= set(cc.encodings)
            all_dict = all_dict and cc.has_dictionary_page
    return ParquetFacts(len(paths), disk, rgs, footer, vfooter, encodings, all_dict, max_rows)


def build_shuffled_dictionary(wh: str, name: str, records: int = 2_000_000, files: int = 40, value: int = 1024,
                              distinct: int = 16, customers: int = 16384, seed: int = 19):
    """One Kafka partition (unpartitioned table, kafka_partition 0) of `records` records of `value`-byte
    values, only `distinct` different ones (incompressible each, so dictionary-encoded: the value column
    chunks hold a 16 KiB dictionary and 4-bit indices). The offsets are shuffled across `files` files (one
    pyiceberg append each): every file holds a random subset of the offsets, every file spans about the whole
    offset range, and inside a file the rows are sorted by the key (a customer id, `customers` of them), not
    by offset -- what a compaction sorted on a business column leaves. About 35 MB on disk for 2 GB of record
    values."""
    rng = random.Random(seed)
    table = create_canonical(wh, name, partitioned=False)
    pool = fixed_values(distinct, value, rng)
    ids = pa.array([b"customer-%06d" % c for c in range(customers)], pa.binary())
    offsets = list(range(records))
    rng.shuffle(offsets)
    bounds = [records * i // files for i in range(files + 1)]
    for i in range(files):
        offs = offsets[bounds[i]:bounds[i + 1]]
        n = len(offs)
        t = canonical_arrow(table, 0, offs, ids.take(_indices(rng, n, customers)),
                            pool.take(_indices(rng, n, distinct)))
        t = t.take(pc.sort_indices(t, sort_keys=[("key", "ascending")]))
        table.append(t)
        del t
    return Written(table, {0: records}, records * value)


WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()
STATUSES = ("created", "paid", "packed", "shipped", "delivered", "returned")


def _json_pools(rng: random.Random, size: int) -> dict[str, pa.Array]:
    """Fragments of order events (as bench/object_store_bench.py's json_value makes whole), `size` of each kind."""
    def customer():
        return json.dumps({"id": rng.randrange(1_000_000),
                           "name": f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()}",
                           "email": f"{rng.choice(WORDS)}.{rng.randrange(10000)}@example.com",
                           "tier": rng.choice(("gold", "silver", "bronze"))}, separators=(",", ":"))

    def shipping():
        return json.dumps({"street": f"{rng.randrange(1, 300)} {rng.choice(WORDS).title()} Street",
                           "city": rng.choice(WORDS).title(), "country": rng.choice(("DE", "FR", "NL", "SE", "IT")),
                           "postcode": f"{rng.randrange(10000, 99999)}"}, separators=(",", ":"))

    def items():
        its = [{"sku": f"SKU-{rng.randrange(100000):05d}", "qty": rng.randrange(1, 9),
                "unit_price": round(rng.uniform(1, 500), 2), "currency": "EUR",
                "warehouse": f"{rng.choice(WORDS)}-{rng.randrange(40)}"} for _ in range(rng.randrange(4, 10))]
        total = round(sum(i["qty"] * i["unit_price"] for i in its), 2)
        return json.dumps(its, separators=(",", ":")) + f',"total":{total}'

    def note():
        return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 16)))

    return {k: pa.array([f() for _ in range(size)], pa.string())
            for k, f in (("customer", customer), ("shipping", shipping), ("items", items), ("note", note))}


def json_order_values(offsets: list[int], pools: dict[str, pa.Array], rng: random.Random) -> pa.Array:
    """One JSON order event per offset (about 0.8-1.2 KiB; unique: the order id and time come from the
    offset), assembled by Arrow from the pools' fragments."""
    n = len(offsets)
    size = len(pools["note"])
    pick = {k: v.take(_indices(rng, n, size)) for k, v in pools.items()}
    status = pa.array(STATUSES + ("paid", "shipped"), pa.string()).take(_indices(rng, n, 8))
    off = pa.array(offsets, pa.int64())
    order_id = pc.cast(pc.add(off, pa.scalar(10_000_000, pa.int64())), pa.string())
    created = pc.strftime(pa.array([BASE_MS + o for o in offsets], pa.timestamp("ms", tz="UTC")),
                          format="%Y-%m-%dT%H:%M:%SZ")
    parts = ['{"order_id":', order_id, ',"status":"', status, '","created_at":"', created, '","customer":',
             pick["customer"], ',"shipping":', pick["shipping"], ',"items":', pick["items"], ',"note":"',
             pick["note"], '"}']
    return pc.binary_join_element_wise(*[pa.scalar(p, pa.string()) if isinstance(p, str) else p for p in parts],
                                       pa.scalar("", pa.string()))


def build_json_overlapping(wh: str, name: str, records: int = 2_000_000, files: int = 8, pool: int = 512,
                           seed: int = 20):
    """One Kafka partition (identity(kafka_partition) table) of `records` JSON order events of about 1 KiB,
    unique values that zstd compresses about 10x (plain-encoded: the dictionary overflows its 2 MB page),
    in `files` files (one pyiceberg append each) that all overlap in offset range: file i holds the offsets
    = i mod `files`, in offset order."""
    rng = random.Random(seed)
    table = create_canonical(wh, name, partitioned=True, properties={"write.target-file-size-bytes": str(1 << 31)})
    pools = _json_pools(rng, pool)
    value_bytes = 0
    for i in range(files):
        offs = list(range(i, records, files))
        keys = pc.cast(pc.add(pa.array(offs, pa.int64()), pa.scalar(10_000_000, pa.int64())), pa.string())
        values = json_order_values(offs, pools, rng)
        value_bytes += pc.sum(pc.binary_length(values)).as_py()
        table.append(canonical_arrow(table, 0, offs, keys, values))
        del values
    return Written(table, {0: records}, value_bytes)


def build_dictionary_partitions(wh: str, name: str, partitions: int = 4, per_partition: int = 500_000,
                                value: int = 1024, distinct: int = 32, seed: int = 21):
    """`partitions` Kafka partitions (identity(kafka_partition)) of `per_partition` records each, in plain
    files: one pyiceberg append per partition, offsets 0.. in order, so one file per partition holding one
    row group (pyiceberg cuts row groups at 1,048,576 rows whatever their bytes: here 0.5 GB of values).
    The values are `value` bytes, `distinct` different ones (dictionary-encoded, so the footer's sizes are
    about 1% of the decoded row group)."""
    rng = random.Random(seed)
    table = create_canonical(wh, name, partitioned=True, properties={"write.target-file-size-bytes": str(1 << 31)})
    pool = fixed_values(distinct, value, rng)
    for p in range(partitions):
        offs = list(range(per_partition))
        keys = pa.array([b"k%d" % (o % 1000) for o in offs], pa.binary())
        t = canonical_arrow(table, p, offs, keys, pool.take(_indices(rng, per_partition, distinct)),
                            ts_ms=lambda o, p=p: BASE_MS + 10 * o + p)
        table.append(t)
        del t
    return Written(table, {p: per_partition for p in range(partitions)}, partitions * per_partition * value)


def distinct_values(n: int, first: int, size: int) -> pa.Array:
    """n values of `size` bytes, all different (a 40-hex-digit id, then a repeated JSON payload): what an
    event topic holds. Compressible about 40x, so zstd files are small, but no two alike, so a pyarrow
    writer's dictionary overflows only after it has taken the first tens of MB."""
    payload = b'{"event":"order","payload":"' + b"x" * (size - 40 - 31) + b'"}'
    return pa.array([hashlib.sha1(b"%d" % (first + i)).hexdigest().encode() + payload for i in range(n)],
                    pa.binary())


def build_distinct_partitions(wh: str, name: str, partitions: int = 8, files: int = 4, per_file: int = 25_000,
                              value: int = 1024):
    """`partitions` Kafka partitions (identity(kafka_partition)) of `files` pyiceberg appends of `per_file`
    records each, offsets in order, every value different (distinct_values): one row group per file whose
    value column has a dictionary page of about 20 MB uncompressed (pyarrow lets the dictionary grow past
    its 1 MiB limit before falling back to plain pages) for 25 MB of values -- what bench.records is, and
    what any pyiceberg table of unique event payloads looks like. A streaming reader of such a row group
    holds that dictionary twice (the decompressed page and the decoded values) for as long as it is open."""
    table = create_canonical(wh, name, partitioned=True)
    for k in range(files):
        for p in range(partitions):
            lo = k * per_file
            offs = list(range(lo, lo + per_file))
            keys = pa.array([b"k%d" % (o % 1000) for o in offs], pa.binary())
            t = canonical_arrow(table, p, offs, keys, distinct_values(per_file, p * 10_000_000 + lo, value),
                                ts_ms=lambda o, p=p: BASE_MS + 10 * o + p)
            table.append(t)
            del t
    return Written(table, {p: files * per_file for p in range(partitions)}, partitions * files * per_file * value)


def dictionary_page_bytes(path: str, leaf: str = "value") -> list[int]:
    """The uncompressed size of each row group's dictionary page of column `leaf` (read from its page
    header: the footer does not say)."""
    md = pq.ParquetFile(path).metadata
    vi = next(i for i in range(md.num_columns) if md.schema.column(i).path == leaf)
    out = []
    with open(path, "rb") as f:
        for r in range(md.num_row_groups):
            cc = md.row_group(r).column(vi)
            if not cc.has_dictionary_page:
                out.append(0)
                continue
            f.seek(cc.dictionary_page_offset)
            out.append(_page_header_sizes(f.read(64))[0])
    return out


def _page_header_sizes(b: bytes) -> tuple[int, int]:
    """(uncompressed, compressed) page size from a Thrift compact PageHeader: fields 1 (type), 2, 3."""
    i, fid, got = 0, 0, {}
    while len(got) < 3:
        fid += b[i] >> 4  # field id delta (all three are i32s)
        got[fid], i = fixtures.zigzag_varint(b, i + 1)
    return got[2], got[3]
