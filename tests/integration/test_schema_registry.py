"""Thaw's schema registry client (src/thaw/registry, issue 23) against a real
Confluent-compatible registry (AxonOps Schema Registry, schema_registry.py)
and the clients users run: confluent-kafka's SchemaRegistryClient and its
Avro, Protobuf and JSON Schema serializers. Through tests/tools/registry_tool.cc
until archive, replay and serve use the client.

* schemas registered by the Python client read back by id, latest and lookup
  with Thaw's client: the same text, type, id and version;
* a schema registered by Thaw's client used by the Python serializers
  (use.latest.version, no auto-registration), and the serializers' framed
  bytes parsed by Thaw's framing parser: that id, the Protobuf message
  indexes, the body;
* errors: an unknown id, a registry that is down, an incompatible schema, a
  wrong password or bearer token (never shown);
* retries through 503s, throttling and lost responses (tests/integration/fault_proxy.py
  in front of the registry), failover to a second URL.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

AVRO_V1 = json.dumps({"type": "record", "name": "Order", "namespace": "shop",
                      "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}]})
# v2 adds an optional field: BACKWARD compatible.
AVRO_V2 = json.dumps({"type": "record", "name": "Order", "namespace": "shop",
                      "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"},
                                 {"name": "note", "type": ["null", "string"], "default": None}]})
# Drops a field without a default and adds a required one: not BACKWARD compatible.
AVRO_INCOMPATIBLE = json.dumps({"type": "record", "name": "Order", "namespace": "shop",
                                "fields": [{"name": "id", "type": "long"}, {"name": "qty", "type": "int"}]})
PROTO = """syntax = "proto3";
package thaw_test_shop;

message Order {
  int64 id = 1;
  string item = 2;
}

message Refund {
  int64 order_id = 1;
  int32 cents = 2;
}
"""
JSON_SCHEMA = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
                          "properties": {"id": {"type": "integer"}, "item": {"type": "string"}},
                          "required": ["id"]})


@pytest.fixture(scope="module")
def registry_tool(thaw_bin, tmp_path_factory):
    p = thaw_bin.parent / "thaw_registry_tool"
    if not p.exists():
        pytest.fail(f"{p} not found: build it (ninja -C build thaw_registry_tool)", pytrace=False)
    files = tmp_path_factory.mktemp("schemas")

    def run(*args: str, schema: str | None = None, ok: bool = True) -> subprocess.CompletedProcess:
        argv = [str(p)]
        for a in args:
            if a == "@SCHEMA":
                f = files / f"s{len(list(files.iterdir()))}.txt"
                f.write_text(schema)
                a = str(f)
            argv.append(a)
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        if ok:
            assert r.returncode == 0, f"{argv}: exit {r.returncode}\n{r.stderr}"
        return r

    def out(*args: str, schema: str | None = None) -> dict:
        return json.loads(run(*args, schema=schema).stdout)

    run.json = out
    return run


def _sr(schema: str, kind: str):
    from confluent_kafka.schema_registry import Schema
    return Schema(schema, kind)


@pytest.mark.parametrize("kind,text", [("AVRO", AVRO_V1), ("PROTOBUF", PROTO), ("JSON", JSON_SCHEMA)],
                         ids=["avro", "protobuf", "json"])
def test_python_registers_thaw_reads(schema_registry, registry_tool, kind, text):
    client = schema_registry.client()
    subject = f"py-{kind.lower()}-value"
    sid = client.register_schema(subject, _sr(text, kind))
    theirs = client.get_schema(sid)

    got = registry_tool.json(schema_registry.url, "by-id", str(sid))
    assert got["schema_type"] == kind
    assert got["schema"] == theirs.schema_str
    assert got["references"] == []
    assert got["cached"] is True  # the second read of the id made no request

    latest = registry_tool.json(schema_registry.url, "latest", subject)
    assert (latest["id"], latest["subject"], latest["schema_type"]) == (sid, subject, kind)
    assert latest["version"] == client.get_latest_version(subject).version

    looked = registry_tool.json(schema_registry.url, "lookup", subject, "@SCHEMA", kind, schema=text)
    assert looked["id"] == sid
    assert looked["version"] == latest["version"]


def test_thaw_registers_python_serializes_avro(schema_registry, registry_tool):
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    subject = "orders-value"
    v1 = registry_tool.json(schema_registry.url, "register", subject, "@SCHEMA", "AVRO", schema=AVRO_V1)["id"]
    # Registering the same schema again gives the same id; v2 (compatible) a new one.
    assert registry_tool.json(schema_registry.url, "register", subject, "@SCHEMA", "AVRO", schema=AVRO_V1)["id"] == v1
    v2 = registry_tool.json(schema_registry.url, "register", subject, "@SCHEMA", "avro", schema=AVRO_V2)["id"]
    assert v2 != v1

    client = schema_registry.client()
    assert client.get_latest_version(subject).schema_id == v2
    ser = AvroSerializer(client, AVRO_V2, conf={"auto.register.schemas": False, "use.latest.version": True})
    ctx = SerializationContext("orders", MessageField.VALUE)
    record = {"id": 7, "item": "kettle", "note": None}
    framed = ser(record, ctx)

    parsed = registry_tool.json("parse-framing", framed.hex())
    assert parsed["schema_id"] == v2
    assert parsed["body_offset"] == 5
    assert parsed["message_indexes"] == []
    assert bytes.fromhex(parsed["body_hex"]) == framed[5:]
    # Thaw's framing of that body under that id is the serializer's bytes.
    assert registry_tool.json("frame", str(v2), "-", parsed["body_hex"])["hex"] == framed.hex()
    assert AvroDeserializer(client)(framed, ctx) == record


def _proto_classes():
    """Message classes of PROTO built at run time (no protoc): Order (index 0) and Refund (index 1)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fdp = descriptor_pb2.FileDescriptorProto(name="thaw_test_shop.proto", package="thaw_test_shop", syntax="proto3")
    for name, fields in (("Order", (("id", 3), ("item", 9))), ("Refund", (("order_id", 3), ("cents", 5)))):
        m = fdp.message_type.add(name=name)
        for number, (fname, ftype) in enumerate(fields, start=1):
            m.field.add(name=fname, number=number, type=ftype, label=1)
    pool = descriptor_pool.DescriptorPool()
    fd = pool.Add(fdp)
    return (message_factory.GetMessageClass(pool.FindMessageTypeByName("thaw_test_shop.Order")),
            message_factory.GetMessageClass(pool.FindMessageTypeByName("thaw_test_shop.Refund")))


def test_protobuf_serializer_framing_and_message_indexes(schema_registry, registry_tool):
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    Order, Refund = _proto_classes()
    client = schema_registry.client()
    # The Python serializer's own registration sends a base64 FileDescriptorProto, which this registry
    # refuses (422: it compiles .proto text): Thaw's client registers the .proto text instead, and the
    # serializer uses the subject's latest version.
    ids = {}
    for topic in ("pb-orders", "pb-refunds"):
        ids[topic] = registry_tool.json(schema_registry.url, "register", f"{topic}-value", "@SCHEMA", "PROTOBUF",
                                        schema=PROTO)["id"]
    assert ids["pb-orders"] == ids["pb-refunds"]  # the same schema under two subjects: one id
    conf = {"use.deprecated.format": False, "auto.register.schemas": False, "use.latest.version": True}
    ctx = SerializationContext("pb-orders", MessageField.VALUE)

    order = ProtobufSerializer(Order, client, conf)(Order(id=1, item="tea"), ctx)
    parsed = registry_tool.json("parse-framing", order.hex(), "protobuf")
    assert parsed["schema_id"] == ids["pb-orders"]
    assert parsed["message_indexes"] == [0]
    assert order[5] == 0  # [0] as the single byte 0
    assert parsed["body_offset"] == 6
    assert Order.FromString(bytes.fromhex(parsed["body_hex"])) == Order(id=1, item="tea")
    assert registry_tool.json("frame", str(parsed["schema_id"]), "0", parsed["body_hex"])["hex"] == order.hex()
    got = registry_tool.json(schema_registry.url, "by-id", str(parsed["schema_id"]))
    assert got["schema_type"] == "PROTOBUF"
    assert "message Refund" in got["schema"] and "message Order" in got["schema"]

    ctx2 = SerializationContext("pb-refunds", MessageField.VALUE)
    refund = ProtobufSerializer(Refund, client, conf)(Refund(order_id=1, cents=250), ctx2)
    parsed = registry_tool.json("parse-framing", refund.hex(), "protobuf")
    assert parsed["schema_id"] == ids["pb-refunds"]
    assert parsed["message_indexes"] == [1]
    assert refund[5:7] == bytes([2, 2])  # count 1, index 1: zigzag varints
    assert Refund.FromString(bytes.fromhex(parsed["body_hex"])) == Refund(order_id=1, cents=250)
    assert registry_tool.json("frame", str(parsed["schema_id"]), "1", parsed["body_hex"])["hex"] == refund.hex()


def test_json_serializer_framing(schema_registry, registry_tool):
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = schema_registry.client()
    ctx = SerializationContext("json-orders", MessageField.VALUE)
    framed = JSONSerializer(JSON_SCHEMA, client)({"id": 3, "item": "cup"}, ctx)
    parsed = registry_tool.json("parse-framing", framed.hex())
    assert json.loads(bytes.fromhex(parsed["body_hex"])) == {"id": 3, "item": "cup"}
    got = registry_tool.json(schema_registry.url, "by-id", str(parsed["schema_id"]))
    assert got["schema_type"] == "JSON"
    assert json.loads(got["schema"]) == json.loads(JSON_SCHEMA)


def test_unknown_id_and_subject_are_clear_errors(schema_registry, registry_tool):
    r = registry_tool(schema_registry.url, "by-id", "987654", ok=False)
    assert r.returncode == 1, r
    assert r.stdout == ""
    assert f"GET {schema_registry.url}/schemas/ids/987654" in r.stderr
    assert "HTTP 404, error 40403" in r.stderr
    assert "no schema with id 987654" in r.stderr

    r = registry_tool(schema_registry.url, "latest", "no-such-subject", ok=False)
    assert r.returncode == 1
    assert "/subjects/no-such-subject/versions/latest" in r.stderr and "HTTP 404, error 40401" in r.stderr

    registry_tool.json(schema_registry.url, "register", "lookup-miss-value", "@SCHEMA", "AVRO", schema=AVRO_V1)
    r = registry_tool(schema_registry.url, "lookup", "lookup-miss-value", "@SCHEMA", "AVRO", schema=AVRO_INCOMPATIBLE,
                      ok=False)
    assert r.returncode == 1
    assert "POST" in r.stderr and "HTTP 404" in r.stderr


def test_incompatible_registration_is_refused_with_the_reason(schema_registry, registry_tool):
    registry_tool.json(schema_registry.url, "register", "compat-value", "@SCHEMA", "AVRO", schema=AVRO_V1)
    r = registry_tool(schema_registry.url, "register", "compat-value", "@SCHEMA", "AVRO", schema=AVRO_INCOMPATIBLE,
                      ok=False)
    assert r.returncode == 1
    assert f"POST {schema_registry.url}/subjects/compat-value/versions" in r.stderr
    assert "HTTP 409" in r.stderr and "incompatible" in r.stderr


def test_registry_down_is_a_clear_error(registry_tool):
    from lakehouse import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    t0 = time.monotonic()
    r = registry_tool(url, "max.retries=2", "retries.wait.ms=10", "by-id", "1", ok=False)
    assert r.returncode == 1
    assert f"GET {url}/schemas/ids/1" in r.stderr
    assert "after 3 attempts" in r.stderr
    assert f"is the registry running and reachable at {url}?" in r.stderr
    assert time.monotonic() - t0 < 10


def test_second_url_is_used_when_the_first_is_down(schema_registry, registry_tool):
    from lakehouse import free_port

    sid = schema_registry.client().register_schema("failover-value", _sr(AVRO_V1, "AVRO"))
    urls = f"http://127.0.0.1:{free_port()},{schema_registry.url}"
    got = registry_tool.json(urls, "max.retries=0", "by-id", str(sid))
    assert got["schema_type"] == "AVRO"


def test_basic_auth(schema_registry_auth, registry_tool):
    reg = schema_registry_auth
    user_info = f"basic.auth.user.info={reg.user}:{reg.password}"
    sid = registry_tool.json(reg.url, user_info, "register", "auth-value", "@SCHEMA", "AVRO", schema=AVRO_V1)["id"]
    # The Python client with the same credentials sees it.
    assert reg.client().get_schema(sid).schema_type == "AVRO"
    # Credentials in the URL (basic.auth.credentials.source=URL).
    url_with_user = reg.url.replace("http://", f"http://{reg.user}:{reg.password}@")
    assert registry_tool.json(url_with_user, "basic.auth.credentials.source=URL", "by-id", str(sid))["schema_type"] == "AVRO"

    wrong = "thaw-wrong-pw-91c2"
    r = registry_tool(reg.url, f"basic.auth.user.info={reg.user}:{wrong}", "by-id", str(sid), ok=False)
    assert r.returncode == 1
    assert "HTTP 401" in r.stderr
    assert f"as user '{reg.user}'" in r.stderr
    assert wrong not in r.stderr + r.stdout

    r = registry_tool(url_with_user.replace(reg.password, wrong), "basic.auth.credentials.source=URL", "by-id",
                      str(sid), ok=False)
    assert r.returncode == 1 and "HTTP 401" in r.stderr
    assert wrong not in r.stderr + r.stdout

    r = registry_tool(reg.url, "by-id", str(sid), ok=False)
    assert r.returncode == 1
    assert "HTTP 401" in r.stderr and "sent no credentials" in r.stderr


def test_retries_through_503s_throttling_and_lost_responses(schema_registry, registry_tool):
    """A fault proxy in front of the registry answers 503 and 429 or cuts responses short for half the
    requests: every call still succeeds (registrations too: they are idempotent), after retries."""
    from fault_proxy import FaultProxy

    proxy = FaultProxy(schema_registry.url, fault_rate=0.5, faults=("503", "slowdown", "reset"), seed=23,
                       flavor="rest").start()
    try:
        retry = ["max.retries=8", "retries.wait.ms=5", "retries.max.wait.ms=50"]
        for n in range(6):
            schema = AVRO_V1.replace("Order", f"Order{n}")
            sid = registry_tool.json(proxy.url, *retry, "register", f"faulty-{n}-value", "@SCHEMA", "AVRO",
                                     schema=schema)["id"]
            assert registry_tool.json(proxy.url, *retry, "by-id", str(sid))["schema"] == \
                schema_registry.client().get_schema(sid).schema_str
        faults = proxy.stats()["faults"]
        assert sum(faults.values()) >= 3, faults
    finally:
        proxy.stop()


def test_bearer_token(schema_registry, registry_tool):
    """A bearer token goes in Authorization (checked by a proxy in front of the registry, which has no
    token auth of its own here); a refused one is a 401 that never shows the token."""
    from fault_proxy import FaultProxy

    token = "thaw-bearer-5e1d"
    proxy = FaultProxy(schema_registry.url, bearer=token, flavor="rest").start()
    try:
        sid = schema_registry.client().register_schema("bearer-value", _sr(AVRO_V1, "AVRO"))
        assert registry_tool.json(proxy.url, f"bearer.auth.token={token}", "by-id", str(sid))["schema_type"] == "AVRO"
        wrong = "thaw-bearer-wrong-77"
        r = registry_tool(proxy.url, f"bearer.auth.token={wrong}", "max.retries=0", "by-id", str(sid), ok=False)
        assert r.returncode == 1
        assert "HTTP 401" in r.stderr and "bearer token" in r.stderr
        assert wrong not in r.stderr + r.stdout
    finally:
        proxy.stop()
