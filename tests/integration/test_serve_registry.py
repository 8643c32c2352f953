"""`thaw serve --value-format avro --schema-registry URL` (issue 23): a table
whose values are decoded columns (Aiven's layout without value_raw) served
as a topic whose values are Avro framed with a registry id; a
confluent-kafka Consumer with the AvroDeserializer reads every record as the
row holds it, at the row's offset. Per topic, `:value_format=json` keeps the
JSON text.
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
             "--topic", f"{name}_json={table}:value_format=json"]
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
