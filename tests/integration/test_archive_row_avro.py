"""`thaw archive --layout row --value-schema FILE.avsc --value-schema-id N` on a
real broker (docs/layouts.md, thaw-row with Avro values): Confluent-framed
Avro datums (schema id 42) -- exact ones, one whose array another encoder
wrote as a block with its byte size, one framed with another schema id, one
with a byte after the datum, garbage, a tombstone --

(a) pyiceberg sees the writer schema's fields as typed columns (decimal,
    timestamptz, enum as string, list, optional string) and `value_raw` only
    where the re-encoded struct is not the original bytes;
(b) `thaw inspect` and `thaw replay` give every value back byte for byte.

The datums are encoded by hand per the Avro specification (zigzag varints,
length-prefixed strings, decimals as big-endian two's complement).
"""

from __future__ import annotations

import json

import pytest

import archive_topics
import iceberg_readers as readers
from archive_cli import archive_args, new_catalog

SCHEMA = {
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}
SCHEMA_ID = 42


def _long(n: int) -> bytes:
    z = ((n << 1) ^ (n >> 63)) & (2**64 - 1)
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _str(s: str) -> bytes:
    b = s.encode()
    return _long(len(b)) + b


def _decimal(unscaled: int) -> bytes:
    b = unscaled.to_bytes((unscaled.bit_length() + 8) // 8, "big", signed=True)
    return _long(len(b)) + b


def _order(id_, name, cents, tags, note, status, at_ms, blocks_with_size=False) -> bytes:
    out = _long(id_) + _str(name) + _decimal(cents)
    if tags and blocks_with_size:
        items = b"".join(_str(t) for t in tags)
        out += _long(-len(tags)) + _long(len(items)) + items + _long(0)
    elif tags:
        out += _long(len(tags)) + b"".join(_str(t) for t in tags) + _long(0)
    else:
        out += _long(0)
    out += _long(0) if note is None else _long(1) + _str(note)
    return out + _long(["NEW", "PAID"].index(status)) + _long(at_ms)


def _framed(datum: bytes, schema_id: int = SCHEMA_ID) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + datum


ORDERS = [
    (1, "first", 1234, ["a", "bb"], "gift", "PAID", 1700000000123),
    (2, "", -5, [], None, "NEW", 0),
    (3, "été", 99999999, ["x"], "", "NEW", -1),
]
# (partition, key, value, raw kept?, decoded?)
VALUES = [(i % 2, f"k{o[0]}".encode(), _framed(_order(*o)), False, True) for i, o in enumerate(ORDERS)] + [
    (0, b"blocks", _framed(_order(4, "blocks", 100, ["p", "q"], None, "NEW", 5, blocks_with_size=True)), True, True),
    (1, b"other-id", _framed(_order(5, "other", 1, [], None, "NEW", 5), 43), True, False),
    (0, b"trailing", _framed(_order(6, "trailing", 1, [], None, "NEW", 5)) + b"\x00", True, False),
    (1, b"garbage", b"\xff\xfe not avro", True, False),
    (0, b"tomb", None, False, False),
]


@pytest.fixture(scope="module")
def avro_archived(kafka, thaw, tmp_path_factory):
    wh = tmp_path_factory.mktemp("archive_row_avro")
    uri = new_catalog(str(wh))
    schema_file = wh / "order.avsc"
    schema_file.write_text(json.dumps(SCHEMA))
    topic = archive_topics.topic_name("rowavro")
    kafka.create_topic(topic, 2)
    prod = kafka.producer()
    for p, k, v, *_ in VALUES:
        prod.produce(topic, key=k, value=v, partition=p)
        prod.flush(30)
    p = thaw(*archive_args(kafka, uri, "ns.avro_rows", topic, "--layout", "row", "--value-schema", schema_file,
                           "--value-schema-id", SCHEMA_ID), timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    return uri, "ns.avro_rows", topic, kafka.consume_all(topic), schema_file


def test_typed_columns_and_value_raw_only_where_needed(avro_archived):
    uri, table, _topic, want, _schema_file = avro_archived
    tbl = readers.load_table(uri, table)
    assert tbl.properties.get("thaw.layout") == "thaw-row/1"
    assert tbl.properties.get("thaw.row.value-format") == "avro"
    assert json.loads(tbl.properties["thaw.row.avro-schema"]) == SCHEMA
    assert tbl.properties.get("thaw.row.avro-schema-id") == str(SCHEMA_ID)
    value = tbl.schema().find_field("value")
    assert value.field_id == 12
    types = {f.name: (f.field_id, str(f.field_type), f.required) for f in value.field_type.fields}
    assert types == {"id": (100, "long", True), "name": (101, "string", True), "price": (102, "decimal(9, 2)", True),
                     "tags": (103, "list<string>", True), "note": (105, "string", False),
                     "status": (106, "string", True), "at": (107, "timestamptz", True)}, types

    rows = tbl.scan().to_arrow().to_pylist()
    assert len(rows) == len(want) == len(VALUES)
    by_key = {r["key"]: r for r in rows}
    for p, k, v, raw, decoded in VALUES:
        r = by_key[k]
        assert (r["value_raw"] is not None) == raw, k
        if raw:
            assert r["value_raw"] == v
        assert (r["value"] is not None) == decoded, k
    first = by_key[b"k1"]["value"]
    assert (first["id"], first["name"], str(first["price"]), first["tags"], first["note"], first["status"]) == \
        (1, "first", "12.34", ["a", "bb"], "gift", "PAID")
    assert int(first["at"].timestamp() * 1000) == 1700000000123
    assert str(by_key[b"k2"]["value"]["price"]) == "-0.05"
    assert by_key[b"k3"]["value"]["name"] == "été"
    assert by_key[b"blocks"]["value"]["tags"] == ["p", "q"], "decoded although its bytes are kept"


def test_inspect_and_replay_give_the_original_bytes(kafka, thaw, avro_archived):
    uri, table, topic, want, _schema_file = avro_archived
    readers.assert_same_records(readers.read_thaw(thaw, uri, table), want, "thaw inspect of the Avro row table")
    target = archive_topics.topic_name("rowavroreplayed")
    p = thaw("replay", "--catalog", uri, "--table", table, "--brokers", kafka.bootstrap, "--topic", target,
             "--create-topic", "--quiet", "--json", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    got = kafka.consume_all(target)
    assert sorted((g["key"], g["value"]) for g in got) == sorted((w["key"], w["value"]) for w in want)


def test_another_writer_schema_is_refused(kafka, thaw, avro_archived):
    uri, table, topic, _want, schema_file = avro_archived
    other = schema_file.parent / "other.avsc"
    other.write_text(json.dumps({**SCHEMA, "fields": SCHEMA["fields"][:2]}))
    p = thaw(*archive_args(kafka, uri, table, topic, "--layout", "row", "--value-schema", other,
                           "--value-schema-id", SCHEMA_ID), timeout=60)
    assert p.returncode != 0
    assert "another writer schema" in p.stderr.decode(errors="replace"), p.stderr
    # Without --value-schema the table's own schema is used: nothing new to archive.
    p = thaw(*archive_args(kafka, uri, table, topic, "--layout", "row"), timeout=60)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
