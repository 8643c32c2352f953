"""`thaw archive --layout row --value-format registry --schema-registry URL`
(issue 23, docs/schema-registry.md) against a real registry (AxonOps,
schema_registry.py) and the serializers users run (confluent-kafka's
AvroSerializer / AvroDeserializer):

* Avro values whose schema evolves from v1 to v2 (an optional top-level
  field and an optional field inside a nested record) are decoded by the id
  in each record: the table gains v2's fields by a schema-evolution commit
  (new field ids, Iceberg's add-schema), pyiceberg and DuckDB read the typed
  columns, v1 rows read null in the new ones, and every row keeps its id in
  `value_schema_id`;
* evolution both inside one run and on a table archived before (resume);
* `thaw inspect` and `thaw replay` give every value back byte for byte,
  framing and schema id included, and the AvroDeserializer reads the
  replayed records as the producer wrote them;
* values the table cannot take (an id the registry does not know, a schema
  whose field changed type, garbage) stay in `value_raw`, said once in the
  log;
* a registry that is down stops the archive with a clear error and commits
  nothing of those records; the rerun archives them.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

import archive_topics
import iceberg_readers as readers
from archive_cli import archive_args, committed_next_offsets, new_catalog
from serve_harness import thaw_serve  # noqa: F401  (fixture)

V1 = {
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": "string"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [
            {"name": "name", "type": "string"},
            {"name": "tier", "type": {"type": "enum", "name": "Tier", "symbols": ["FREE", "GOLD"]}},
        ]}},
    ],
}
V2 = json.loads(json.dumps(V1))
V2["fields"].append({"name": "note", "type": ["null", "string"], "default": None})
V2["fields"][4]["type"]["fields"].append({"name": "email", "type": ["null", "string"], "default": None})
# `id` as a string: a change the table cannot take (registered under another subject).
CLASH = {"type": "record", "name": "Order", "namespace": "shop",
         "fields": [{"name": "id", "type": "string"}, {"name": "item", "type": "string"}]}


def _v1(i: int) -> dict:
    return {"id": i, "item": f"item-{i}", "price": Decimal(i * 7 - 300) / 100, "tags": ["t"] * (i % 3),
            "customer": {"name": f"c{i % 5}", "tier": "GOLD" if i % 2 else "FREE"}}


def _v2(i: int) -> dict:
    d = _v1(i)
    d["note"] = None if i % 4 == 0 else f"note {i}"
    d["customer"]["email"] = None if i % 3 == 0 else f"c{i}@example.com"
    return d


def _serializer(registry, schema: dict, subject: str | None = None):
    from confluent_kafka.schema_registry.avro import AvroSerializer
    conf = {"auto.register.schemas": True}
    if subject:
        conf["subject.name.strategy"] = lambda ctx, record_name: subject
    return AvroSerializer(registry.client(), json.dumps(schema), conf=conf)


def _serialize(ser, topic: str, obj: dict) -> bytes:
    from confluent_kafka.serialization import MessageField, SerializationContext
    return ser(obj, SerializationContext(topic, MessageField.VALUE))


def _registry_args(schema_registry) -> list[str]:
    return ["--layout", "row", "--value-format", "registry", "--schema-registry", schema_registry.url]


@pytest.fixture(scope="module")
def evolving(kafka, thaw, schema_registry, tmp_path_factory):
    """A topic of v1 values, archived; then v2 values, junk and a clashing
    schema, archived by a second run (evolution on an existing table) and,
    into a second table, by one run over everything (evolution mid-run)."""
    wh = tmp_path_factory.mktemp("archive_registry")
    uri = new_catalog(str(wh))
    topic = archive_topics.topic_name("regavro")
    kafka.create_topic(topic, 2)
    s1 = _serializer(schema_registry, V1)
    first = [(i % 2, f"k{i}".encode(), _serialize(s1, topic, _v1(i))) for i in range(40)]
    archive_topics.produce(kafka, topic, first)
    p = thaw(*archive_args(kafka, uri, "ns.resumed", topic, *_registry_args(schema_registry)), timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]

    s2 = _serializer(schema_registry, V2)
    clash = _serializer(schema_registry, CLASH, subject=f"{topic}-clash")
    second = [(i % 2, f"k{i}".encode(), _serialize(s2, topic, _v2(i))) for i in range(40, 100)]
    second += [(i % 2, f"k{i}".encode(), _serialize(s1, topic, _v1(i))) for i in range(100, 110)]  # v1 again
    junk = [
        (0, b"unknown-id", b"\x00" + (987654).to_bytes(4, "big") + b"\x02\x02x"),
        (1, b"clash", _serialize(clash, topic, {"id": "not a long", "item": "x"})),
        (0, b"garbage", b"\xff\xfe not avro"),
        (1, b"tomb", None),
    ]
    archive_topics.produce(kafka, topic, second + junk)
    p = thaw(*archive_args(kafka, uri, "ns.resumed", topic, *_registry_args(schema_registry)), timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    resumed_log = p.stderr.decode(errors="replace")
    p = thaw(*archive_args(kafka, uri, "ns.one_run", topic, *_registry_args(schema_registry)), timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    return {"uri": uri, "topic": topic, "want": kafka.consume_all(topic), "resumed_log": resumed_log,
            "one_run_log": p.stderr.decode(errors="replace"), "ids": _ids(schema_registry, topic),
            "junk": {k: v for _p, k, v in junk}, "produced": first + second + junk}


def _ids(schema_registry, topic: str) -> dict[str, int]:
    c = schema_registry.client()
    versions = c.get_versions(f"{topic}-value")
    assert len(versions) == 2, versions
    return {"v1": c.get_version(f"{topic}-value", versions[0]).schema_id,
            "v2": c.get_version(f"{topic}-value", versions[1]).schema_id}


@pytest.mark.parametrize("table", ["ns.resumed", "ns.one_run"])
def test_typed_columns_evolve_with_the_schema(evolving, table):
    tbl = readers.load_table(evolving["uri"], table)
    assert tbl.properties.get("thaw.row.value-schemas") == "registry"
    ids = evolving["ids"]
    assert json.loads(tbl.properties[f"thaw.row.avro-schema.{ids['v1']}"]) == V1
    assert json.loads(tbl.properties[f"thaw.row.avro-schema.{ids['v2']}"]) == V2
    assert len(tbl.schemas()) == 2, "one schema-evolution commit for v2"
    value = tbl.schema().find_field("value")
    names = [f.name for f in value.field_type.fields]
    assert names == ["id", "item", "price", "tags", "customer", "note"], names
    note = tbl.schema().find_field("value.note")
    email = tbl.schema().find_field("value.customer.email")
    assert not note.required and not email.required
    first = tbl.schemas()[0]
    assert min(note.field_id, email.field_id) > first.highest_field_id, "new fields take new ids"
    assert tbl.schema().find_field("value_schema_id").field_id == 13
    assert first.find_field("value.customer.name").field_id == tbl.schema().find_field("value.customer.name").field_id

    rows = {r["key"]: r for r in tbl.scan().to_arrow().to_pylist()}
    assert len(rows) == len(evolving["want"])
    for i in range(110):
        r = rows[f"k{i}".encode()]
        assert r["value_raw"] is None, (i, "re-encodes exactly")
        v2 = 40 <= i < 100
        assert r["value_schema_id"] == ids["v2" if v2 else "v1"]
        want = _v2(i) if v2 else _v1(i)
        got = r["value"]
        assert (got["id"], got["item"], got["price"], got["tags"]) == \
            (want["id"], want["item"], want["price"], want["tags"])
        assert (got["customer"]["name"], got["customer"]["tier"]) == (want["customer"]["name"],
                                                                       want["customer"]["tier"])
        assert got["note"] == want.get("note")
        assert got["customer"]["email"] == want["customer"].get("email")
    for key, raw in evolving["junk"].items():
        r = rows[key]
        assert r["value_raw"] == raw and r["value"] is None and r["value_schema_id"] is None, key


def test_duckdb_reads_the_evolved_columns(evolving):
    loc = readers.metadata_location(evolving["uri"], "ns.resumed")
    con = readers.duckdb_connect()
    try:
        path = readers._local(loc).replace("'", "''")
        got = con.execute(
            f"SELECT key, value.id, value.note, value.customer.email, value_schema_id FROM iceberg_scan('{path}') "
            "WHERE value IS NOT NULL ORDER BY value.id").fetchall()
    finally:
        con.close()
    assert len(got) == 110
    for key, id_, note, email, sid in got:
        want = _v2(id_) if 40 <= id_ < 100 else _v1(id_)
        assert bytes(key) == f"k{id_}".encode()
        assert note == want.get("note") and email == want["customer"].get("email"), (id_, note, email)
        assert sid == evolving["ids"]["v2" if 40 <= id_ < 100 else "v1"]


WIDE_V1 = {"type": "record", "name": "Reading", "namespace": "plant", "fields": [
    {"name": "sensor", "type": "string"}, {"name": "count", "type": "int"}, {"name": "level", "type": "float"}]}
WIDE_V2 = {"type": "record", "name": "Reading", "namespace": "plant", "fields": [
    {"name": "sensor", "type": "string"}, {"name": "count", "type": "long"}, {"name": "level", "type": "double"}]}


def test_a_schema_that_widens_int_and_float_evolves_the_columns(kafka, thaw, schema_registry, tmp_path):
    """v2 of a topic's Avro schema widens int -> long and float -> double (promotions Avro and Iceberg both allow):
    archive evolves the table's columns to long and double (same field ids), decodes both versions without value_raw,
    pyiceberg and DuckDB read the widened columns across the files written before and after, and replay gives every
    original value back byte for byte, each with its own schema id."""
    uri = new_catalog(str(tmp_path / "wh"))
    topic = archive_topics.topic_name("regwiden")
    kafka.create_topic(topic, 1)
    s1 = _serializer(schema_registry, WIDE_V1)
    first = [(0, f"k{i}".encode(), _serialize(s1, topic, {"sensor": f"s{i}", "count": -i, "level": i / 4}))
             for i in range(20)]
    archive_topics.produce(kafka, topic, first)
    p = thaw(*archive_args(kafka, uri, "ns.wide", topic, *_registry_args(schema_registry)), timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    assert str(readers.load_table(uri, "ns.wide").schema().find_field("value.count").field_type) == "int"
    s2 = _serializer(schema_registry, WIDE_V2)
    second = [(0, f"k{i}".encode(), _serialize(s2, topic, {"sensor": f"s{i}", "count": i << 36, "level": i / 10}))
              for i in range(20, 40)]
    second += [(0, b"k40", _serialize(s1, topic, {"sensor": "s40", "count": 40, "level": 10.0}))]  # v1 again
    archive_topics.produce(kafka, topic, second)
    p = thaw(*archive_args(kafka, uri, "ns.wide", topic, *_registry_args(schema_registry)), timeout=120)
    log = p.stderr.decode(errors="replace")
    assert p.returncode == 0, log[-4000:]
    assert "value columns evolved for schema id" in log, log[-4000:]
    assert "does not fit the table" not in log, log[-4000:]

    tbl = readers.load_table(uri, "ns.wide")
    before = readers.load_table(uri, "ns.wide").schemas()
    value = tbl.schema().find_field("value").field_type
    assert [(f.name, str(f.field_type)) for f in value.fields] == \
        [("sensor", "string"), ("count", "long"), ("level", "double")]
    ids = {s.schema_id: s.find_field("value.count").field_id for s in before.values()}
    assert len(set(ids.values())) == 1, ("count keeps its field id", ids)
    rows = {r["key"]: r for r in tbl.scan().to_arrow().to_pylist()}
    assert len(rows) == 41 and all(r["value_raw"] is None for r in rows.values())
    assert rows[b"k3"]["value"] == {"sensor": "s3", "count": -3, "level": 0.75}
    assert rows[b"k25"]["value"]["count"] == 25 << 36 and rows[b"k25"]["value"]["level"] == 2.5
    loc = readers.metadata_location(uri, "ns.wide")
    con = readers.duckdb_connect()
    try:
        path = readers._local(loc).replace("'", "''")
        got = dict(con.execute(f"SELECT key, value.count FROM iceberg_scan('{path}')").fetchall())
    finally:
        con.close()
    assert {bytes(k): v for k, v in got.items()} == {k: r["value"]["count"] for k, r in rows.items()}

    target = archive_topics.topic_name("regwidenreplayed")
    p = thaw("replay", "--catalog", uri, "--table", "ns.wide", "--brokers", kafka.bootstrap, "--topic", target,
             "--create-topic", "--quiet", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    assert sorted((g["key"], g["value"]) for g in kafka.consume_all(target)) == \
        sorted((k, v) for _p, k, v in first + second)


def test_refused_values_are_said_once(evolving):
    for log in (evolving["resumed_log"], evolving["one_run_log"]):
        assert log.count("schema id 987654 is unknown to the registry") == 1, log[-3000:]
        assert log.count("does not fit the table") == 1, log[-3000:]
        assert "field 'id' is long in the table but string in the writer schema" in log, log[-3000:]
    assert "value columns evolved for schema id" in evolving["one_run_log"]
    assert "value columns evolved for schema id" in evolving["resumed_log"]


def test_inspect_and_replay_give_the_original_bytes(kafka, thaw, evolving, schema_registry):
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    uri, topic, want = evolving["uri"], evolving["topic"], evolving["want"]
    for table in ("ns.resumed", "ns.one_run"):
        readers.assert_same_records(readers.read_thaw(thaw, uri, table), want, f"thaw inspect of {table}")
    target = archive_topics.topic_name("regavroreplayed")
    # --value-format avro: rows that keep their schema id replay with it (nothing derived or registered).
    p = thaw("replay", "--catalog", uri, "--table", "ns.resumed", "--brokers", kafka.bootstrap, "--topic", target,
             "--create-topic", "--quiet", "--json", "--value-format", "avro", "--schema-registry", schema_registry.url,
             timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    got = kafka.consume_all(target)
    assert sorted((g["partition"], g["key"], g["value"]) for g in got) == \
        sorted((w["partition"], w["key"], w["value"]) for w in want)
    assert f"{target}-value" not in schema_registry.client().get_subjects()
    des = AvroDeserializer(schema_registry.client())
    ctx = SerializationContext(target, MessageField.VALUE)
    decoded = 0
    for g in got:
        k = g["key"].decode()
        if not k.startswith("k"):
            continue
        i = int(k[1:])
        want_obj = _v2(i) if 40 <= i < 100 else _v1(i)
        assert des(g["value"], ctx) == want_obj, i
        decoded += 1
    assert decoded == 110


def test_registry_down_stops_without_committing(kafka, thaw, schema_registry, tmp_path):
    uri = new_catalog(str(tmp_path))
    topic = archive_topics.topic_name("regdown")
    kafka.create_topic(topic, 1)
    s1 = _serializer(schema_registry, V1)
    archive_topics.produce(kafka, topic, [(0, f"k{i}".encode(), _serialize(s1, topic, _v1(i))) for i in range(5)])
    down = ["--layout", "row", "--value-format", "registry", "--schema-registry", "http://127.0.0.1:9",
            "--schema-registry-property", "max.retries=1"]
    p = thaw(*archive_args(kafka, uri, "ns.down", topic, *down), timeout=120)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 1, err[-3000:]
    assert "127.0.0.1:9" in err and "schema" in err, err[-3000:]
    assert committed_next_offsets(uri, "ns.down", topic) == {}
    p = thaw(*archive_args(kafka, uri, "ns.down", topic, *_registry_args(schema_registry)), timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    assert committed_next_offsets(uri, "ns.down", topic) == {0: 5}
    rows = readers.load_table(uri, "ns.down").scan().to_arrow().to_pylist()
    assert sorted(r["value"]["id"] for r in rows) == list(range(5))


def test_bad_option_combinations(kafka, thaw, schema_registry, tmp_path):
    uri = new_catalog(str(tmp_path))
    topic = archive_topics.topic_name("regopts")
    kafka.create_topic(topic, 1)
    cases = [
        (["--value-format", "registry"], "give --schema-registry URL"),
        (["--layout", "thaw", "--value-format", "registry", "--schema-registry", schema_registry.url],
         "it needs --layout thaw-row"),
        (["--layout", "row", "--schema-registry", schema_registry.url], "--schema-registry is for --value-format"),
        (["--layout", "row", "--value-format", "protobuf"], "use json, avro or registry"),
        (["--layout", "row", "--value-format", "registry", "--schema-registry", schema_registry.url,
          "--schema-registry-property", "basic.auth.user.info"], "is not KEY=VALUE"),
    ]
    for extra, message in cases:
        p = thaw(*archive_args(kafka, uri, "ns.opts", topic, *extra), timeout=60)
        err = p.stderr.decode(errors="replace")
        assert p.returncode != 0 and message in err, (extra, err[-2000:])


# The same round trip with kafkajs' registry client (@kafkajs/confluent-schema-registry, avsc underneath).
JS_SCHEMA = {"type": "record", "name": "JsOrder", "namespace": "js", "fields": [
    {"name": "id", "type": "long"}, {"name": "item", "type": "string"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "customer", "type": {"type": "record", "name": "C", "fields": [
        {"name": "name", "type": "string"},
        {"name": "tier", "type": {"type": "enum", "name": "T", "symbols": ["FREE", "GOLD"]}}]}},
    {"name": "note", "type": ["null", "string"], "default": None}]}


def _js_record(i: int) -> dict:  # tests/clients/kafkajs_registry.js record(i)
    return {"id": i, "item": f"js-{i}", "tags": [f"t{k}" for k in range(i % 3)],
            "customer": {"name": f"c{i % 4}", "tier": "GOLD" if i % 2 else "FREE"},
            "note": f"note {i}" if i % 5 else None}


def _node(*args: str, stdin: str | None = None) -> str:
    import os
    import subprocess

    from serve_harness import CLIENTS, DEPS
    env = dict(os.environ, NODE_PATH=str(DEPS / "node" / "node_modules"))
    p = subprocess.run(["node", str(CLIENTS / "kafkajs_registry.js"), *args], input=stdin, capture_output=True,
                       text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout


def test_kafkajs_registry_client_round_trip(kafka, thaw, schema_registry, tmp_path, thaw_serve):
    import base64

    import os
    import subprocess

    from serve_harness import DEPS, Topic, kafkajs_cmd
    uri = new_catalog(str(tmp_path / "wh"))
    topic = archive_topics.topic_name("regjs")
    kafka.create_topic(topic, 2)
    schema_file = tmp_path / "js.avsc"
    schema_file.write_text(json.dumps(JS_SCHEMA))
    sid = json.loads(_node("produce", "-b", kafka.bootstrap, "-t", topic, "--registry", schema_registry.url,
                           "--schema", str(schema_file), "--count", "30"))["id"]
    source = kafka.consume_all(topic)
    assert len(source) == 30
    p = thaw(*archive_args(kafka, uri, "ns.js", topic, *_registry_args(schema_registry)), timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    rows = readers.load_table(uri, "ns.js").scan().to_arrow().to_pylist()
    assert all(r["value_raw"] is None and r["value_schema_id"] == sid for r in rows), "avsc's bytes re-encode exactly"

    target = archive_topics.topic_name("regjsreplayed")
    p = thaw("replay", "--catalog", uri, "--table", "ns.js", "--brokers", kafka.bootstrap, "--topic", target,
             "--create-topic", "--quiet", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    replayed = kafka.consume_all(target)
    assert sorted((g["key"], g["value"]) for g in replayed) == sorted((s["key"], s["value"]) for s in source)
    decoded = _node("decode", "--registry", schema_registry.url,
                    stdin="\n".join(base64.b64encode(g["value"]).decode() for g in replayed))
    got = sorted((json.loads(line) for line in decoded.splitlines()), key=lambda d: d["id"])
    assert got == [_js_record(i) for i in range(30)]

    # Served: kafkajs reads the table as a topic and decodes every value.
    with thaw_serve(uri, [Topic("jsorders", "ns.js", "thaw")], topic_args=True) as (bootstrap, _proc):
        env = dict(os.environ, NODE_PATH=str(DEPS / "node" / "node_modules"))
        c = subprocess.run(kafkajs_cmd("-b", bootstrap, "-t", "jsorders", "--timeout", "60"), capture_output=True,
                           text=True, timeout=120, env=env)
        assert c.returncode == 0, c.stderr[-3000:]
    values = [json.loads(line)["value"] for line in c.stdout.splitlines() if line.strip()]
    assert len(values) == 30
    decoded = _node("decode", "--registry", schema_registry.url, stdin="\n".join(values))
    assert sorted((json.loads(line) for line in decoded.splitlines()), key=lambda d: d["id"]) == \
        [_js_record(i) for i in range(30)]


# Protobuf: confluent-kafka's ProtobufSerializer, message classes built at run time (no protoc) to match
# the .proto text registered (AxonOps compiles .proto text; it refuses the serializer's own base64
# descriptor registration, docs/schema-registry.md). No enum: AxonOps v0.2.1 answers 500 to the
# serializer's GET …/versions/latest?format=serialized for a schema with an enum (enums are covered by
# tests/unit/records/protobuf_value_test.cc).
def _proto_text(v2: bool) -> str:
    return f"""syntax = "proto3";
package thaw_pb;

message Order {{
  message Customer {{
    string name = 1;
    uint32 age = 2;{chr(10) + "    string email = 3;" if v2 else ""}
  }}
  int64 id = 1;
  string item = 2;
  repeated string tags = 3;
  Customer customer = 4;
  bool paid = 5;
  optional string note = 6;
  map<string, int32> counts = 7;
  repeated sint64 deltas = 8;{chr(10) + "  double total = 9;" if v2 else ""}
}}

message Refund {{
  int64 order_id = 1;
  sint32 cents = 2;
}}
"""


def _proto_classes(v2: bool):
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name=f"thaw_pb_{int(v2)}.proto", package="thaw_pb", syntax="proto3")
    order = fdp.message_type.add(name="Order")
    cust = order.nested_type.add(name="Customer")
    cust.field.add(name="name", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    cust.field.add(name="age", number=2, type=F.TYPE_UINT32, label=F.LABEL_OPTIONAL)
    if v2:
        cust.field.add(name="email", number=3, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry = order.nested_type.add(name="CountsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    order.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    order.field.add(name="item", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    order.field.add(name="tags", number=3, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    order.field.add(name="customer", number=4, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".thaw_pb.Order.Customer")
    order.field.add(name="paid", number=5, type=F.TYPE_BOOL, label=F.LABEL_OPTIONAL)
    order.oneof_decl.add(name="_note")
    order.field.add(name="note", number=6, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, oneof_index=0,
                    proto3_optional=True)
    order.field.add(name="counts", number=7, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                    type_name=".thaw_pb.Order.CountsEntry")
    order.field.add(name="deltas", number=8, type=F.TYPE_SINT64, label=F.LABEL_REPEATED)
    if v2:
        order.field.add(name="total", number=9, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    refund = fdp.message_type.add(name="Refund")
    refund.field.add(name="order_id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    refund.field.add(name="cents", number=2, type=F.TYPE_SINT32, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return (message_factory.GetMessageClass(pool.FindMessageTypeByName("thaw_pb.Order")),
            message_factory.GetMessageClass(pool.FindMessageTypeByName("thaw_pb.Refund")))


def _order(cls, i: int, v2: bool):
    m = cls(id=i, item=f"pb-{i}", tags=[f"t{k}" for k in range(i % 3)], paid=i % 2 == 1,
            deltas=[-i, i * 1000] if i % 4 else [])
    if i % 5:
        m.customer.name = f"c{i % 7}"
        m.customer.age = 20 + i % 50
        if v2 and i % 2:
            m.customer.email = f"c{i}@example.com"
    if i % 3 == 0:
        m.note = "" if i % 2 else f"note {i}"  # an empty optional string is present
    if i % 6 == 1:
        m.counts["k"] = i
    if v2 and i % 4 != 3:
        m.total = i / 8
    return m


def _pb_dict(m) -> dict:
    from google.protobuf.json_format import MessageToDict
    return MessageToDict(m, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)


def test_protobuf_values_round_trip(kafka, thaw, schema_registry, tmp_path):
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    uri = new_catalog(str(tmp_path / "wh"))
    topic = archive_topics.topic_name("regpb")
    kafka.create_topic(topic, 2)
    client = schema_registry.client()
    ctx = SerializationContext(topic, MessageField.VALUE)
    conf = {"use.deprecated.format": False, "auto.register.schemas": False, "use.latest.version": True}
    values = []
    for v2 in (False, True):
        client.register_schema(f"{topic}-value", Schema(_proto_text(v2), "PROTOBUF"))
        Order, Refund = _proto_classes(v2)
        client = schema_registry.client()  # a new client: the serializer caches the latest version
        ser = ProtobufSerializer(Order, client, conf)
        lo, hi = (0, 30) if not v2 else (30, 60)
        values += [(i % 2, f"k{i}".encode(), ser(_order(Order, i, v2), ctx)) for i in range(lo, hi)]
        if v2:  # another message type of the same file: not the table's (value_raw)
            values.append((0, b"refund", ProtobufSerializer(Refund, client, conf)(Refund(order_id=1, cents=-5), ctx)))
    archive_topics.produce(kafka, topic, values)
    p = thaw(*archive_args(kafka, uri, "ns.pb", topic, *_registry_args(schema_registry)), timeout=120)
    log = p.stderr.decode(errors="replace")
    assert p.returncode == 0, log[-3000:]
    assert "value columns evolved for schema id" in log, log[-3000:]

    tbl = readers.load_table(uri, "ns.pb")
    assert tbl.properties["thaw.row.value-format"] == "protobuf"
    assert tbl.properties["thaw.row.proto-message"] == "thaw_pb.Order"
    names = [f.name for f in tbl.schema().find_field("value").field_type.fields]
    assert names == ["id", "item", "tags", "customer", "paid", "note", "counts", "deltas", "total"], names
    assert tbl.schema().find_field("value.customer.email") is not None
    rows = {r["key"]: r for r in tbl.scan().to_arrow().to_pylist()}
    for i in range(60):
        r = rows[f"k{i}".encode()]
        assert r["value_raw"] is None, (i, "re-encodes exactly")
        v = r["value"]
        assert (v["id"], v["item"], v["tags"], v["paid"]) == (i, f"pb-{i}", [f"t{k}" for k in range(i % 3)],
                                                               i % 2 == 1)
        assert v["note"] == (None if i % 3 else ("" if i % 2 else f"note {i}"))
        assert (v["customer"] is None) == (i % 5 == 0)
        assert v["total"] == (None if i < 30 else (0.0 if i % 4 == 3 else i / 8))  # proto3: absent reads 0
    assert rows[b"refund"]["value"] is None and rows[b"refund"]["value_raw"] is not None

    target = archive_topics.topic_name("regpbreplayed")
    p = thaw("replay", "--catalog", uri, "--table", "ns.pb", "--brokers", kafka.bootstrap, "--topic", target,
             "--create-topic", "--quiet", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    got = kafka.consume_all(target)
    assert sorted((g["key"], g["value"]) for g in got) == sorted((k, v) for _p, k, v in values)
    Order2, _ = _proto_classes(True)
    des = ProtobufDeserializer(Order2, {"use.deprecated.format": False})
    for g in got:
        if g["key"] == b"refund":
            continue
        i = int(g["key"].decode()[1:])
        assert _pb_dict(des(g["value"], SerializationContext(target, MessageField.VALUE))) == \
            _pb_dict(_order(Order2, i, i >= 30))


def _float_proto_class(v2: bool):
    """m.M: v1 {float level = 2}; v2 {string tag = 3; double level = 2} (a new field declared first)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name=f"m_{int(v2)}.proto", package="m", syntax="proto3")
    m = fdp.message_type.add(name="M")
    if v2:
        m.field.add(name="tag", number=3, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    m.field.add(name="level", number=2, type=F.TYPE_DOUBLE if v2 else F.TYPE_FLOAT, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("m.M"))


def test_an_evolution_older_schemas_could_not_read_is_refused(kafka, thaw, schema_registry, tmp_path):
    """Protobuf v2 adds a field and turns a float into a double (wire-incompatible in Protobuf, so its int32 ->
    int64 widening does not apply): evolving the table to it would leave v1's rows without a schema that reads them.
    archive refuses v2 (its values kept in value_raw, said once), the table keeps its float column, and replay gives
    every value back byte for byte."""
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    uri = new_catalog(str(tmp_path / "wh"))
    topic = archive_topics.topic_name("regpbfloat")
    kafka.create_topic(topic, 1)
    ctx = SerializationContext(topic, MessageField.VALUE)
    conf = {"use.deprecated.format": False, "auto.register.schemas": False, "use.latest.version": True}
    client = schema_registry.client()
    client.register_schema(f"{topic}-value", Schema('syntax = "proto3";\npackage m;\n\nmessage M {\n'
                                                    '  float level = 2;\n}\n', "PROTOBUF"))
    v1 = _float_proto_class(False)
    values = [(0, f"a{i}".encode(), ProtobufSerializer(v1, client, conf)(v1(level=i / 4), ctx)) for i in range(10)]
    client.set_compatibility(f"{topic}-value", "NONE")
    client.register_schema(f"{topic}-value", Schema('syntax = "proto3";\npackage m;\n\nmessage M {\n'
                                                    '  string tag = 3;\n  double level = 2;\n}\n', "PROTOBUF"))
    client = schema_registry.client()  # the serializer caches the latest version
    v2 = _float_proto_class(True)
    values += [(0, f"b{i}".encode(), ProtobufSerializer(v2, client, conf)(v2(tag=f"t{i}", level=i / 10), ctx))
               for i in range(10)]
    archive_topics.produce(kafka, topic, values)
    p = thaw(*archive_args(kafka, uri, "ns.pbfloat", topic, *_registry_args(schema_registry)), timeout=120)
    log = p.stderr.decode(errors="replace")
    assert p.returncode == 0, log[-4000:]
    assert log.count("cannot read") == 1 and "would evolve the table into columns schema id" in log, log[-4000:]
    tbl = readers.load_table(uri, "ns.pbfloat")
    assert str(tbl.schema().find_field("value.level").field_type) == "float"
    rows = {r["key"]: r for r in tbl.scan().to_arrow().to_pylist()}
    assert all(rows[f"a{i}".encode()]["value_raw"] is None for i in range(10))
    assert all(rows[f"b{i}".encode()]["value_raw"] is not None for i in range(10))
    target = archive_topics.topic_name("regpbfloatreplayed")
    p = thaw("replay", "--catalog", uri, "--table", "ns.pbfloat", "--brokers", kafka.bootstrap, "--topic", target,
             "--create-topic", "--quiet", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    assert sorted((g["key"], g["value"]) for g in kafka.consume_all(target)) == sorted((k, v) for _p, k, v in values)


CUSTOMER_AVRO = {"type": "record", "name": "Customer", "namespace": "shop.common",
                 "fields": [{"name": "name", "type": "string"}, {"name": "vip", "type": "boolean"}]}
ORDER_AVRO = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"}, {"name": "customer", "type": "shop.common.Customer"}]}
CUSTOMER_PROTO = """syntax = "proto3";
package shop.common;

message Customer {
  string name = 1;
  bool vip = 2;
}
"""
ORDER_PROTO = """syntax = "proto3";
package shop;

import "shop/common/customer.proto";

message Order {
  int64 id = 1;
  shop.common.Customer customer = 2;
}
"""


def _referencing_proto_class():
    """shop.Order built at run time, its Customer in a file of its own (the import), as protoc would lay it out."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    common = descriptor_pb2.FileDescriptorProto(name="shop/common/customer.proto", package="shop.common",
                                                syntax="proto3")
    c = common.message_type.add(name="Customer")
    c.field.add(name="name", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    c.field.add(name="vip", number=2, type=F.TYPE_BOOL, label=F.LABEL_OPTIONAL)
    main = descriptor_pb2.FileDescriptorProto(name="shop/order.proto", package="shop", syntax="proto3",
                                              dependency=["shop/common/customer.proto"])
    o = main.message_type.add(name="Order")
    o.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    o.field.add(name="customer", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                type_name=".shop.common.Customer")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(common)
    pool.Add(main)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))


CUSTOMER_JSON = {"type": "object", "properties": {"name": {"type": "string"}, "vip": {"type": "boolean"}}}
ORDER_JSON = {"type": "object", "title": "Order",
              "properties": {"id": {"type": "integer"}, "customer": {"$ref": "customer.json"}}}


@pytest.mark.parametrize("kind", ["avro", "protobuf", "json"])
def test_schemas_with_references(kafka, thaw, schema_registry, tmp_path, kind):
    """A value schema that refers to another subject's schema (an Avro named type, a Protobuf import, a JSON Schema
    $ref to another document), produced by
    confluent-kafka's serializer with use.latest.version: archive fetches the references by subject and version,
    decodes every value into typed columns (the referenced record a nested struct), keeps the referenced texts with
    the table (thaw.row.schema-refs.<ID>), and replay -- which asks no registry -- gives every value back byte for
    byte, which the deserializer reads."""
    from confluent_kafka.schema_registry import Schema, SchemaReference
    from confluent_kafka.serialization import MessageField, SerializationContext
    uri = new_catalog(str(tmp_path / "wh"))
    topic = archive_topics.topic_name(f"regref{kind}")
    kafka.create_topic(topic, 2)
    client = schema_registry.client()
    ctx = SerializationContext(topic, MessageField.VALUE)
    if kind == "avro":
        from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
        client.register_schema(f"{topic}-customer", Schema(json.dumps(CUSTOMER_AVRO), "AVRO"))
        main = Schema(json.dumps(ORDER_AVRO), "AVRO",
                      [SchemaReference("shop.common.Customer", f"{topic}-customer", 1)])
        sid = client.register_schema(f"{topic}-value", main)
        ser = AvroSerializer(client, main, conf={"auto.register.schemas": False, "use.latest.version": True})
        objs = [{"id": i, "customer": {"name": f"c{i}", "vip": i % 2 == 0}} for i in range(30)]
        values = [(i % 2, f"k{i}".encode(), ser(o, ctx)) for i, o in enumerate(objs)]

        def decode(v):
            return AvroDeserializer(schema_registry.client())(v, ctx)
    elif kind == "json":
        from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
        client.register_schema(f"{topic}-customer", Schema(json.dumps(CUSTOMER_JSON), "JSON"))
        main = Schema(json.dumps(ORDER_JSON), "JSON", [SchemaReference("customer.json", f"{topic}-customer", 1)])
        sid = client.register_schema(f"{topic}-value", main)
        ser = JSONSerializer(main, client, conf={"auto.register.schemas": False, "use.latest.version": True})
        objs = [{"id": i, "customer": {"name": f"c{i}", "vip": i % 2 == 0}} for i in range(30)]
        values = [(i % 2, f"k{i}".encode(), ser(o, ctx)) for i, o in enumerate(objs)]

        def decode(v):
            return JSONDeserializer(None, schema_registry_client=schema_registry.client())(v, ctx)
    else:
        from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
        from google.protobuf.json_format import MessageToDict
        client.register_schema(f"{topic}-customer", Schema(CUSTOMER_PROTO, "PROTOBUF"))
        sid = client.register_schema(f"{topic}-value", Schema(
            ORDER_PROTO, "PROTOBUF", [SchemaReference("shop/common/customer.proto", f"{topic}-customer", 1)]))
        Order = _referencing_proto_class()
        ser = ProtobufSerializer(Order, client, {"use.deprecated.format": False, "auto.register.schemas": False,
                                                 "use.latest.version": True})
        objs = [{"id": i, "customer": {"name": f"c{i}", "vip": i % 2 == 0}} for i in range(30)]
        values = [(i % 2, f"k{i}".encode(), ser(Order(id=o["id"], customer=o["customer"]), ctx))
                  for i, o in enumerate(objs)]
        des = ProtobufDeserializer(Order, {"use.deprecated.format": False})

        def decode(v):
            d = MessageToDict(des(v, ctx), preserving_proto_field_name=True,
                              always_print_fields_with_no_presence=True)
            return {"id": int(d["id"]), "customer": d["customer"]}
    assert all(int.from_bytes(v[1:5], "big") == sid for _p, _k, v in values)
    archive_topics.produce(kafka, topic, values)
    p = thaw(*archive_args(kafka, uri, f"ns.ref{kind}", topic, *_registry_args(schema_registry)), timeout=120)
    log = p.stderr.decode(errors="replace")
    assert p.returncode == 0, log[-4000:]
    assert "not resolved" not in log and "value_raw (0 not framed" in log, log[-4000:]

    tbl = readers.load_table(uri, f"ns.ref{kind}")
    refs = json.loads(tbl.properties[f"thaw.row.schema-refs.{sid}"])
    want_name = {"avro": "shop.common.Customer", "protobuf": "shop/common/customer.proto",
                 "json": "customer.json"}[kind]
    assert [r["name"] for r in refs] == [want_name]
    rows = {r["key"]: r for r in tbl.scan().to_arrow().to_pylist()}
    assert len(rows) == 30
    for i, o in enumerate(objs):
        r = rows[f"k{i}".encode()]
        assert r["value_raw"] is None, (i, "re-encodes exactly")
        assert r["value"] == o, (i, r["value"])

    target = archive_topics.topic_name(f"regref{kind}replayed")
    p = thaw("replay", "--catalog", uri, "--table", f"ns.ref{kind}", "--brokers", kafka.bootstrap, "--topic",
             target, "--create-topic", "--quiet", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    got = kafka.consume_all(target)
    assert sorted((g["key"], g["value"]) for g in got) == sorted((k, v) for _p, k, v in values)
    assert sorted((decode(g["value"]) for g in got), key=lambda d: d["id"]) == objs


JSON_V1 = {
    "$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "item": {"type": "string"},
        "price": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "customer": {"$ref": "#/definitions/Customer"},
    },
    "required": ["id", "item"],
    "definitions": {"Customer": {"type": "object", "properties": {
        "name": {"type": "string"}, "gold": {"type": "boolean"}}}},
}
JSON_V2 = json.loads(json.dumps(JSON_V1))
JSON_V2["properties"]["note"] = {"oneOf": [{"type": "null"}, {"type": "string"}]}
JSON_V2["definitions"]["Customer"]["properties"]["email"] = {"type": ["string", "null"]}


def _json_order(i: int, v2: bool) -> dict:
    d = {"id": i, "item": f"js-{i}", "price": i / 4, "tags": [f"t{k}" for k in range(i % 3)],
         "customer": {"name": f"c{i % 5}", "gold": i % 2 == 1}}
    if v2:
        d["note"] = None if i % 4 == 0 else f"note {i}"
        d["customer"]["email"] = f"c{i}@example.com"
    return d


def test_json_schema_values_round_trip(kafka, thaw, schema_registry, tmp_path):
    """JSON Schema values (confluent-kafka's JSONSerializer) are decoded by the id in each record into typed
    columns, the table evolving with the schema; values written compactly (what that serializer, Jackson and
    kafkajs write) re-encode exactly (no value_raw); a producer writing json.dumps' spaced JSON keeps its bytes in
    value_raw. Replay gives every value back byte for byte, and the JSONDeserializer reads them."""
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    uri = new_catalog(str(tmp_path / "wh"))
    topic = archive_topics.topic_name("regjson")
    kafka.create_topic(topic, 2)
    ctx = SerializationContext(topic, MessageField.VALUE)
    client = schema_registry.client()
    values = []
    s1 = JSONSerializer(json.dumps(JSON_V1), client, conf={"auto.register.schemas": True})
    values += [(i % 2, f"k{i}".encode(), s1(_json_order(i, False), ctx)) for i in range(0, 30)]
    spaced = JSONSerializer(json.dumps(JSON_V1), client, conf={"auto.register.schemas": True}, json_encode=json.dumps)
    values += [(0, b"spaced", spaced(_json_order(99, False), ctx))]
    client.set_compatibility(f"{topic}-value", "NONE")
    client = schema_registry.client()  # a new client: the serializer caches the latest version
    s2 = JSONSerializer(json.dumps(JSON_V2), client, conf={"auto.register.schemas": True})
    values += [(i % 2, f"k{i}".encode(), s2(_json_order(i, True), ctx)) for i in range(30, 60)]
    values += [(1, b"garbage", b"\x00" + values[0][2][1:5] + b"{not json")]
    archive_topics.produce(kafka, topic, values)
    p = thaw(*archive_args(kafka, uri, "ns.js", topic, *_registry_args(schema_registry)), timeout=120)
    log = p.stderr.decode(errors="replace")
    assert p.returncode == 0, log[-3000:]
    assert "value columns evolved for schema id" in log, log[-3000:]

    tbl = readers.load_table(uri, "ns.js")
    assert tbl.properties["thaw.row.value-format"] == "json-schema"
    names = [f.name for f in tbl.schema().find_field("value").field_type.fields]
    assert names == ["id", "item", "price", "tags", "customer", "note"], names
    assert tbl.schema().find_field("value.customer.email") is not None
    rows = {r["key"]: r for r in tbl.scan().to_arrow().to_pylist()}
    for i in range(60):
        r = rows[f"k{i}".encode()]
        assert r["value_raw"] is None, (i, "compact JSON re-encodes exactly")
        v = r["value"]
        assert (v["id"], v["item"], v["price"], v["tags"]) == (i, f"js-{i}", i / 4, [f"t{k}" for k in range(i % 3)])
        assert v["customer"]["gold"] == (i % 2 == 1)
        assert v["note"] == (None if i < 30 or i % 4 == 0 else f"note {i}")
        assert v["customer"]["email"] == (None if i < 30 else f"c{i}@example.com")
    assert rows[b"spaced"]["value"]["id"] == 99 and rows[b"spaced"]["value_raw"] is not None
    assert rows[b"garbage"]["value"] is None and rows[b"garbage"]["value_raw"] is not None
    ids = {r["value_schema_id"] for k, r in rows.items() if k.startswith(b"k")}
    assert len(ids) == 2, ids

    target = archive_topics.topic_name("regjsonreplayed")
    p = thaw("replay", "--catalog", uri, "--table", "ns.js", "--brokers", kafka.bootstrap, "--topic", target,
             "--create-topic", "--quiet", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
    got = kafka.consume_all(target)
    assert sorted((g["key"], g["value"]) for g in got) == sorted((k, v) for _p, k, v in values)
    des = JSONDeserializer(json.dumps(JSON_V2), schema_registry_client=schema_registry.client())
    for g in got:
        if g["key"] in (b"garbage",):
            continue
        i = 99 if g["key"] == b"spaced" else int(g["key"].decode()[1:])
        assert des(g["value"], SerializationContext(target, MessageField.VALUE)) == _json_order(i, 30 <= i < 60)
