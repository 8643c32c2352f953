"""`thaw archive --layout row --key-format registry` (docs/schema-registry.md,
"Keys") against a real registry (AxonOps) and confluent-kafka's serializers:

* keys framed by AvroSerializer (a record schema that evolves from v1 to v2
  between two runs) are decoded by the id in each key into `key_decoded`,
  the id kept in `key_schema_id`; the table gains v2's key field by a
  schema-evolution commit with a new field id; pyiceberg and DuckDB read the
  typed key columns;
* the key's bytes always stay in `key`: unframed keys, keys of an unknown
  id and null keys come through untouched (key_decoded null), and replay
  gives every key back byte for byte (Kafka partitions by those bytes), so
  AvroDeserializer reads the replayed keys;
* a primitive Avro key schema ("string": what AvroSerializer registers for
  string keys) decodes into a struct of one field `key`, beside JSON values;
* a key schema that evolves mid-run beside JSON values (no value_schema_id),
  and key and value evolving in the same run;
* Protobuf keys (ProtobufSerializer) beside Avro values;
* an existing table without decoded keys refuses --key-format registry, and
  a table with them refuses a run without it.
"""

from __future__ import annotations

import json

import archive_topics
import iceberg_readers as readers
from archive_cli import archive_args, new_catalog

KEY_V1 = {"type": "record", "name": "OrderKey", "namespace": "shop",
          "fields": [{"name": "region", "type": "string"}, {"name": "order_id", "type": "long"}]}
KEY_V2 = json.loads(json.dumps(KEY_V1))
KEY_V2["fields"].append({"name": "shard", "type": ["null", "int"], "default": None})
VALUE = {"type": "record", "name": "Order", "namespace": "shop",
         "fields": [{"name": "item", "type": "string"}, {"name": "qty", "type": "int"}]}
VALUE_V2 = json.loads(json.dumps(VALUE))
VALUE_V2["fields"].append({"name": "note", "type": ["null", "string"], "default": None})


def _ser(registry, schema, key: bool):
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    s = AvroSerializer(registry.client(), json.dumps(schema) if isinstance(schema, dict) else schema,
                       conf={"auto.register.schemas": True})
    field = MessageField.KEY if key else MessageField.VALUE
    return lambda topic, obj: s(obj, SerializationContext(topic, field))


def _args(schema_registry, *extra: str) -> list[str]:
    return ["--layout", "row", "--key-format", "registry", "--schema-registry", schema_registry.url, *extra]


def _key_v1(i: int) -> dict:
    return {"region": f"r{i % 3}", "order_id": 1000 + i}


def _key_v2(i: int) -> dict:
    return {**_key_v1(i), "shard": None if i % 4 == 0 else i % 7}


def test_avro_keys_decode_evolve_and_replay_byte_exact(kafka, thaw, schema_registry, tmp_path):
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    uri = new_catalog(str(tmp_path / "wh"))
    topic = archive_topics.topic_name("regkeys")
    kafka.create_topic(topic, 2)
    k1, k2, val = _ser(schema_registry, KEY_V1, True), _ser(schema_registry, KEY_V2, True), \
        _ser(schema_registry, VALUE, False)
    first = [(i % 2, k1(topic, _key_v1(i)), val(topic, {"item": f"i{i}", "qty": i})) for i in range(30)]
    odd = [(0, b"plain key", val(topic, {"item": "plain", "qty": -1})),
           (1, b"\x00" + (876543).to_bytes(4, "big") + b"\x02x", val(topic, {"item": "unknown", "qty": -2})),
           (0, None, val(topic, {"item": "nokey", "qty": -3}))]
    archive_topics.produce(kafka, topic, first + odd)
    reg = ["--value-format", "registry"]
    p = thaw(*archive_args(kafka, uri, "ns.keys", topic, *_args(schema_registry, *reg)), timeout=120)
    log = p.stderr.decode(errors="replace")
    assert p.returncode == 0, log[-4000:]
    assert "key columns from schema id" in log, log[-3000:]
    assert log.count("schema id 876543 is unknown to the registry") == 1, log[-3000:]

    # v2 of both: the key and the value evolve in the same run.
    val2 = _ser(schema_registry, VALUE_V2, False)
    second = [(i % 2, k2(topic, _key_v2(i)), val2(topic, {"item": f"i{i}", "qty": i, "note": f"n{i}"}))
              for i in range(30, 50)]
    archive_topics.produce(kafka, topic, second)
    p = thaw(*archive_args(kafka, uri, "ns.keys", topic, *_args(schema_registry, *reg)), timeout=120)
    log = p.stderr.decode(errors="replace")
    assert p.returncode == 0, log[-4000:]
    assert "key columns evolved for schema id" in log, log[-3000:]
    assert "value columns evolved for schema id" in log, log[-3000:]

    c = schema_registry.client()
    versions = c.get_versions(f"{topic}-key")
    ids = [c.get_version(f"{topic}-key", v).schema_id for v in versions]
    assert len(ids) == 2
    tbl = readers.load_table(uri, "ns.keys")
    assert tbl.properties.get("thaw.row.key-schemas") == "registry"
    assert tbl.properties.get("thaw.row.key-format") == "avro"
    assert json.loads(tbl.properties[f"thaw.row.key-avro-schema.{ids[0]}"]) == KEY_V1
    assert json.loads(tbl.properties[f"thaw.row.key-avro-schema.{ids[1]}"]) == KEY_V2
    schema = tbl.schema()
    assert schema.find_field("key_decoded").field_id == 14 and schema.find_field("key_schema_id").field_id == 15
    assert [f.name for f in schema.find_field("key_decoded").field_type.fields] == ["region", "order_id", "shard"]
    first_schema = tbl.schemas()[0]
    assert schema.find_field("key_decoded.shard").field_id > first_schema.highest_field_id, "a new field id"
    assert [f.name for f in schema.find_field("value").field_type.fields] == ["item", "qty", "note"]
    value_ids = {f.field_id for f in schema.find_field("value").field_type.fields}
    key_ids = {f.field_id for f in schema.find_field("key_decoded").field_type.fields}
    assert not value_ids & key_ids

    rows = tbl.scan().to_arrow().to_pylist()
    assert len(rows) == 53
    by_item = {r["value"]["item"]: r for r in rows}
    for i in range(50):
        r = by_item[f"i{i}"]
        want = _key_v2(i) if i >= 30 else {**_key_v1(i), "shard": None}
        assert r["key_decoded"] == want, (i, r["key_decoded"])
        assert r["key_schema_id"] == ids[1 if i >= 30 else 0]
        assert r["key"] == (second[i - 30] if i >= 30 else first[i])[1], "the key bytes stay"
        assert r["value"]["note"] == (f"n{i}" if i >= 30 else None) and r["value_raw"] is None
    for item, key in (("plain", b"plain key"), ("unknown", odd[1][1]), ("nokey", None)):
        r = by_item[item]
        assert r["key"] == key and r["key_decoded"] is None and r["key_schema_id"] is None, item

    con = readers.duckdb_connect()
    try:
        path = readers._local(readers.metadata_location(uri, "ns.keys")).replace("'", "''")
        got = con.execute(f"SELECT key_decoded.order_id, key_decoded.shard, key_schema_id FROM iceberg_scan('{path}') "
                          "WHERE key_decoded IS NOT NULL ORDER BY 1").fetchall()
    finally:
        con.close()
    assert [g[0] for g in got] == [1000 + i for i in range(50)]
    assert [g[1] for g in got] == [None] * 30 + [_key_v2(i)["shard"] for i in range(30, 50)]

    target = archive_topics.topic_name("regkeysreplayed")
    p = thaw("replay", "--catalog", uri, "--table", "ns.keys", "--brokers", kafka.bootstrap, "--topic", target,
             "--create-topic", "--quiet", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    got = kafka.consume_all(target)
    assert sorted((g["partition"], g["key"] or b"", g["value"]) for g in got) == \
        sorted((p_, k or b"", v) for p_, k, v in first + odd + second)
    des = AvroDeserializer(schema_registry.client())
    ctx = SerializationContext(target, MessageField.KEY)
    decoded = sorted(des(g["key"], ctx)["order_id"] for g in got if g["key"] and g["key"][:1] == b"\x00"
                     and int.from_bytes(g["key"][1:5], "big") in ids)
    assert decoded == [1000 + i for i in range(50)]

    # The table holds decoded keys: a run without --key-format registry is refused, and vice versa.
    p = thaw(*archive_args(kafka, uri, "ns.keys", topic, "--layout", "row", *reg, "--schema-registry",
                           schema_registry.url), timeout=60)
    assert p.returncode != 0 and "archive into it with --key-format registry" in p.stderr.decode(errors="replace")


def test_keys_evolve_mid_run_beside_json_values(kafka, thaw, schema_registry, tmp_path):
    """Key schema v1 then v2 in one run, JSON values: the key struct evolves, the table has no value_schema_id."""
    uri = new_catalog(str(tmp_path / "wh"))
    topic = archive_topics.topic_name("regkeysjson")
    kafka.create_topic(topic, 1)
    k1, k2 = _ser(schema_registry, KEY_V1, True), _ser(schema_registry, KEY_V2, True)
    records = [(0, (k1 if i < 10 else k2)(topic, _key_v1(i) if i < 10 else _key_v2(i)),
                json.dumps({"n": i}, separators=(",", ":")).encode()) for i in range(20)]
    archive_topics.produce(kafka, topic, records)
    p = thaw(*archive_args(kafka, uri, "ns.keysjson", topic, *_args(schema_registry)), timeout=120)
    log = p.stderr.decode(errors="replace")
    assert p.returncode == 0, log[-4000:]
    assert "key columns evolved for schema id" in log, log[-3000:]
    tbl = readers.load_table(uri, "ns.keysjson")
    names = [f.name for f in tbl.schema().fields]
    assert "value_schema_id" not in names and names[-2:] == ["key_decoded", "key_schema_id"], names
    rows = sorted(tbl.scan().to_arrow().to_pylist(), key=lambda r: r["value"]["n"])
    assert [r["key_decoded"] for r in rows] == \
        [{**_key_v1(i), "shard": None} if i < 10 else _key_v2(i) for i in range(20)]
    assert [r["key"] for r in rows] == [k for _p, k, _v in records]
    assert all(r["value_raw"] is None for r in rows)


def test_primitive_avro_keys_beside_json_values(kafka, thaw, schema_registry, tmp_path):
    """AvroSerializer's string keys (schema "string"), JSON values: key_decoded is a struct of one field `key`."""
    uri = new_catalog(str(tmp_path / "wh"))
    topic = archive_topics.topic_name("regstrkeys")
    kafka.create_topic(topic, 1)
    ks = _ser(schema_registry, '"string"', True)
    records = [(0, ks(topic, f"user-{i}"), json.dumps({"n": i}, separators=(",", ":")).encode()) for i in range(10)]
    archive_topics.produce(kafka, topic, records)
    p = thaw(*archive_args(kafka, uri, "ns.strkeys", topic, *_args(schema_registry)), timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    tbl = readers.load_table(uri, "ns.strkeys")
    assert [f.name for f in tbl.schema().find_field("key_decoded").field_type.fields] == ["key"]
    rows = sorted(tbl.scan().to_arrow().to_pylist(), key=lambda r: r["value"]["n"])
    assert [r["key_decoded"] for r in rows] == [{"key": f"user-{i}"} for i in range(10)]
    assert [r["key"] for r in rows] == [k for _p, k, _v in records]
    assert [r["value_raw"] for r in rows] == [None] * 10

    # A table archived without decoded keys refuses --key-format registry.
    other = archive_topics.topic_name("regnokeys")
    kafka.create_topic(other, 1)
    archive_topics.produce(kafka, other, records)
    p = thaw(*archive_args(kafka, uri, "ns.nokeys", other, "--layout", "row"), timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    p = thaw(*archive_args(kafka, uri, "ns.nokeys", other, *_args(schema_registry)), timeout=60)
    err = p.stderr.decode(errors="replace")
    assert p.returncode != 0 and "--key-format registry is for a new table" in err, err[-2000:]
    for extra, message in ((["--layout", "thaw", "--key-format", "registry", "--schema-registry",
                             schema_registry.url], "it needs --layout thaw-row"),
                           (["--layout", "row", "--key-format", "registry"], "give --schema-registry URL"),
                           (["--layout", "row", "--key-format", "avro"], "use bytes (the default")):
        p = thaw(*archive_args(kafka, uri, "ns.opts", topic, *extra), timeout=60)
        err = p.stderr.decode(errors="replace")
        assert p.returncode != 0 and message in err, (extra, err[-2000:])


KEY_PROTO = """syntax = "proto3";
package shop;

message Region {
  string name = 1;
}

message PbKey {
  int64 order_id = 1;
  string region = 2;
}
"""


def _pb_key_class():
    """shop.PbKey, the second message of its file (message index [1])."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(name="shop_key.proto", package="shop", syntax="proto3")
    m = fd.message_type.add(name="Region")
    m.field.add(name="name", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    m = fd.message_type.add(name="PbKey")
    m.field.add(name="order_id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    m.field.add(name="region", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.PbKey"))


def test_protobuf_keys_beside_avro_values(kafka, thaw, schema_registry, tmp_path):
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    uri = new_catalog(str(tmp_path / "wh"))
    topic = archive_topics.topic_name("regpbkeys")
    kafka.create_topic(topic, 1)
    cls = _pb_key_class()
    # The .proto text registered first (the registry does not compile the serializer's own rendering).
    schema_registry.client().register_schema(f"{topic}-key", Schema(KEY_PROTO, "PROTOBUF"))
    kser = ProtobufSerializer(cls, schema_registry.client(), conf={
        "auto.register.schemas": False, "use.latest.version": True, "use.deprecated.format": False})
    kctx = SerializationContext(topic, MessageField.KEY)
    val = _ser(schema_registry, VALUE, False)
    records = [(0, kser(cls(order_id=i, region=f"r{i % 2}"), kctx), val(topic, {"item": f"i{i}", "qty": i}))
               for i in range(12)]
    archive_topics.produce(kafka, topic, records)
    p = thaw(*archive_args(kafka, uri, "ns.pbkeys", topic, *_args(schema_registry, "--value-format", "registry")),
             timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    tbl = readers.load_table(uri, "ns.pbkeys")
    assert tbl.properties.get("thaw.row.key-format") == "protobuf"
    assert tbl.properties.get("thaw.row.key-proto-message") == "shop.PbKey"
    rows = sorted(tbl.scan().to_arrow().to_pylist(), key=lambda r: r["value"]["qty"])
    assert [r["key_decoded"] for r in rows] == [{"order_id": i, "region": f"r{i % 2}"} for i in range(12)]
    assert [r["key"] for r in rows] == [k for _p, k, _v in records]

    target = archive_topics.topic_name("regpbkeysreplayed")
    p = thaw("replay", "--catalog", uri, "--table", "ns.pbkeys", "--brokers", kafka.bootstrap, "--topic", target,
             "--create-topic", "--quiet", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    got = kafka.consume_all(target)
    assert [(g["key"], g["value"]) for g in got] == [(k, v) for _p, k, v in records]
    des = ProtobufDeserializer(cls, {"use.deprecated.format": False})
    assert [des(g["key"], SerializationContext(target, MessageField.KEY)).order_id for g in got] == list(range(12))
