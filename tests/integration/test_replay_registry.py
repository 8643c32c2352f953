"""`thaw replay --value-format avro --schema-registry URL` (issue 23,
docs/schema-registry.md): rows of tables whose values are decoded columns
(the Iceberg Kafka Connect sink, Aiven's Iceberg topics without value_raw)
re-encoded as Avro and framed with the id the registry gives, so that
confluent-kafka's AvroDeserializer reads every record as the row holds it.

* Connect-sink rows (decimal, timestamptz, list, optional columns) with a
  schema derived from the Iceberg columns, registered under TOPIC-value;
* an Aiven table whose subject already has a matching schema (another
  record name): that schema and its id are used, nothing new registered;
* Redpanda's schema modes (the record's fields as top-level columns beside
  the `redpanda` struct): a schema derived from those columns only;
* Bufstream's decoded struct: its `__raw__`-style internals left out;
* a thaw-row table archived through the registry replays its own ids,
  byte for byte, whatever --value-format says;
* --dry-run registers nothing (looks the derived schema up only);
* refused before anything is produced: use.latest.version with a schema
  the columns cannot take (naming the column), auto.register.schemas=false
  with no such schema, --value-format avro without a registry.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from pyiceberg.types import IntegerType, LongType, StringType, StructType

import archive_topics
import fixtures
from fixtures import F


def _deserialize(schema_registry, topic: str, value: bytes):
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    return AvroDeserializer(schema_registry.client())(value, SerializationContext(topic, MessageField.VALUE))


def _replay(thaw, uri: str, table: str, kafka, topic: str, *extra: str):
    return thaw("replay", "--catalog", uri, "--table", table, "--brokers", kafka.bootstrap, "--topic", topic,
                "--create-topic", *extra, timeout=120)


def _schema_id(value: bytes) -> int:
    assert value[0] == 0, value[:8]
    return int.from_bytes(value[1:5], "big")


def test_dry_run_registers_nothing(kafka, thaw, warehouse, schema_registry):
    """--dry-run looks the derived schema up but never registers it (a user
    checking the plan must not change the registry); the real run then does."""
    from confluent_kafka.schema_registry.error import SchemaRegistryError
    topic = archive_topics.topic_name("regdry")
    p = thaw("replay", "--catalog", warehouse.uri, "--table", "ns.connect_flat", "--brokers", kafka.bootstrap,
             "--topic", topic, "--value-format", "avro", "--schema-registry", schema_registry.url, "--dry-run",
             timeout=120)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err[-3000:]
    assert f"a replay would register the schema derived from the table under subject {topic}-value" in err, err
    with pytest.raises(SchemaRegistryError) as missing:
        schema_registry.client().get_latest_version(f"{topic}-value")
    assert missing.value.http_status_code == 404
    p = _replay(thaw, warehouse.uri, "ns.connect_flat", kafka, topic, "--value-format", "avro",
                "--schema-registry", schema_registry.url)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    registered = schema_registry.client().get_latest_version(f"{topic}-value")
    # A second dry run finds it: no "would register" line.
    p = thaw("replay", "--catalog", warehouse.uri, "--table", "ns.connect_flat", "--brokers", kafka.bootstrap,
             "--topic", topic, "--value-format", "avro", "--schema-registry", schema_registry.url, "--dry-run",
             timeout=120)
    assert p.returncode == 0 and "would register" not in p.stderr.decode(errors="replace")
    assert schema_registry.client().get_latest_version(f"{topic}-value").version == registered.version


def test_connect_sink_rows_as_avro(kafka, thaw, warehouse, schema_registry):
    topic = archive_topics.topic_name("regconnect")
    p = _replay(thaw, warehouse.uri, "ns.connect_flat", kafka, topic, "--value-format", "avro",
                "--schema-registry", schema_registry.url)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    got = kafka.consume_all(topic)
    rows = warehouse.built["ns.connect_flat"].json_rows
    assert len(got) == len(rows)
    latest = schema_registry.client().get_latest_version(f"{topic}-value")
    schema = json.loads(latest.schema.schema_str)
    # The sink's metadata columns are the records' coordinates, not their values.
    assert [f["name"] for f in schema["fields"]] == ["id", "name", "amount", "ts", "tags"]
    by_id = {}
    for g in got:
        assert _schema_id(g["value"]) == latest.schema_id
        d = _deserialize(schema_registry, topic, g["value"])
        by_id[d["id"]] = d
    for r in rows:
        d = by_id[r["id"]]
        assert d["name"] == r["name"] and d["tags"] == r["tags"], r
        assert d["amount"] == r["amount"] and isinstance(d["amount"], Decimal)
        assert d["ts"] == r["ts"], (d["ts"], r["ts"])


@pytest.fixture(scope="module")
def aiven_decoded(tmp_path_factory):
    """Aiven's layout with decoded values and no value_raw (every value parsed)."""
    wh = str(tmp_path_factory.mktemp("aiven_decoded"))
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists(fixtures.NS)
    schema = fixtures.fresh([
        F("kafka", StructType(*[F(n, t, True) for n, t in fixtures.AIVEN_KAFKA_FIELDS]), True),
        F("key_raw", fixtures.BinaryType()),
        F("value", StructType(F("order_id", LongType(), True), F("status", StringType()),
                              F("lines", StructType(F("count", IntegerType(), True), F("sku", StringType()))))),
        F("value_raw", fixtures.BinaryType()),
    ])
    t = fixtures.create(cat, wh, f"{fixtures.NS}.aiven_decoded", schema)
    rows, values = [], []
    for i in range(30):
        v = {"order_id": 500 + i, "status": None if i % 7 == 0 else ("PAID" if i % 2 else "NEW"),
             "lines": None if i % 5 == 0 else {"count": i, "sku": f"sku-{i}"}}
        values.append(v)
        rows.append({"kafka": {n: (i if n == "offset" else i % 2 if n == "partition" else 0)
                               for n, _ in fixtures.AIVEN_KAFKA_FIELDS},
                     "key_raw": f"k{i}".encode(), "value": v, "value_raw": None})
    fixtures.append_rows(t, rows)
    return fixtures.catalog_uri(wh), f"{fixtures.NS}.aiven_decoded", values


def test_a_matching_latest_schema_is_used(kafka, thaw, schema_registry, aiven_decoded):
    uri, table, values = aiven_decoded
    topic = archive_topics.topic_name("regaiven")
    from confluent_kafka.schema_registry import Schema
    mine = {"type": "record", "name": "Order", "namespace": "shop.orders", "fields": [
        {"name": "order_id", "type": "long"},
        {"name": "status", "type": ["null", "string"], "default": None},
        {"name": "lines", "type": ["null", {"type": "record", "name": "Lines", "fields": [
            {"name": "count", "type": "int"}, {"name": "sku", "type": ["null", "string"], "default": None}]}],
         "default": None}]}
    client = schema_registry.client()
    sid = client.register_schema(f"{topic}-value", Schema(json.dumps(mine), "AVRO"))
    p = _replay(thaw, uri, table, kafka, topic, "--value-format", "avro", "--schema-registry", schema_registry.url)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    assert f"latest schema of subject {topic}-value (id {sid}" in p.stderr.decode(errors="replace")
    assert client.get_versions(f"{topic}-value") == [1], "nothing new registered"
    got = kafka.consume_all(topic)
    assert len(got) == len(values)
    decoded = sorted((_deserialize(schema_registry, topic, g["value"]) for g in got), key=lambda d: d["order_id"])
    assert all(_schema_id(g["value"]) == sid for g in got)
    assert decoded == values


def test_a_latest_schema_with_a_reference(kafka, thaw, schema_registry, aiven_decoded):
    """The subject's latest Avro schema takes its Lines record from another subject (a schema reference):
    use.latest.version encodes with it (the reference fetched by subject and version), and AvroDeserializer, which
    resolves the reference itself, reads every record as the row holds it."""
    uri, table, values = aiven_decoded
    topic = archive_topics.topic_name("regaivenref")
    from confluent_kafka.schema_registry import Schema, SchemaReference
    lines = {"type": "record", "name": "Lines", "namespace": "shop.parts", "fields": [
        {"name": "count", "type": "int"}, {"name": "sku", "type": ["null", "string"], "default": None}]}
    mine = {"type": "record", "name": "Order", "namespace": "shop.orders", "fields": [
        {"name": "order_id", "type": "long"},
        {"name": "status", "type": ["null", "string"], "default": None},
        {"name": "lines", "type": ["null", "shop.parts.Lines"], "default": None}]}
    client = schema_registry.client()
    client.register_schema(f"{topic}-lines", Schema(json.dumps(lines), "AVRO"))
    sid = client.register_schema(f"{topic}-value", Schema(
        json.dumps(mine), "AVRO", [SchemaReference("shop.parts.Lines", f"{topic}-lines", 1)]))
    p = _replay(thaw, uri, table, kafka, topic, "--value-format", "avro", "--schema-registry", schema_registry.url,
                "--schema-registry-property", "use.latest.version=true")
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    got = kafka.consume_all(topic)
    assert len(got) == len(values) and all(_schema_id(g["value"]) == sid for g in got)
    decoded = sorted((_deserialize(schema_registry, topic, g["value"]) for g in got), key=lambda d: d["order_id"])
    assert decoded == values


def test_uuid_columns_as_avro_uuid_strings(kafka, thaw, schema_registry, tmp_path):
    """A plain row table with a uuid column (written by pyiceberg as 16 bytes): the derived Avro schema gives it as
    a string with logicalType uuid, Thaw writes the canonical text, and AvroDeserializer reads each row's uuid."""
    import uuid as uuidlib
    from pyiceberg.types import UUIDType
    wh = str(tmp_path)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists(fixtures.NS)
    t = fixtures.create(cat, wh, f"{fixtures.NS}.uuids", fixtures.fresh(
        [F("id", LongType(), True), F("ref", UUIDType()), F("note", StringType())]))
    ids = [uuidlib.UUID(int=(i * 0x9E3779B97F4A7C15) % (1 << 128)) for i in range(12)]
    rows = [{"id": i, "ref": None if i % 5 == 0 else ids[i].bytes, "note": f"n{i}"} for i in range(12)]
    fixtures.append_rows(t, rows)
    topic = archive_topics.topic_name("reguuid")
    p = _replay(thaw, fixtures.catalog_uri(wh), f"{fixtures.NS}.uuids", kafka, topic, "--layout", "plain",
                "--value-format", "avro", "--schema-registry", schema_registry.url)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    schema = json.loads(schema_registry.client().get_latest_version(f"{topic}-value").schema.schema_str)
    assert schema["fields"][1]["type"] == ["null", {"type": "string", "logicalType": "uuid"}], schema
    got = sorted((_deserialize(schema_registry, topic, g["value"]) for g in kafka.consume_all(topic)),
                 key=lambda d: d["id"])
    assert len(got) == 12
    for i, d in enumerate(got):
        assert d["id"] == i and d["note"] == f"n{i}"
        assert (None if d["ref"] is None else str(d["ref"])) == (None if i % 5 == 0 else str(ids[i])), d


def test_refused_before_anything_is_produced(kafka, thaw, schema_registry, aiven_decoded):
    uri, table, _values = aiven_decoded
    client = schema_registry.client()
    from confluent_kafka.schema_registry import Schema

    # use.latest.version with a schema whose order_id is a string.
    topic = archive_topics.topic_name("reglatest")
    other = {"type": "record", "name": "Order", "fields": [{"name": "order_id", "type": "string"}]}
    client.register_schema(f"{topic}-value", Schema(json.dumps(other), "AVRO"))
    p = _replay(thaw, uri, table, kafka, topic, "--value-format", "avro", "--schema-registry", schema_registry.url,
                "--schema-registry-property", "use.latest.version=true")
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 2, err[-2000:]  # the table and the schema chosen do not go together
    assert "field 'order_id' is long in the table but string in the writer schema" in err, err[-2000:]
    assert topic not in kafka.admin().list_topics(timeout=30).topics, "refused before the topic was made"

    # use.latest.version with a schema narrower than a column (int where the table holds long): values may not
    # fit, so refused up front rather than on the first that does not.
    topic = archive_topics.topic_name("regnarrow")
    narrow = {"type": "record", "name": "Order", "fields": [{"name": "order_id", "type": "int"}]}
    client.register_schema(f"{topic}-value", Schema(json.dumps(narrow), "AVRO"))
    p = _replay(thaw, uri, table, kafka, topic, "--value-format", "avro", "--schema-registry", schema_registry.url,
                "--schema-registry-property", "use.latest.version=true")
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 2, err[-2000:]
    assert "field 'order_id' is long in the table but int in the schema: the table's values may not fit" in err, \
        err[-2000:]
    assert topic not in kafka.admin().list_topics(timeout=30).topics

    # auto.register.schemas=false and no schema under the subject.
    topic = archive_topics.topic_name("regnoauto")
    p = _replay(thaw, uri, table, kafka, topic, "--value-format", "avro", "--schema-registry", schema_registry.url,
                "--schema-registry-property", "auto.register.schemas=false")
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 1 and f"subject '{topic}-value' does not have the schema" in err, err[-2000:]
    assert topic not in kafka.admin().list_topics(timeout=30).topics

    # No registry, a registry without a format, an unknown strategy.
    for extra, message in [
        (["--value-format", "avro"], "give --schema-registry URL"),
        (["--schema-registry", schema_registry.url], "--schema-registry is for --value-format avro"),
        (["--value-format", "avro", "--schema-registry", schema_registry.url, "--schema-registry-property",
          "value.subject.name.strategy=Nope"], "use TopicNameStrategy"),
    ]:
        p = _replay(thaw, uri, table, kafka, archive_topics.topic_name("regbad"), *extra)
        err = p.stderr.decode(errors="replace")
        assert p.returncode != 0 and message in err, (extra, err[-2000:])


def test_record_name_strategy(kafka, thaw, schema_registry, aiven_decoded):
    uri, table, values = aiven_decoded
    topic = archive_topics.topic_name("regrecord")
    p = _replay(thaw, uri, table, kafka, topic, "--value-format", "avro", "--schema-registry", schema_registry.url,
                "--schema-registry-property", "value.subject.name.strategy=TopicRecordNameStrategy")
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    subject = f"{topic}-thaw.{topic.replace('-', '_')}"
    assert subject in schema_registry.client().get_subjects()
    got = kafka.consume_all(topic)
    decoded = sorted((_deserialize(schema_registry, topic, g["value"]) for g in got), key=lambda d: d["order_id"])
    assert decoded == values


def test_redpanda_schema_mode_rows_as_avro(kafka, thaw, schema_registry, tmp_path):
    """Redpanda's schema modes (value_schema_id_prefix, value_schema_latest) write the record's fields as top-level
    columns beside the `redpanda` struct, with no value bytes: replayed with --value-format avro, a schema is derived
    from those columns (not from `redpanda`), and the AvroDeserializer's records equal the rows, key and partition
    kept."""
    from pyiceberg.types import DoubleType, ListType
    wh = str(tmp_path)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists(fixtures.NS)
    schema = fixtures.fresh([
        F("redpanda", fixtures.REDPANDA_META, True),
        F("order_id", LongType(), True),
        F("status", StringType()),
        F("amount", DoubleType()),
        F("tags", ListType(0, StringType(), element_required=False)),
    ])
    name = f"{fixtures.NS}.redpanda_schema_mode"
    t = fixtures.create(cat, wh, name, schema)
    rows = []
    for i in range(24):
        rows.append({
            "redpanda": {"partition": i % 2, "timestamp": fixtures.ts_tz(fixtures.us(1_700_000_000_000 + i)),
                         "offset": i // 2, "headers": None, "key": f"k{i}".encode(), "timestamp_type": 0},
            "order_id": 900 + i, "status": None if i % 5 == 0 else f"s{i % 3}", "amount": i / 8,
            "tags": None if i % 4 == 0 else [f"t{k}" for k in range(i % 3)],
        })
    fixtures.append_rows(t, rows)
    uri = fixtures.catalog_uri(wh)
    topic = archive_topics.topic_name("regredpanda")
    p = _replay(thaw, uri, name, kafka, topic, "--value-format", "avro", "--schema-registry", schema_registry.url)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    latest = schema_registry.client().get_latest_version(f"{topic}-value")
    assert [f["name"] for f in json.loads(latest.schema.schema_str)["fields"]] == ["order_id", "status", "amount",
                                                                                   "tags"]
    got = kafka.consume_all(topic)
    assert len(got) == len(rows)
    want = {(r["redpanda"]["partition"], r["redpanda"]["offset"]): r for r in rows}
    for g in got:
        assert _schema_id(g["value"]) == latest.schema_id
        link = {k: v for k, v in g["headers"] if k.startswith("thaw.source.")}
        r = want[(int(link["thaw.source.partition"]), int(link["thaw.source.offset"]))]
        assert g["partition"] == r["redpanda"]["partition"]
        assert g["key"] == r["redpanda"]["key"]
        d = _deserialize(schema_registry, topic, g["value"])
        assert d == {k: r[k] for k in ("order_id", "status", "amount", "tags")}, (d, r)


def test_bufstream_decoded_rows_as_avro(kafka, thaw, schema_registry, tmp_path):
    """Bufstream with a schema (Protobuf) keeps the decoded message in the `value` struct beside its own `__raw__`,
    `__prefix__` and `__err__` fields, with `__raw__` null: replayed with --value-format avro, the derived schema
    has the message's fields only, and the AvroDeserializer's records equal them."""
    from pyiceberg.types import BinaryType, ListType
    wh = str(tmp_path)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists(fixtures.NS)
    raw = StructType(F("__raw__", BinaryType()))
    schema = fixtures.fresh([
        F("key", raw),
        F("value", StructType(F("__raw__", BinaryType()), F("__prefix__", BinaryType()), F("__err__", StringType()),
                              F("order_id", LongType()), F("item", StringType()),
                              F("counts", ListType(0, LongType(), element_required=False)))),
        F("headers", fixtures.L(fixtures.HEADER_LIST_STR)),
        F("kafka", fixtures.BUFSTREAM_KAFKA, True),
    ])
    name = f"{fixtures.NS}.bufstream_decoded"
    t = fixtures.create(cat, wh, name, schema)
    rows = []
    for i in range(20):
        ts = fixtures.ts_naive(fixtures.us(1_700_000_000_000 + i))
        rows.append({
            "key": {"__raw__": f"k{i}".encode()},
            "value": {"__raw__": None, "__prefix__": b"\x00\x00\x00\x00\x07\x00", "__err__": None,
                      "order_id": 70 + i, "item": None if i % 6 == 0 else f"item-{i}",
                      "counts": [i, i + 1] if i % 2 else []},
            "headers": None,
            "kafka": {"partition": i % 2, "offset": i // 2, "event_timestamp": ts, "ingest_timestamp": ts,
                      "batch_start": 0},
        })
    fixtures.append_rows(t, rows)
    topic = archive_topics.topic_name("regbufstream")
    p = _replay(thaw, fixtures.catalog_uri(wh), name, kafka, topic, "--value-format", "avro",
                "--schema-registry", schema_registry.url)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    latest = schema_registry.client().get_latest_version(f"{topic}-value")
    assert [f["name"] for f in json.loads(latest.schema.schema_str)["fields"]] == ["order_id", "item", "counts"]
    got = kafka.consume_all(topic)
    assert len(got) == len(rows)
    want = {r["key"]["__raw__"]: r["value"] for r in rows}
    for g in got:
        v = want[g["key"]]
        assert _deserialize(schema_registry, topic, g["value"]) == {k: v[k] for k in ("order_id", "item", "counts")}


def test_json_schema_framing_of_decoded_rows(kafka, thaw, schema_registry, aiven_decoded):
    """--value-format json-schema: the rows stay the JSON Thaw writes, framed with the id of a JSON Schema derived
    from the columns and registered under TOPIC-value; confluent-kafka's JSONDeserializer (which validates each
    value against the schema of its id) reads every record as the row holds it. A second replay into the same topic
    finds that schema: nothing new is registered."""
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    uri, table, values = aiven_decoded
    topic = archive_topics.topic_name("regjsonframe")
    p = _replay(thaw, uri, table, kafka, topic, "--value-format", "json-schema", "--schema-registry",
                schema_registry.url)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    client = schema_registry.client()
    latest = client.get_latest_version(f"{topic}-value")
    assert latest.schema.schema_type == "JSON"
    derived = json.loads(latest.schema.schema_str)
    assert list(derived["properties"]) == ["order_id", "status", "lines"], derived
    got = kafka.consume_all(topic)
    assert len(got) == len(values)
    des = JSONDeserializer(None, schema_registry_client=client)
    decoded = []
    for g in got:
        assert _schema_id(g["value"]) == latest.schema_id
        decoded.append(des(g["value"], SerializationContext(topic, MessageField.VALUE)))
    assert sorted(decoded, key=lambda d: d["order_id"]) == values
    p = thaw("replay", "--catalog", uri, "--table", table, "--brokers", kafka.bootstrap, "--topic", topic,
             "--value-format", "json-schema", "--schema-registry", schema_registry.url, "--force", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    assert client.get_versions(f"{topic}-value") == [latest.version], "nothing new registered"
    # Without a registry the format is refused before anything is produced.
    p = _replay(thaw, uri, table, kafka, archive_topics.topic_name("regjsonnoreg"), "--value-format", "json-schema")
    assert p.returncode == 2 and b"give --schema-registry URL" in p.stderr, p.stderr.decode(errors="replace")


def aiven_proto_class(package: str, name: str, preceding: tuple = ()):
    """The message class (built at run time, no protoc) of the .proto Thaw derives from aiven_decoded's value
    struct: every scalar `optional`, the nested struct a message, fields numbered in column order. `preceding`:
    names of other top-level messages declared before it (each with one int64 field), as a user's file may."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name=f"{package}_{name}.proto", package=package, syntax="proto3")
    for other in preceding:
        fdp.message_type.add(name=other).field.add(name="x", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    m = fdp.message_type.add(name=name)

    def optional(msg, field, number, kind):
        msg.oneof_decl.add(name=f"_{field}")
        msg.field.add(name=field, number=number, type=kind, label=F.LABEL_OPTIONAL,
                      oneof_index=len(msg.oneof_decl) - 1, proto3_optional=True)
    lines = m.nested_type.add(name="Lines")
    optional(lines, "count", 1, F.TYPE_INT32)
    optional(lines, "sku", 2, F.TYPE_STRING)
    optional(m, "order_id", 1, F.TYPE_INT64)
    optional(m, "status", 2, F.TYPE_STRING)
    m.field.add(name="lines", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                type_name=f".{package}.{name}.Lines")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}"))


def aiven_proto_row(m) -> dict:
    """A decoded message as aiven_decoded's row: absent fields are the null columns."""
    def opt(msg, f):
        return getattr(msg, f) if msg.HasField(f) else None
    lines = None
    if m.HasField("lines"):
        lines = {"count": opt(m.lines, "count"), "sku": opt(m.lines, "sku")}
    return {"order_id": opt(m, "order_id"), "status": opt(m, "status"), "lines": lines}


def test_protobuf_framing_of_decoded_rows(kafka, thaw, schema_registry, aiven_decoded):
    """--value-format protobuf: the value struct encoded as a Protobuf message of a .proto derived from the columns,
    registered under TOPIC-value (schema type PROTOBUF), framed with its id and message index; confluent-kafka's
    ProtobufDeserializer reads every record as the row holds it (a null column is an absent field). A second replay
    finds that schema: nothing new is registered."""
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    uri, table, values = aiven_decoded
    topic = archive_topics.topic_name("regprotoframe")
    p = _replay(thaw, uri, table, kafka, topic, "--value-format", "protobuf", "--schema-registry",
                schema_registry.url)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    client = schema_registry.client()
    latest = client.get_latest_version(f"{topic}-value")
    assert latest.schema.schema_type == "PROTOBUF"
    message = topic.replace("-", "_").replace(".", "_")
    assert f"message {message} {{" in latest.schema.schema_str, latest.schema.schema_str
    got = kafka.consume_all(topic)
    assert len(got) == len(values)
    des = ProtobufDeserializer(aiven_proto_class("thaw", message), {"use.deprecated.format": False})
    decoded = []
    for g in got:
        assert _schema_id(g["value"]) == latest.schema_id
        assert g["value"][5] == 0, "message index [0], written as the single byte 0"
        decoded.append(aiven_proto_row(des(g["value"], SerializationContext(topic, MessageField.VALUE))))
    assert sorted(decoded, key=lambda d: d["order_id"]) == values
    p = thaw("replay", "--catalog", uri, "--table", table, "--brokers", kafka.bootstrap, "--topic", topic,
             "--value-format", "protobuf", "--schema-registry", schema_registry.url, "--force", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    assert client.get_versions(f"{topic}-value") == [latest.version], "nothing new registered"


def test_protobuf_a_matching_message_of_the_latest_schema_is_used(kafka, thaw, schema_registry, aiven_decoded):
    """The subject's latest .proto (the user's own package, another message declared first) has a message whose
    fields are exactly the columns: Thaw encodes with that message, frames with its index [1] and the schema's id,
    and registers nothing. With use.latest.version and a schema the columns do not fit, the replay is refused
    before anything is produced, naming the field."""
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    uri, table, values = aiven_decoded
    topic = archive_topics.topic_name("regprotomine")
    client = schema_registry.client()
    mine = """syntax = "proto3";
package shop.orders;

message Refund {
  optional int64 x = 1;
}
message Order {
  message Lines {
    optional int32 count = 1;
    optional string sku = 2;
  }
  optional int64 order_id = 1;
  optional string status = 2;
  Lines lines = 3;
}
"""
    sid = client.register_schema(f"{topic}-value", Schema(mine, "PROTOBUF"))
    p = _replay(thaw, uri, table, kafka, topic, "--value-format", "protobuf", "--schema-registry",
                schema_registry.url)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err[-3000:]
    assert "values encoded as message shop.orders.Order of the latest schema" in err, err[-3000:]
    assert len(client.get_versions(f"{topic}-value")) == 1
    des = ProtobufDeserializer(aiven_proto_class("shop.orders", "Order", ("Refund",)),
                               {"use.deprecated.format": False})
    got = kafka.consume_all(topic)
    assert len(got) == len(values)
    decoded = []
    for g in got:
        assert _schema_id(g["value"]) == sid
        assert g["value"][5:7] == b"\x02\x02", "message indexes [1]: count 1, then index 1 (zigzag varints)"
        decoded.append(aiven_proto_row(des(g["value"], SerializationContext(topic, MessageField.VALUE))))
    assert sorted(decoded, key=lambda d: d["order_id"]) == values

    other = archive_topics.topic_name("regprotolatest")
    client.register_schema(f"{other}-value", Schema(
        'syntax = "proto3";\npackage shop;\n\nmessage Order {\n  optional int64 order_id = 1;\n'
        '  optional double status = 2;\n}\n', "PROTOBUF"))
    p = _replay(thaw, uri, table, kafka, other, "--value-format", "protobuf", "--schema-registry",
                schema_registry.url, "--schema-registry-property", "use.latest.version=true")
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 2, err[-3000:]
    assert "field 'status' is string in the table but double in the writer schema" in err, err[-3000:]
    assert other not in kafka.admin().list_topics(timeout=30).topics, "refused before the topic was made"
