"""Fixture tables for the `thaw inspect` integration tests, written by pyiceberg.

`build_warehouse(dir)` creates a SQLite-backed pyiceberg SqlCatalog named
"default" at `<dir>/catalog.db` (warehouse `file://<dir>`) and writes every
table listed in `TABLES` into it. Each writer also returns the Kafka records it
meant to store ("intended records"), which the integration tests compare with
the independent oracle in `oracle.py` as a self-check of both.

Tables (all in namespace `ns`):

* `canonical_v2` - Thaw's canonical layout, identity(kafka_partition), 3
  partitions, 3 appends (3 files per partition), zstd (pyiceberg default),
  all record edge cases including 1 MiB values; tag `first-append` on the
  first snapshot and a branch `audit` on the second.
* `canonical_snappy_unpartitioned` - canonical, snappy, unpartitioned, two
  Kafka partitions interleaved in the same files.
* `canonical_v3` - canonical, written as v2 and then upgraded to format
  version 3 by rewriting the metadata JSON (pyiceberg 0.12.0 cannot write v3
  metadata: `TableMetadataV3.model_dump_json` raises NotImplementedError,
  apache/iceberg-python#1551). The manifests stay v2 manifests, as they do
  after a real v2 -> v3 upgrade; no v3-only feature (row lineage, deletion
  vectors, new types) is exercised.
* `canonical_cow_delete` - canonical, 2 appends then a copy-on-write delete.
* `canonical_evolved` - canonical + `note` string; `note` renamed to `comment`,
  `extra` long added, then more rows appended.
* `canonical_renamed_offset` - canonical, `kafka_offset` renamed to `off`
  after the first append (read with `--layout thaw --column offset=off`).
* `redpanda`, `redpanda_v1`, `bufstream`, `aiven`, `automq` - foreign layouts
  (see /work/shared/reference/layouts.md).
* `connect_flat`, `connect_nested` - Iceberg Kafka Connect sink with
  KafkaMetadataTransform (flat / nested).
* `plain`, `plain_types` - plain row tables with no Kafka columns.
* `connect_evolving` - Kafka Connect sink (flat) whose schema grows between
  appends (column added, nested struct field added, column renamed), with
  integral doubles and stored topics that are not the table's name.
* `v3_defaults` - plain table upgraded to v3 with columns added with an
  `initial-default` after all its data files were written.

Run as a script (`python fixtures.py DIR`) to build the warehouse and print
timings.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import random
import sqlite3
import sys
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.sorting import SortField, SortOrder
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

NS = "ns"
MiB = 1024 * 1024
# 2026-01-01T00:00:00Z in ms.
BASE_TS_MS = 1_767_225_600_000
EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
EPOCH_NAIVE = dt.datetime(1970, 1, 1)


# --------------------------------------------------------------------------
# catalog helpers


def zigzag_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint at `pos` (Avro's int and long, Thrift compact's i16/i32/i64): (value, position after)."""
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), pos


def catalog_uri(warehouse: str) -> str:
    return f"sqlite:///{os.path.abspath(warehouse)}/catalog.db"


def open_catalog(warehouse: str) -> SqlCatalog:
    warehouse = os.path.abspath(warehouse)
    return SqlCatalog("default", uri=catalog_uri(warehouse), warehouse=f"file://{warehouse}")


def is_uri(warehouse: str) -> bool:
    """True for an object-store warehouse URI (s3://bucket/prefix, ...), False for a local directory."""
    return "://" in warehouse and not warehouse.startswith("file://")


def table_location(warehouse: str, name: str) -> str:
    """Where table `ns.tbl` lives: under a local warehouse directory, or under an
    object-store warehouse URI (s3://bucket/prefix) given instead."""
    ns, tbl = name.split(".")
    if is_uri(warehouse):
        return f"{warehouse.rstrip('/')}/{ns}/{tbl}"
    return f"file://{os.path.abspath(warehouse)}/{ns}/{tbl}"


def create(cat, warehouse: str, name: str, schema: Schema, *, spec: PartitionSpec | None = None,
           sort_order: SortOrder | None = None, properties: dict[str, str] | None = None):
    kwargs: dict[str, Any] = {}
    if spec is not None:
        kwargs["partition_spec"] = spec
    if sort_order is not None:
        kwargs["sort_order"] = sort_order
    props = {"format-version": "2"}
    props.update(properties or {})
    return cat.create_table(name, schema=schema, location=table_location(warehouse, name), properties=props, **kwargs)


def append_rows(table, rows: list[dict]) -> None:
    """Append python dict rows, converted with the table's own Arrow schema (field ids included)."""
    arrow_schema = schema_to_pyarrow(table.schema())
    table.append(pa.Table.from_pylist(rows, schema=arrow_schema))


def us(ts_ms: int) -> int:
    return ts_ms * 1000


def ts_tz(micros: int) -> dt.datetime:
    return EPOCH_UTC + dt.timedelta(microseconds=micros)


def ts_naive(micros: int) -> dt.datetime:
    return EPOCH_NAIVE + dt.timedelta(microseconds=micros)


# --------------------------------------------------------------------------
# Kafka records (the intended content of the Kafka-layout tables)
#
# A source record is a dict with the oracle's keys plus "raw_headers", which
# says how the headers are stored: None (null column) or a list (maybe empty).


def rec(partition: int, offset: int, ts_ms: int, key: bytes | None, value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None = None, ts_type: int = 0) -> dict:
    return {
        "partition": partition,
        "offset": offset,
        "timestamp": ts_ms,
        "timestamp_type": "LogAppendTime" if ts_type == 1 else "CreateTime",
        "key": key,
        "value": value,
        "headers": list(headers or []),
        "raw_headers": headers,
        "ts_type_int": ts_type,
    }


def expected_view(records: list[dict]) -> list[dict]:
    """Source records -> oracle-format records sorted by (partition, offset)."""
    out = [{k: r[k] for k in ("partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers")}
           for r in records]
    return sorted(out, key=lambda r: (r["partition"], r["offset"]))


def json_bytes(obj: dict, field: str = "value", encoding_field: str | None = None) -> bytes | None:
    """The bytes of `obj[field]` in a JSON record line of `thaw inspect --records --format json`
    (kcat -J style, docs/inspect.md): None for null, the text as UTF-8 when the encoding field says
    "utf8", the decoded base64 when it says "base64". The encoding field is `encoding_field`, by
    default f"{field}_encoding" ("key_encoding", "value_encoding"); pass "encoding" for a header
    ({"key", "value", "encoding"}). Any other encoding, a missing one included, fails the test."""
    enc_field = encoding_field if encoding_field is not None else f"{field}_encoding"
    v = obj[field]
    assert enc_field in obj, f"{field} without {enc_field}: {str(obj)[:300]}"
    enc = obj[enc_field]
    if v is None:
        assert enc is None, f"null {field} with {enc_field}={enc!r}: {str(obj)[:300]}"
        return None
    assert isinstance(v, str), f"{field} is not a string: {v!r}"
    if enc == "base64":
        return base64.b64decode(v, validate=True)
    if enc == "utf8":
        return v.encode("utf-8")
    raise AssertionError(f"{enc_field}={enc!r} (want 'utf8' or 'base64'): {str(obj)[:300]}")


NON_ASCII_HEADERS = [("ключ", "значение".encode()), ("键", b"\x00\xff\xfe"), ("clé-é", b"")]


def edge_case_records(partitions: list[int], per_partition: int, *, seed: int, big_values: bool = False,
                      start_offsets: dict[int, int] | None = None, ts_type_1: bool = True) -> list[dict]:
    """Records with every edge case, sorted by (partition, offset).

    Per partition: offsets start at start_offsets[p] (default 0) and skip
    ranges as compaction / transaction markers would; special rows at fixed
    positions: null key, null value (tombstone), empty key, empty value, empty
    headers list, null headers, duplicate header keys, header with null value,
    non-ASCII header keys, LogAppendTime rows, and (if big_values) 1 MiB values
    in the first partition that is not partition 0.
    """
    rng = random.Random(seed)
    start_offsets = start_offsets or {}
    out: list[dict] = []
    big_partition = next((p for p in partitions if p != 0), partitions[0])
    for p in partitions:
        off = start_offsets.get(p, 0)
        for i in range(per_partition):
            # gaps: a single missing offset (transaction marker), a run of 3
            # (compacted away) and a big jump.
            if i == 6:
                off += 1
            if i == 11:
                off += 3
            if i == per_partition - 4:
                off += 1000
            ts = BASE_TS_MS + p * 3_600_000 + i * 1_500 + rng.randrange(0, 999)
            if i == 9:  # CreateTime may go backwards
                ts -= 60_000
            key: bytes | None = f"key-{p}-{i % 5}".encode()
            value: bytes | None = json.dumps({"p": p, "i": i, "r": rng.randrange(10**6)}).encode()
            headers: list | None = [("trace", f"t-{p}-{i}".encode())]
            ts_type = 0
            if i == 1:
                key = None
            elif i == 2:
                value = None
            elif i == 3:
                key = b""
                headers = []
            elif i == 4:
                value = b""
                headers = None
            elif i == 5:
                headers = [("dup", b"first"), ("other", b"x"), ("dup", b"second"), ("dup", b"first")]
            elif i == 7:
                headers = [("nullable", None), ("present", b"1")]
            elif i == 8:
                headers = list(NON_ASCII_HEADERS)
            elif i == 10:
                key = bytes(range(256))  # all byte values
                value = b"\x00\x01\x02\xff" * 8
            elif i == 12:
                key, value, headers = None, None, None
            if ts_type_1 and i in (13, 14, 15):
                ts_type = 1
            if big_values and p == big_partition and i in (16, 17, 18):
                value = rng.randbytes(MiB)  # incompressible 1 MiB
            out.append(rec(p, off, ts, key, value, headers, ts_type))
            off += 1
    return out


def chunks(records: list[dict], n: int) -> list[list[dict]]:
    """Split records into n appends, each append taking a contiguous slice of every partition."""
    by_p: dict[int, list[dict]] = {}
    for r in records:
        by_p.setdefault(r["partition"], []).append(r)
    out: list[list[dict]] = [[] for _ in range(n)]
    for rs in by_p.values():
        size = -(-len(rs) // n)
        for k in range(n):
            out[k].extend(rs[k * size:(k + 1) * size])
    return out


# --------------------------------------------------------------------------
# canonical ("thaw") layout


def canonical_schema(extra: list[NestedField] | None = None) -> Schema:
    """Thaw's canonical schema (docs/layouts.md); `extra` fields go after `headers`.

    pyiceberg re-assigns ids on create_table (breadth first: top-level fields,
    then nested), which gives exactly the documented ids 1..10 when `extra` is
    empty.
    """
    fields = [
        NestedField(1, "kafka_partition", IntegerType(), required=True),
        NestedField(2, "kafka_offset", LongType(), required=True),
        NestedField(3, "kafka_timestamp", TimestamptzType(), required=True),
        NestedField(4, "kafka_timestamp_type", IntegerType(), required=True),
        NestedField(5, "key", BinaryType(), required=False),
        NestedField(6, "value", BinaryType(), required=False),
        NestedField(7, "headers", ListType(8, StructType(
            NestedField(9, "key", StringType(), required=True),
            NestedField(10, "value", BinaryType(), required=False),
        ), element_required=True), required=False),
    ]
    next_id = 100
    for f in extra or []:
        fields.append(NestedField(next_id, f.name, f.field_type, required=f.required))
        next_id += 1
    return Schema(*fields)


CANONICAL_SPEC = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=IdentityTransform(),
                                              name="kafka_partition"))
CANONICAL_SORT = SortOrder(SortField(source_id=1), SortField(source_id=2), order_id=1)


def thaw_props(topic: str) -> dict[str, str]:
    return {"thaw.layout": "thaw/1", "thaw.source.topic": topic}


def canonical_row(r: dict, offset_col: str = "kafka_offset") -> dict:
    return {
        "kafka_partition": r["partition"],
        offset_col: r["offset"],
        "kafka_timestamp": ts_tz(us(r["timestamp"])),
        "kafka_timestamp_type": r["ts_type_int"],
        "key": r["key"],
        "value": r["value"],
        "headers": None if r["raw_headers"] is None else [{"key": k, "value": v} for k, v in r["raw_headers"]],
    }


@dataclass
class Built:
    name: str
    records: list[dict] | None = None           # intended records (oracle format), None for JSON layouts
    json_rows: list[dict] | None = None         # intended rows of JSON-valued tables
    snapshot_ids: list[int] = field(default_factory=list)  # every snapshot, oldest first
    append_records: list[list[dict]] = field(default_factory=list)  # records per append (oracle format)
    notes: str = ""


def snapshots_of(table) -> list[int]:
    return [s.snapshot_id for s in sorted(table.metadata.snapshots, key=lambda s: s.sequence_number or 0)]


def build_canonical_v2(cat, wh) -> Built:
    name = f"{NS}.canonical_v2"
    t = create(cat, wh, name, canonical_schema(), spec=CANONICAL_SPEC, sort_order=CANONICAL_SORT,
               properties=thaw_props("orders"))
    records = edge_case_records([0, 1, 2], 24, seed=1, big_values=True, start_offsets={1: 5, 2: 1_000_000})
    parts = chunks(records, 3)
    built = Built(name)
    for k, part in enumerate(parts):
        if k:
            time.sleep(0.03)  # distinct snapshot timestamps for --as-of
        append_rows(t, [canonical_row(r) for r in part])
        built.append_records.append(expected_view(part))
    t = cat.load_table(name)
    built.snapshot_ids = snapshots_of(t)
    t.manage_snapshots().create_tag(built.snapshot_ids[0], "first-append").commit()
    t = cat.load_table(name)
    t.manage_snapshots().create_branch(built.snapshot_ids[1], "audit").commit()
    built.records = expected_view(records)
    return built


def build_canonical_snappy_unpartitioned(cat, wh) -> Built:
    name = f"{NS}.canonical_snappy_unpartitioned"
    # No thaw.layout property: the layout must be detected from the schema.
    t = create(cat, wh, name, canonical_schema(), properties={"write.parquet.compression-codec": "snappy"})
    records = edge_case_records([0, 1], 16, seed=2, start_offsets={0: 100})
    # interleave the two partitions inside each file
    for part in chunks(records, 2):
        inter = sorted(part, key=lambda r: (r["offset"] % 7, r["partition"]))
        append_rows(t, [canonical_row(r) for r in inter])
    return Built(name, records=expected_view(records), snapshot_ids=snapshots_of(cat.load_table(name)))


def upgrade_to_v3(cat, wh, name: str, edit: Callable[[dict], None] | None = None) -> None:
    """Rewrite the current metadata as format-version 3, like a v2 -> v3 upgrade
    (old snapshots keep no row lineage; next-row-id starts at 0), and point the
    catalog at it. `edit` may change the metadata dict further (v3-only
    schema features pyiceberg cannot write).

    A local warehouse's SQLite catalog gets a compare-and-swap of the metadata
    pointer; any other catalog (REST) has no such primitive for a file written
    by hand, so the table is dropped (files kept) and registered again at the
    new metadata file."""
    t = cat.load_table(name)
    old_loc = t.metadata_location
    with t.io.new_input(old_loc).open() as f:
        meta = json.load(f)
    meta["format-version"] = 3
    meta["next-row-id"] = 0
    if edit is not None:
        edit(meta)
    now = int(time.time() * 1000)
    meta.setdefault("metadata-log", []).append({"timestamp-ms": meta["last-updated-ms"], "metadata-file": old_loc})
    meta["last-updated-ms"] = now
    base = old_loc.rsplit("/", 1)[1]
    seq = int(base.split("-", 1)[0]) + 1
    new_loc = f"{old_loc.rsplit('/', 1)[0]}/{seq:05d}-{uuid.uuid4()}.metadata.json"
    with t.io.new_output(new_loc).create() as f:
        f.write(json.dumps(meta, indent=2).encode())
    if isinstance(cat, SqlCatalog) and not is_uri(wh):
        ns, tbl = name.split(".")
        con = sqlite3.connect(os.path.join(os.path.abspath(wh), "catalog.db"))
        with con:
            n = con.execute(
                "UPDATE iceberg_tables SET metadata_location=?, previous_metadata_location=? "
                "WHERE catalog_name='default' AND table_namespace=? AND table_name=? AND metadata_location=?",
                (new_loc, old_loc, ns, tbl, old_loc)).rowcount
        con.close()
        assert n == 1, f"catalog update of {name} failed"
    else:
        cat.drop_table(name)  # not purged: the files stay
        cat.register_table(name, new_loc)


def build_canonical_v3(cat, wh) -> Built:
    name = f"{NS}.canonical_v3"
    t = create(cat, wh, name, canonical_schema(), spec=CANONICAL_SPEC, sort_order=CANONICAL_SORT,
               properties=thaw_props("v3"))
    records = edge_case_records([0, 1], 16, seed=3)
    for part in chunks(records, 2):
        append_rows(t, [canonical_row(r) for r in part])
    upgrade_to_v3(cat, wh, name)
    t = cat.load_table(name)
    assert t.format_version == 3, t.format_version
    return Built(name, records=expected_view(records), snapshot_ids=snapshots_of(t),
                 notes="v2-written, metadata upgraded to v3")


COW_DELETE_FILTER = "(kafka_partition == 0 and kafka_offset >= 3 and kafka_offset <= 8) or kafka_partition == 2"


def build_canonical_cow_delete(cat, wh) -> Built:
    name = f"{NS}.canonical_cow_delete"
    t = create(cat, wh, name, canonical_schema(), spec=CANONICAL_SPEC, properties=thaw_props("cow"))
    records = edge_case_records([0, 1, 2], 14, seed=4)
    for part in chunks(records, 2):
        append_rows(t, [canonical_row(r) for r in part])
    t = cat.load_table(name)
    t.delete(delete_filter=COW_DELETE_FILTER)
    kept = [r for r in records if not ((r["partition"] == 0 and 3 <= r["offset"] <= 8) or r["partition"] == 2)]
    assert len(kept) < len(records)
    return Built(name, records=expected_view(kept), snapshot_ids=snapshots_of(cat.load_table(name)))


def build_canonical_evolved(cat, wh) -> Built:
    name = f"{NS}.canonical_evolved"
    schema = canonical_schema([NestedField(0, "note", StringType(), required=False)])
    t = create(cat, wh, name, schema, spec=CANONICAL_SPEC)  # layout detected from the schema
    records = edge_case_records([0, 1], 20, seed=5)
    first, second = chunks(records, 2)
    append_rows(t, [dict(canonical_row(r), note=f"n{r['offset']}") for r in first])
    with t.update_schema() as upd:
        upd.rename_column("note", "comment")
        upd.add_column("extra", LongType())
    t = cat.load_table(name)
    append_rows(t, [dict(canonical_row(r), comment=f"c{r['offset']}", extra=r["offset"] * 2) for r in second])
    return Built(name, records=expected_view(records), snapshot_ids=snapshots_of(cat.load_table(name)))


def build_canonical_renamed_offset(cat, wh) -> Built:
    name = f"{NS}.canonical_renamed_offset"
    t = create(cat, wh, name, canonical_schema(), spec=CANONICAL_SPEC, properties=thaw_props("renamed"))
    records = edge_case_records([0, 1], 14, seed=6)
    first, second = chunks(records, 2)
    append_rows(t, [canonical_row(r) for r in first])
    with t.update_schema() as upd:
        upd.rename_column("kafka_offset", "off")
    t = cat.load_table(name)
    append_rows(t, [canonical_row(r, offset_col="off") for r in second])
    return Built(name, records=expected_view(records), snapshot_ids=snapshots_of(cat.load_table(name)))


# --------------------------------------------------------------------------
# foreign Kafka layouts

HEADER_LIST_STR = StructType(NestedField(0, "key", StringType(), required=False),
                             NestedField(0, "value", BinaryType(), required=False))
HEADER_LIST_BIN = StructType(NestedField(0, "key", BinaryType(), required=False),
                             NestedField(0, "value", BinaryType(), required=False))
# Redpanda's record metadata column (25.3 on), and Bufstream's.
REDPANDA_META = StructType(
    NestedField(0, "partition", IntegerType(), required=True),
    NestedField(0, "timestamp", TimestamptzType(), required=True),
    NestedField(0, "offset", LongType(), required=True),
    NestedField(0, "headers", ListType(0, HEADER_LIST_STR, element_required=False), required=False),
    NestedField(0, "key", BinaryType(), required=False),
    NestedField(0, "timestamp_type", IntegerType(), required=False),
)
BUFSTREAM_KAFKA = StructType(
    NestedField(0, "partition", IntegerType(), required=True),
    NestedField(0, "offset", LongType(), required=True),
    NestedField(0, "event_timestamp", TimestampType(), required=False),
    NestedField(0, "ingest_timestamp", TimestampType(), required=False),
    NestedField(0, "batch_start", LongType(), required=False),
)


def fresh(schema_fields: list[NestedField]) -> Schema:
    """Schema with placeholder ids (pyiceberg assigns fresh ids on create)."""
    counter = iter(range(1, 10_000))

    def renumber(t):
        if isinstance(t, StructType):
            return StructType(*[NestedField(next(counter), f.name, renumber(f.field_type), required=f.required)
                                for f in t.fields])
        if isinstance(t, ListType):
            return ListType(next(counter), renumber(t.element_type), element_required=t.element_required)
        if isinstance(t, MapType):
            return MapType(next(counter), renumber(t.key_type), next(counter), renumber(t.value_type),
                           value_required=t.value_required)
        return t

    return Schema(*renumber(StructType(*schema_fields)).fields)


def L(elem, required=False) -> ListType:
    return ListType(0, elem, element_required=required)


def F(name: str, typ, required: bool = False) -> NestedField:
    return NestedField(0, name, typ, required=required)


def hdr_list(r: dict, binary_keys: bool = False, null_when_empty: bool = False) -> list | None:
    h = r["raw_headers"]
    if h is None or (null_when_empty and not h):
        return None
    return [{"key": k.encode() if binary_keys else k, "value": v} for k, v in h]


def build_redpanda(cat, wh) -> Built:
    name = f"{NS}.redpanda"
    schema = fresh([
        F("redpanda", REDPANDA_META, True),
        F("value", BinaryType()),
    ])
    t = create(cat, wh, name, schema)
    # Redpanda partitions by hour(redpanda.timestamp) by default, but pyiceberg
    # needs the extra pyiceberg-core package for time transforms: use
    # identity on the nested partition field (a nested partition source).
    with t.update_spec() as upd:
        upd.add_field("redpanda.partition", IdentityTransform(), "redpanda_partition")
    t = cat.load_table(name)
    records = edge_case_records([0, 1, 2], 16, seed=7, start_offsets={2: 42})
    for part in chunks(records, 2):
        append_rows(t, [{
            "redpanda": {"partition": r["partition"], "timestamp": ts_tz(us(r["timestamp"])), "offset": r["offset"],
                         "headers": hdr_list(r, null_when_empty=True), "key": r["key"],
                         "timestamp_type": r["ts_type_int"]},
            "value": r["value"],
        } for r in part])
    return Built(name, records=expected_view(records), snapshot_ids=snapshots_of(cat.load_table(name)))


def build_redpanda_v1(cat, wh) -> Built:
    """Pre-25.3 Redpanda table after migration: `redpanda.timestamp_v1`
    (timestamp without zone) and binary header keys."""
    name = f"{NS}.redpanda_v1"
    schema = fresh([
        F("redpanda", StructType(
            F("partition", IntegerType(), True),
            F("timestamp_v1", TimestampType(), True),
            F("offset", LongType(), True),
            F("headers", L(HEADER_LIST_BIN)),
            F("key", BinaryType()),
            F("timestamp_type", IntegerType()),
        ), True),
        F("value", BinaryType()),
    ])
    t = create(cat, wh, name, schema)
    records = edge_case_records([0, 1], 14, seed=8)
    append_rows(t, [{
        "redpanda": {"partition": r["partition"], "timestamp_v1": ts_naive(us(r["timestamp"])), "offset": r["offset"],
                     "headers": hdr_list(r, binary_keys=True, null_when_empty=True), "key": r["key"],
                     "timestamp_type": r["ts_type_int"]},
        "value": r["value"],
    } for r in records])
    return Built(name, records=expected_view(records), snapshot_ids=snapshots_of(cat.load_table(name)))


def build_bufstream(cat, wh) -> Built:
    """Bufstream archive. No timestamp-type column: every record is CreateTime
    with timestamp = kafka.event_timestamp (µs, with sub-ms digits, floored)."""
    name = f"{NS}.bufstream"
    raw = StructType(F("__raw__", BinaryType()))
    schema = fresh([
        F("key", raw),
        F("value", raw),
        F("headers", L(HEADER_LIST_STR)),
        F("kafka", BUFSTREAM_KAFKA, True),
    ])
    t = create(cat, wh, name, schema)
    # Real archives are partitioned by day; pyiceberg needs pyiceberg-core for
    # that, so: unpartitioned.
    t = cat.load_table(name)
    records = edge_case_records([0, 1], 16, seed=9, ts_type_1=False)
    rows = []
    for n, r in enumerate(records):
        sub_ms = (n * 137) % 1000  # µs below the ms: must be floored away
        ev = us(r["timestamp"]) + sub_ms
        key = {"__raw__": r["key"]}
        if r["key"] is None and r["offset"] % 2 == 0:
            key = None  # whole struct null: also a null key
        rows.append({
            "key": key,
            "value": {"__raw__": r["value"]},
            "headers": hdr_list(r),
            "kafka": {"partition": r["partition"], "offset": r["offset"], "event_timestamp": ts_naive(ev),
                      "ingest_timestamp": ts_naive(us(BASE_TS_MS) + 3_600_000_000 + n * 1_000_003),
                      "batch_start": r["offset"] - r["offset"] % 4},
        })
    for k in range(2):
        append_rows(t, rows[k::2])  # interleaved partitions and offsets across files
    return Built(name, records=expected_view(records), snapshot_ids=snapshots_of(cat.load_table(name)))


def bufstream_ingest_ms(n: int) -> int:
    return (us(BASE_TS_MS) + 3_600_000_000 + n * 1_000_003) // 1000


AIVEN_KAFKA_FIELDS = [
    ("partition", IntegerType()), ("offset", LongType()), ("timestamp", LongType()),
    ("batch_byte_offset", IntegerType()), ("batch_base_offset", LongType()),
    ("batch_partition_leader_epoch", IntegerType()), ("batch_magic", IntegerType()),
    ("batch_timestamp_type", IntegerType()), ("batch_compression_type", IntegerType()),
    ("batch_max_timestamp", LongType()), ("batch_producer_id", LongType()),
    ("batch_producer_epoch", IntegerType()), ("batch_base_sequence", IntegerType()),
]


def build_aiven(cat, wh) -> Built:
    """Aiven Iceberg Topics: key/value from key_raw/value_raw; `value` is a
    decoded struct (a trap for readers that look for a binary `value`)."""
    name = f"{NS}.aiven"
    schema = fresh([
        F("kafka", StructType(*[F(n, t, True) for n, t in AIVEN_KAFKA_FIELDS]), True),
        F("headers", L(HEADER_LIST_STR)),
        F("key_raw", BinaryType()),
        F("value", StructType(F("order_id", LongType()), F("status", StringType()))),
        F("value_raw", BinaryType()),
    ])
    t = create(cat, wh, name, schema)
    records = edge_case_records([0, 3], 16, seed=10)
    rows = []
    for r in records:
        base = r["offset"] - r["offset"] % 5
        rows.append({
            "kafka": {"partition": r["partition"], "offset": r["offset"], "timestamp": r["timestamp"],
                      "batch_byte_offset": (r["offset"] % 5) * 100, "batch_base_offset": base,
                      "batch_partition_leader_epoch": 3, "batch_magic": 2,
                      "batch_timestamp_type": r["ts_type_int"], "batch_compression_type": 4,
                      "batch_max_timestamp": r["timestamp"] + 10, "batch_producer_id": -1,
                      "batch_producer_epoch": -1, "batch_base_sequence": -1},
            "headers": hdr_list(r),
            "key_raw": r["key"],
            "value": None if r["value"] is None else {"order_id": r["offset"], "status": "NEW"},
            "value_raw": r["value"],
        })
    for part in (rows[: len(rows) // 2], rows[len(rows) // 2:]):
        append_rows(t, part)
    return Built(name, records=expected_view(records), snapshot_ids=snapshots_of(cat.load_table(name)))


def build_automq(cat, wh) -> Built:
    """AutoMQ Table Topic: headers are a map (one value per key, order not
    kept); no timestamp type column, so all records are CreateTime."""
    name = f"{NS}.automq"
    schema = fresh([
        F("_kafka_value", BinaryType()),
        F("_kafka_header", MapType(0, StringType(), 0, BinaryType(), value_required=False)),
        F("_kafka_key", BinaryType()),
        F("_kafka_metadata", StructType(F("partition", IntegerType(), True), F("offset", LongType(), True),
                                        F("timestamp", LongType(), True)), True),
    ])
    t = create(cat, wh, name, schema)
    records = edge_case_records([0, 1], 14, seed=11, ts_type_1=False)
    rows = []
    for r in records:
        h = r["raw_headers"]
        m = None
        if h is not None:
            d: dict[str, bytes | None] = {}
            for k, v in h:
                d[k] = v  # last value wins
            m = list(d.items())
        r["headers"] = sorted(m or [], key=lambda kv: (kv[0], kv[1] is None, kv[1] or b""))
        rows.append({"_kafka_value": r["value"], "_kafka_header": m, "_kafka_key": r["key"],
                     "_kafka_metadata": {"partition": r["partition"], "offset": r["offset"],
                                         "timestamp": r["timestamp"]}})
    append_rows(t, rows)
    return Built(name, records=expected_view(records), snapshot_ids=snapshots_of(cat.load_table(name)))


# --------------------------------------------------------------------------
# Kafka Connect sink + KafkaMetadataTransform, and plain tables


def connect_value_rows(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        rows.append({
            "id": 1000 + i,
            "name": None if i == 3 else ("Zoë Ünicode ✓" if i == 4 else f"name-{i}"),
            "amount": Decimal(rng.randrange(-5000, 500000)).scaleb(-2) if i != 5 else Decimal("12.30"),
            "ts": None if i == 6 else ts_tz(us(BASE_TS_MS + i * 61_001) + 7),
            "tags": None if i == 7 else ([] if i == 8 else [f"t{j}" for j in range(i % 3 + 1)]),
        })
    return rows


CONNECT_VALUE_FIELDS = [F("id", LongType(), True), F("name", StringType()), F("amount", DecimalType(10, 2)),
                        F("ts", TimestamptzType()), F("tags", L(StringType()))]


def connect_meta(n: int) -> list[dict]:
    out = []
    for i in range(n):
        p = i % 2
        off = 10 + (i // 2) + (5 if i >= 14 else 0)  # gap in both partitions
        out.append({"topic": "orders", "partition": p, "offset": off, "timestamp": BASE_TS_MS + i * 999})
    return out


def build_connect_flat(cat, wh) -> Built:
    name = f"{NS}.connect_flat"
    schema = fresh(CONNECT_VALUE_FIELDS + [
        F("_kafka_metadata_topic", StringType()), F("_kafka_metadata_partition", IntegerType()),
        F("_kafka_metadata_offset", LongType()), F("_kafka_metadata_timestamp", LongType())])
    t = create(cat, wh, name, schema)
    n = 20
    vals, meta = connect_value_rows(n, 12), connect_meta(n)
    rows = [dict(v, **{f"_kafka_metadata_{k}": m[k] for k in m}) for v, m in zip(vals, meta)]
    append_rows(t, rows[:10])
    append_rows(t, rows[10:])
    return Built(name, json_rows=rows, snapshot_ids=snapshots_of(cat.load_table(name)))


def build_connect_nested(cat, wh) -> Built:
    name = f"{NS}.connect_nested"
    schema = fresh(CONNECT_VALUE_FIELDS + [F("_kafka_metadata", StructType(
        F("topic", StringType()), F("partition", IntegerType()), F("offset", LongType()),
        F("timestamp", LongType())))])
    t = create(cat, wh, name, schema)
    n = 20
    vals, meta = connect_value_rows(n, 13), connect_meta(n)
    rows = [dict(v, _kafka_metadata=m) for v, m in zip(vals, meta)]
    append_rows(t, rows)
    return Built(name, json_rows=rows, snapshot_ids=snapshots_of(cat.load_table(name)))


# Topic stored by the sink per Kafka partition: not the table's name. One
# topic: a table of several is read one topic at a time (--source-topic;
# test_json_rows.test_connect_table_of_several_topics_reads_one_at_a_time).
EVOLVING_TOPICS = {0: "shop.orders", 1: "shop.orders"}


def build_connect_evolving(cat, wh) -> Built:
    """Kafka Connect sink table (flat KafkaMetadataTransform columns) whose
    schema grows between appends, as a sink with schema evolution leaves it:
    append 1 {id, name, amount double (integral values), address struct<city>};
    add `email` and nested `address.zip`, append 2; rename `name` to
    `full_name`, append 3. `_kafka_metadata_topic` holds EVOLVING_TOPICS."""
    name = f"{NS}.connect_evolving"
    schema = fresh([
        F("id", LongType(), True), F("name", StringType()), F("amount", DoubleType()),
        F("address", StructType(F("city", StringType()))),
        F("_kafka_metadata_topic", StringType()), F("_kafka_metadata_partition", IntegerType()),
        F("_kafka_metadata_offset", LongType()), F("_kafka_metadata_timestamp", LongType())])
    t = create(cat, wh, name, schema)

    def row(i: int, **cols) -> dict:
        p = i % 2
        return dict(cols, id=i, amount=None if i % 7 == 3 else 4541.0 + 1000 * i,
                    _kafka_metadata_topic=EVOLVING_TOPICS[p], _kafka_metadata_partition=p,
                    _kafka_metadata_offset=100 + i // 2, _kafka_metadata_timestamp=BASE_TS_MS + i * 1001)

    rows = [row(i, name=f"n{i}", address=None if i == 3 else {"city": f"c{i}"}) for i in range(6)]
    append_rows(t, rows)
    with t.update_schema() as u:
        u.add_column("email", StringType())
        u.add_column(("address", "zip"), StringType())
    t = cat.load_table(name)
    more = [row(i, name=f"n{i}", email=None if i == 8 else f"u{i}@x", address={"city": f"c{i}", "zip": f"z{i}"})
            for i in range(6, 12)]
    append_rows(t, more)
    with t.update_schema() as u:
        u.rename_column("name", "full_name")
    t = cat.load_table(name)
    last = [row(i, full_name=f"n{i}", email=f"u{i}@x", address={"city": None, "zip": f"z{i}"}) for i in range(12, 18)]
    append_rows(t, last)
    return Built(name, json_rows=rows + more + last, snapshot_ids=snapshots_of(cat.load_table(name)))


# Columns added in v3 with an `initial-default`, after every data file was written.
V3_DEFAULT_FIELDS = [
    {"name": "region", "required": False, "type": "string", "initial-default": "eu"},
    {"name": "qty", "required": False, "type": "long", "initial-default": 7},
    {"name": "ratio", "required": False, "type": "double", "initial-default": 2.0},
    {"name": "note", "required": False, "type": "string"},
]


def build_v3_initial_default(cat, wh) -> Built:
    """Plain table written as v2 by pyiceberg, upgraded to v3 with a new
    current schema adding V3_DEFAULT_FIELDS, then a `replace` snapshot
    written with that schema over the same data files (as a manifest rewrite
    after the schema change leaves it). pyiceberg 0.12.0 cannot write v3
    metadata, so the schema and the snapshot are added to the metadata JSON
    by hand; pyiceberg reads the result, defaults included."""
    name = f"{NS}.v3_defaults"
    t = create(cat, wh, name, fresh([F("id", LongType(), True), F("v", DoubleType())]))
    rows = [{"id": i, "v": i * 1.5} for i in range(6)]
    append_rows(t, rows[:3])
    append_rows(t, rows[3:])

    def add_schema(meta: dict) -> None:
        cur = next(sc for sc in meta["schemas"] if sc["schema-id"] == meta["current-schema-id"])
        new_id = max(sc["schema-id"] for sc in meta["schemas"]) + 1
        fields = list(cur["fields"])
        for k, f in enumerate(V3_DEFAULT_FIELDS):
            fields.append(dict(f, id=meta["last-column-id"] + 1 + k))
        meta["last-column-id"] += len(V3_DEFAULT_FIELDS)
        meta["schemas"].append(dict(cur, fields=fields, **{"schema-id": new_id}))
        meta["current-schema-id"] = new_id
        last = next(sn for sn in meta["snapshots"] if sn["snapshot-id"] == meta["current-snapshot-id"])
        snap_id = last["snapshot-id"] + 1
        seq = meta["last-sequence-number"] + 1
        now = last["timestamp-ms"] + 1000
        meta["snapshots"].append({
            "snapshot-id": snap_id, "parent-snapshot-id": last["snapshot-id"], "sequence-number": seq,
            "timestamp-ms": now, "manifest-list": last["manifest-list"],
            "summary": {"operation": "replace"}, "schema-id": new_id})
        meta["last-sequence-number"] = seq
        meta["current-snapshot-id"] = snap_id
        meta["refs"]["main"]["snapshot-id"] = snap_id
        meta.setdefault("snapshot-log", []).append({"timestamp-ms": now, "snapshot-id": snap_id})

    upgrade_to_v3(cat, wh, name, edit=add_schema)
    defaults = {f["name"]: f.get("initial-default") for f in V3_DEFAULT_FIELDS}
    return Built(name, json_rows=[dict(r, **defaults) for r in rows], snapshot_ids=snapshots_of(cat.load_table(name)))


def build_plain(cat, wh) -> Built:
    name = f"{NS}.plain"
    schema = fresh([
        F("id", LongType(), True), F("name", StringType()), F("price", DecimalType(10, 2)),
        F("created", TimestampType()), F("day", DateType()), F("data", BinaryType()),
        F("attrs", MapType(0, StringType(), 0, StringType(), value_required=False)),
        F("point", StructType(F("x", DoubleType()), F("y", DoubleType()))),
    ])
    t = create(cat, wh, name, schema)
    rows = []
    for i in range(25):
        rows.append({
            "id": i * 7,
            "name": None if i == 2 else f"item \"{i}\"\n\t\\",  # needs JSON escaping
            "price": None if i == 3 else Decimal(i * 137 + (10 if i == 4 else 0)).scaleb(-2),
            "created": ts_naive(us(BASE_TS_MS) + i * 3_600_000_123),
            "day": dt.date(2026, 1, 1) + dt.timedelta(days=i * 40),
            "data": None if i == 5 else bytes([i, 0, 255, i * 3 % 256])[: i % 5],
            "attrs": None if i == 6 else ([] if i == 7 else [("a", str(i)), ("b", None if i == 8 else "x")]),
            "point": None if i == 9 else {"x": i * 0.5, "y": -1.25 if i == 10 else None},
        })
    rows.append(dict(rows[11]))  # an exact duplicate row: values are a multiset
    append_rows(t, rows[:13])
    append_rows(t, rows[13:])
    return Built(name, json_rows=rows, snapshot_ids=snapshots_of(cat.load_table(name)))


def build_plain_types(cat, wh) -> Built:
    """Every other primitive type of the JSON mapping, plus maps with
    non-string keys and lists of structs."""
    name = f"{NS}.plain_types"
    schema = fresh([
        F("b", BooleanType()), F("i", IntegerType()), F("f", FloatType()), F("d", DoubleType()),
        F("t", TimeType()), F("u", UUIDType()), F("fx", FixedType(4)), F("tz", TimestamptzType()),
        F("m", MapType(0, IntegerType(), 0, StringType(), value_required=False)),
        F("ls", L(StructType(F("k", StringType()), F("n", LongType())))),
    ])
    t = create(cat, wh, name, schema)
    rows = []
    for i in range(8):
        rows.append({
            "b": None if i == 0 else (i % 2 == 0),
            "i": -(2 ** 31) if i == 1 else i * 1000,
            "f": [1.5, -0.25, 0.0, 1024.0, None, 3.0, -7.5, 0.125][i],
            "d": [0.1, -1e-300, 1e300, None, 2.5, 1 / 3, -0.0, 123456789.125][i],
            "t": None if i == 2 else dt.time(i, 59, 7, 123 * i),
            "u": None if i == 3 else uuid.UUID(int=(i + 1) * 0x1234567890ABCDEF1234567890ABCDEF % (1 << 128)).bytes,
            "fx": None if i == 4 else bytes([i, 1, 2, 255]),
            "tz": ts_tz(us(BASE_TS_MS) + i * 86_400_000_001),
            "m": None if i == 5 else [(i, "v"), (-1, None)],
            "ls": None if i == 6 else [{"k": "a", "n": i}, {"k": None, "n": None}],
        })
    append_rows(t, rows)
    return Built(name, json_rows=rows, snapshot_ids=snapshots_of(cat.load_table(name)))


def build_ab(cat, wh) -> Built:
    """No Kafka columns at all (for `--layout thaw` error tests)."""
    name = f"{NS}.ab"
    t = create(cat, wh, name, fresh([F("a", IntegerType()), F("b", StringType())]))
    append_rows(t, [{"a": i, "b": str(i)} for i in range(5)])
    return Built(name, json_rows=None, snapshot_ids=snapshots_of(cat.load_table(name)))


BUILDERS: list[Callable] = [
    build_canonical_v2, build_canonical_snappy_unpartitioned, build_canonical_v3, build_canonical_cow_delete,
    build_canonical_evolved, build_canonical_renamed_offset, build_redpanda, build_redpanda_v1, build_bufstream,
    build_aiven, build_automq, build_connect_flat, build_connect_nested, build_plain, build_plain_types, build_ab,
    build_connect_evolving, build_v3_initial_default,
]


def build_warehouse(warehouse: str, verbose: bool = False, *, catalog=None,
                    builders: list[Callable] | None = None) -> dict[str, Built]:
    """Write the fixture tables (all of BUILDERS, or `builders`). By default into
    a local warehouse directory with its SQLite catalog; with `catalog` (e.g. a
    pyiceberg RestCatalog), through that catalog into `warehouse`, an
    object-store URI such as s3://bucket/prefix."""
    if catalog is None:
        os.makedirs(warehouse, exist_ok=True)
    cat = catalog if catalog is not None else open_catalog(warehouse)
    cat.create_namespace_if_not_exists(NS)
    out: dict[str, Built] = {}
    for b in builders if builders is not None else BUILDERS:
        t0 = time.monotonic()
        built = b(cat, warehouse)
        out[built.name] = built
        if verbose:
            print(f"{built.name:40s} {time.monotonic() - t0:6.2f}s", file=sys.stderr)
    return out


def build_small_canonical(warehouse: str, name: str = f"{NS}.small", **props: str):
    """A small canonical table in its own warehouse (for corrupting in broken-input tests)."""
    os.makedirs(warehouse, exist_ok=True)
    cat = open_catalog(warehouse)
    cat.create_namespace_if_not_exists(name.split(".")[0])
    t = create(cat, warehouse, name, canonical_schema(), spec=CANONICAL_SPEC, properties=dict(thaw_props("s"), **props))
    records = edge_case_records([0, 1], 12, seed=99)
    for part in chunks(records, 2):
        append_rows(t, [canonical_row(r) for r in part])
    return cat.load_table(name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: fixtures.py WAREHOUSE_DIR")
    t0 = time.monotonic()
    build_warehouse(sys.argv[1], verbose=True)
    print(f"total {time.monotonic() - t0:.2f}s", file=sys.stderr)


def value_table(wh: str, table: str, count: int):
    """A one-partition Thaw-layout table NS.NAME in warehouse `wh` with
    records 0..count-1 (key kN, value "value N"): what the listener tests of
    serve (TLS, SASL) read."""
    os.makedirs(wh, exist_ok=True)
    cat = open_catalog(wh)
    ns = table.split(".")[0]
    cat.create_namespace_if_not_exists(ns)
    t = create(cat, wh, table, canonical_schema(), spec=CANONICAL_SPEC, properties=thaw_props(table.split(".")[1]))
    append_rows(t, [canonical_row(rec(0, o, BASE_TS_MS + o, f"k{o}".encode(), f"value {o}".encode(), []))
                    for o in range(count)])
    return t
