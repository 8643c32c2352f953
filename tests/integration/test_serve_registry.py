"""`thaw serve --value-format avro --schema-registry URL` (issue 23): a table
whose values are decoded columns (Aiven's layout without value_raw) served
as a topic whose values are Avro framed with a registry id; a
confluent-kafka Consumer with the AvroDeserializer reads every record as the
row holds it, at the row's offset. Per topic, `:value-format=json` keeps the
JSON text, `:value-format=json-schema` frames it with a derived JSON
Schema's id, which confluent-kafka's JSONDeserializer validates, and
`:value-format=protobuf` encodes each row as a message of a derived .proto.
"""

from __future__ import annotations

import json

from serve_harness import Topic, thaw_serve  # noqa: F401  (fixture)
from test_replay_registry import aiven_decoded  # noqa: F401  (fixture)


def _consume(bootstrap: str, topic: str, n: int, timeout: float = 60) -> list:
    import time

    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    out, deadline = [], time.monotonic() + timeout
    try:
        while len(out) < n and time.monotonic() < deadline:
            m = c.poll(1.0)
            if m is None:
                continue
            assert m.error() is None, m.error()
            out.append(m)
    finally:
        c.close()
    return out


def test_serve_values_as_avro(thaw_serve, schema_registry, aiven_decoded):  # noqa: F811
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    import archive_topics
    uri, table, values = aiven_decoded
    # Topic names of their own: the registry (one per session) may have an `orders-value` subject already.
    name = archive_topics.topic_name("servedorders")
    topics = [Topic(name, table, "aiven")]
    extra = ["--value-format", "avro", "--schema-registry", schema_registry.url,
             "--topic", f"{name}_json={table}:value-format=json"]
    with thaw_serve(uri, topics, topic_args=True, extra=extra) as (bootstrap, _proc):
        got = _consume(bootstrap, name, len(values))
        assert len(got) == len(values)
        sid = schema_registry.client().get_latest_version(f"{name}-value").schema_id
        des = AvroDeserializer(schema_registry.client())
        by_offset = {}
        for m in got:
            assert m.value()[0] == 0 and int.from_bytes(m.value()[1:5], "big") == sid
            by_offset[m.offset()] = des(m.value(), SerializationContext(name, MessageField.VALUE))
        assert [by_offset[i] for i in range(len(values))] == values
        plain = _consume(bootstrap, f"{name}_json", len(values))
        assert sorted(json.loads(m.value())["order_id"] for m in plain) == [v["order_id"] for v in values]


def test_serve_values_framed_with_a_json_schema(thaw_serve, schema_registry, aiven_decoded):  # noqa: F811
    """Per topic, `:value-format=json-schema`: the rows stay the JSON Thaw writes, framed with the id of a JSON
    Schema derived from the columns and registered under TOPIC-value; confluent-kafka's JSONDeserializer (which
    validates each value against the schema of its id) reads every record as the row holds it, at its offset,
    while the server's default stays Avro for another topic of the same table."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    import archive_topics
    uri, table, values = aiven_decoded
    name = archive_topics.topic_name("servedjsonschema")
    topics = [Topic(f"{name}_avro", table, "aiven")]
    extra = ["--value-format", "avro", "--schema-registry", schema_registry.url,
             "--topic", f"{name}={table}:value-format=json-schema"]
    client = schema_registry.client()
    with thaw_serve(uri, topics, topic_args=True, extra=extra) as (bootstrap, _proc):
        got = _consume(bootstrap, name, len(values))
        assert len(got) == len(values)
        latest = client.get_latest_version(f"{name}-value")
        assert latest.schema.schema_type == "JSON"
        assert list(json.loads(latest.schema.schema_str)["properties"]) == ["order_id", "status", "lines"]
        des = JSONDeserializer(None, schema_registry_client=client)
        by_offset = {}
        for m in got:
            assert m.value()[0] == 0 and int.from_bytes(m.value()[1:5], "big") == latest.schema_id
            by_offset[m.offset()] = des(m.value(), SerializationContext(name, MessageField.VALUE))
        assert [by_offset[i] for i in range(len(values))] == values
        # The other topic of the same table keeps the server's default, Avro.
        avro = _consume(bootstrap, f"{name}_avro", len(values))
        avro_des = AvroDeserializer(client)
        assert sorted((avro_des(m.value(), SerializationContext(f"{name}_avro", MessageField.VALUE))
                       for m in avro), key=lambda v: v["order_id"]) == values
        assert client.get_latest_version(f"{name}_avro-value").schema.schema_type == "AVRO"


def test_serve_values_as_protobuf(thaw_serve, schema_registry, aiven_decoded):  # noqa: F811
    """Per topic, `:value-format=protobuf`: each row encoded as a message of a .proto derived from the columns and
    registered under TOPIC-value; confluent-kafka's ProtobufDeserializer reads every record as the row holds it, at
    its offset."""
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    import archive_topics
    from test_replay_registry import aiven_proto_class, aiven_proto_row
    uri, table, values = aiven_decoded
    name = archive_topics.topic_name("servedproto")
    topics = [Topic(f"{name}_json", table, "aiven")]
    extra = ["--schema-registry", schema_registry.url, "--topic", f"{name}={table}:value-format=protobuf"]
    client = schema_registry.client()
    with thaw_serve(uri, topics, topic_args=True, extra=extra) as (bootstrap, _proc):
        got = _consume(bootstrap, name, len(values))
        assert len(got) == len(values)
        latest = client.get_latest_version(f"{name}-value")
        assert latest.schema.schema_type == "PROTOBUF"
        des = ProtobufDeserializer(aiven_proto_class("thaw", name.replace("-", "_").replace(".", "_")),
                                   {"use.deprecated.format": False})
        by_offset = {}
        for m in got:
            assert m.value()[0] == 0 and int.from_bytes(m.value()[1:5], "big") == latest.schema_id
            by_offset[m.offset()] = aiven_proto_row(des(m.value(), SerializationContext(name, MessageField.VALUE)))
        assert [by_offset[i] for i in range(len(values))] == values
        # The other topic of the same table keeps the default, JSON text.
        plain = _consume(bootstrap, f"{name}_json", len(values))
        assert sorted(json.loads(m.value())["order_id"] for m in plain) == [v["order_id"] for v in values]
