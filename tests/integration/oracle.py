"""Independent oracle: the Kafka records an Iceberg table holds, per layout.

Reads a table back with pyiceberg (`table.scan().to_arrow()`: copy-on-write
results, renames and added columns resolved by field id) and maps each row to
a Kafka record

    {"partition": int, "offset": int, "timestamp": int (ms) | None,
     "timestamp_type": "CreateTime" | "LogAppendTime",
     "key": bytes | None, "value": bytes | None | <JSON value>,
     "headers": [(str, bytes | None), ...]}

sorted by (partition, offset). It shares no code with the fixture writers
(fixtures.py) or with Thaw; the column names of each layout are written down
here from /work/shared/reference/layouts.md and docs/layouts.md.

Rules:

* Timestamps are Kafka milliseconds: `timestamp` / `timestamptz` (µs) floor-
  divided by 1000, `timestamp_ns` / `timestamptz_ns` by 10^6, `long` taken as
  ms.
* timestamp_type: from the layout's column where it has one (0 = CreateTime,
  1 = LogAppendTime; null or anything else = CreateTime); else "CreateTime".
* Headers: list<struct<key, value>> in order with duplicates (binary keys are
  decoded as UTF-8); AutoMQ's map gives its entries, sorted here by key since
  a map keeps no order; null or absent = [].
* Kafka Connect and plain tables have no key (None), no headers ([]) and
  a JSON value: see `to_json_value`. Plain tables have partition 0 and offsets
  0..N-1 in scan order (the tests only check offsets are exactly 0..N-1 and
  compare the values as a multiset) and timestamp None (unspecified).
"""

from __future__ import annotations

import base64
import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

KAFKA_FIELDS = ("partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers")

# Column of each Kafka field per layout (dotted = nested struct field).
LAYOUT_COLUMNS: dict[str, dict[str, str | None]] = {
    "thaw": {"partition": "kafka_partition", "offset": "kafka_offset", "timestamp": "kafka_timestamp",
             "timestamp_type": "kafka_timestamp_type", "key": "key", "value": "value", "headers": "headers"},
    "redpanda": {"partition": "redpanda.partition", "offset": "redpanda.offset", "timestamp": "redpanda.timestamp",
                 "timestamp_type": "redpanda.timestamp_type", "key": "redpanda.key", "value": "value",
                 "headers": "redpanda.headers"},
    # pre-25.3 table after Redpanda's migration (reported as layout "redpanda")
    "redpanda_v1": {"partition": "redpanda.partition", "offset": "redpanda.offset",
                    "timestamp": "redpanda.timestamp_v1", "timestamp_type": "redpanda.timestamp_type",
                    "key": "redpanda.key", "value": "value", "headers": "redpanda.headers"},
    "bufstream": {"partition": "kafka.partition", "offset": "kafka.offset", "timestamp": "kafka.event_timestamp",
                  "timestamp_type": None, "key": "key.__raw__", "value": "value.__raw__", "headers": "headers"},
    "aiven": {"partition": "kafka.partition", "offset": "kafka.offset", "timestamp": "kafka.timestamp",
              "timestamp_type": "kafka.batch_timestamp_type", "key": "key_raw", "value": "value_raw",
              "headers": "headers"},
    "automq": {"partition": "_kafka_metadata.partition", "offset": "_kafka_metadata.offset",
               "timestamp": "_kafka_metadata.timestamp", "timestamp_type": None, "key": "_kafka_key",
               "value": "_kafka_value", "headers": "_kafka_header"},
    "kafka-connect-flat": {"partition": "_kafka_metadata_partition", "offset": "_kafka_metadata_offset",
                           "timestamp": "_kafka_metadata_timestamp", "timestamp_type": None, "key": None,
                           "value": None, "headers": None},
    "kafka-connect-nested": {"partition": "_kafka_metadata.partition", "offset": "_kafka_metadata.offset",
                             "timestamp": "_kafka_metadata.timestamp", "timestamp_type": None, "key": None,
                             "value": None, "headers": None},
    "plain": {"partition": None, "offset": None, "timestamp": None, "timestamp_type": None, "key": None,
              "value": None, "headers": None},
}

# Oracle layout -> the layout name `thaw inspect` reports.
REPORTED_LAYOUT = {"redpanda_v1": "redpanda", "kafka-connect-flat": "kafka-connect",
                   "kafka-connect-nested": "kafka-connect"}

JSON_VALUE_LAYOUTS = {"kafka-connect-flat", "kafka-connect-nested", "plain"}


def reported_layout(layout: str) -> str:
    return REPORTED_LAYOUT.get(layout, layout)


# ---------------------------------------------------------------------------
# JSON value mapping


def to_json_value(value: Any, typ: IcebergType) -> Any:
    """Iceberg value -> the JSON value Thaw must emit (as `json.loads` returns it).

    Type mapping for Kafka Connect and plain tables (the record value is the
    row's own columns as one JSON object, Kafka Connect's `_kafka_metadata*`
    columns excluded):

    ============================  ==============================================
    Iceberg type                  JSON
    ============================  ==============================================
    null (any type)               null
    boolean                       true / false
    int, long                     number (integer)
    float, double                 number (shortest round-trip form)
    decimal(P, S)                 string with exactly S fraction digits, "12.30",
                                  "-0.05" (no exponent)
    date                          "YYYY-MM-DD"
    time                          "HH:MM:SS.ffffff"
    timestamp                     "YYYY-MM-DDTHH:MM:SS.ffffff"
    timestamptz                   "YYYY-MM-DDTHH:MM:SS.ffffff+00:00" (UTC)
    string                        string
    uuid                          canonical lower-case "8-4-4-4-12" string
    binary, fixed(L)              base64 string (standard alphabet, padded)
    list                          array
    map with string keys          object (entries in file order)
    map with other keys           array of {"key": ..., "value": ...}
    struct                        object (field names as keys)
    ============================  ==============================================
    """
    if value is None:
        return None
    if isinstance(typ, BooleanType):
        return bool(value)
    if isinstance(typ, (IntegerType, LongType)):
        return int(value)
    if isinstance(typ, (FloatType, DoubleType)):
        return float(value)
    if isinstance(typ, DecimalType):
        d = Decimal(value).quantize(Decimal(1).scaleb(-typ.scale))
        return format(d, "f")
    if isinstance(typ, DateType):
        return value.isoformat()
    if isinstance(typ, TimeType):
        return value.isoformat(timespec="microseconds")
    if isinstance(typ, TimestamptzType):
        return value.astimezone(dt.timezone.utc).isoformat(timespec="microseconds")
    if isinstance(typ, TimestampType):
        return value.replace(tzinfo=None).isoformat(timespec="microseconds")
    if isinstance(typ, (TimestampNanoType, TimestamptzNanoType)):
        raise NotImplementedError("no nanosecond columns in the fixtures")
    if isinstance(typ, StringType):
        return str(value)
    if isinstance(typ, UUIDType):
        if isinstance(value, uuid.UUID):
            return str(value)
        return str(uuid.UUID(bytes=bytes(value)))
    if isinstance(typ, (BinaryType, FixedType)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(typ, ListType):
        return [to_json_value(v, typ.element_type) for v in value]
    if isinstance(typ, MapType):
        entries = list(value.items()) if isinstance(value, dict) else list(value)
        if isinstance(typ.key_type, StringType):
            return {k: to_json_value(v, typ.value_type) for k, v in entries}
        return [{"key": to_json_value(k, typ.key_type), "value": to_json_value(v, typ.value_type)}
                for k, v in entries]
    if isinstance(typ, StructType):
        return {f.name: to_json_value(value.get(f.name), f.field_type) for f in typ.fields}
    raise TypeError(f"unmapped type {typ}")


# ---------------------------------------------------------------------------
# row -> record


def _get(row: dict, path: str) -> Any:
    cur: Any = row
    for part in path.split("."):
        if cur is None:
            return None
        cur = cur.get(part)
    return cur


def _micros(v: dt.datetime) -> int:
    if v.tzinfo is not None:
        return (v - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(microseconds=1)
    return (v - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)


def _to_ms(value: Any, typ: IcebergType) -> int | None:
    if value is None:
        return None
    if isinstance(typ, (TimestampType, TimestamptzType)):
        return _micros(value) // 1000  # floor, also before 1970
    if isinstance(typ, (LongType, IntegerType)):
        return int(value)
    raise TypeError(f"unsupported timestamp column type {typ}")


def _headers(value: Any, typ: IcebergType | None, sort_map: bool) -> list[tuple[str, bytes | None]]:
    if value is None:
        return []
    if isinstance(typ, MapType):
        entries = list(value.items()) if isinstance(value, dict) else list(value)
        out = [(k.decode() if isinstance(k, bytes) else k, v) for k, v in entries]
        if sort_map:
            out.sort(key=lambda kv: (kv[0], kv[1] is None, kv[1] or b""))
        return out
    out = []
    for h in value:
        k = h["key"]
        out.append((k.decode("utf-8") if isinstance(k, bytes) else k, h["value"]))
    return out


def table_rows(table, snapshot_id: int | None = None) -> tuple[list[dict], Any]:
    scan = table.scan(snapshot_id=snapshot_id) if snapshot_id is not None else table.scan()
    # a snapshot is read with its own schema, as pyiceberg (and Java) do
    return scan.to_arrow().to_pylist(), scan.projection()


def expected_records(table, layout: str, columns: dict[str, str] | None = None,
                     snapshot_id: int | None = None) -> list[dict]:
    """The Kafka records of `table` (a pyiceberg Table) read with `layout`
    (a key of LAYOUT_COLUMNS) and per-field column overrides `columns`."""
    rows, schema = table_rows(table, snapshot_id)
    cols = dict(LAYOUT_COLUMNS[layout])
    cols.update(columns or {})

    def typ(path: str | None):
        return None if path is None else schema.find_field(path).field_type

    if layout in JSON_VALUE_LAYOUTS:
        meta_prefix = "_kafka_metadata"
        value_fields = [f for f in schema.fields
                        if layout == "plain" or not f.name.startswith(meta_prefix)]
        value_struct = StructType(*value_fields)
        out = []
        for n, row in enumerate(rows):
            value = to_json_value({f.name: row.get(f.name) for f in value_fields}, value_struct)
            if layout == "plain":
                partition, offset, ts = 0, n, None
            else:
                partition = int(_get(row, cols["partition"]))
                offset = int(_get(row, cols["offset"]))
                ts = _to_ms(_get(row, cols["timestamp"]), typ(cols["timestamp"]))
            out.append({"partition": partition, "offset": offset, "timestamp": ts,
                        "timestamp_type": "CreateTime", "key": None, "value": value, "headers": []})
        return sorted(out, key=lambda r: (r["partition"], r["offset"]))

    ts_type_col = cols.get("timestamp_type")
    headers_type = typ(cols.get("headers"))
    out = []
    for row in rows:
        tt = _get(row, ts_type_col) if ts_type_col else None
        out.append({
            "partition": int(_get(row, cols["partition"])),
            "offset": int(_get(row, cols["offset"])),
            "timestamp": _to_ms(_get(row, cols["timestamp"]), typ(cols["timestamp"])),
            "timestamp_type": "LogAppendTime" if tt == 1 else "CreateTime",
            "key": None if cols.get("key") is None else _opt_bytes(_get(row, cols["key"])),
            "value": None if cols.get("value") is None else _opt_bytes(_get(row, cols["value"])),
            "headers": _headers(_get(row, cols["headers"]), headers_type, sort_map=True)
            if cols.get("headers") else [],
        })
    return sorted(out, key=lambda r: (r["partition"], r["offset"]))


def _opt_bytes(v: Any) -> bytes | None:
    return None if v is None else bytes(v)


# ---------------------------------------------------------------------------
# inspect summary


def gaps(offsets: list[int]) -> list[dict]:
    """Inclusive ranges of offsets missing strictly between min and max."""
    out = []
    s = sorted(set(offsets))
    for a, b in zip(s, s[1:]):
        if b > a + 1:
            out.append({"from": a + 1, "to": b - 1})
    return out


def summary(records: list[dict]) -> list[dict]:
    """The `partitions` array of `thaw inspect --json`, from oracle records."""
    by_p: dict[int, list[dict]] = {}
    for r in records:
        by_p.setdefault(r["partition"], []).append(r)
    out = []
    for p in sorted(by_p):
        rs = by_p[p]
        offs = [r["offset"] for r in rs]
        tss = [r["timestamp"] for r in rs if r["timestamp"] is not None]
        out.append({
            "partition": p, "records": len(rs), "min_offset": min(offs), "max_offset": max(offs),
            "min_timestamp": min(tss) if tss else None, "max_timestamp": max(tss) if tss else None,
            "gaps": gaps(offs),
        })
    return out


def slice_records(records: list[dict], partition: int | None = None, from_offset: int | None = None,
                  limit: int | None = None) -> list[dict]:
    """What `--records [--partition P] [--from-offset N] [--limit K]` returns.

    --from-offset applies to each selected partition; --limit caps the total
    number of lines."""
    out = [r for r in records
           if (partition is None or r["partition"] == partition)
           and (from_offset is None or r["offset"] >= from_offset)]
    return out if limit is None else out[:limit]
