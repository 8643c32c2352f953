#!/usr/bin/env python3
"""`thaw archive --layout row --value-format registry` against the canonical
layout on the same topic of Confluent-framed Avro values (issue 23):
records/s, CPU microseconds per record, peak RSS, and how many values kept
value_raw.

    THAW_BIN=build/bin/thaw .deps/venv/bin/python bench/registry_archive_bench.py [RECORDS]

Starts its own broker (scripts/kafka.sh) and schema registry (AxonOps, as the
tests do), produces RECORDS (default 200,000) values with confluent-kafka's
AvroSerializer over 4 partitions -- the first half with schema v1, the
second with v2 (one more optional field: one schema-evolution commit) --
about 200 bytes each (long, string, decimal, array, nested record with an
enum, a 120-byte note), keyed by AvroSerializer's string keys (schema
"string"), then archives the topic into three new tables of one SQLite
catalog, one after the other: the canonical layout, the row layout through
the registry, and the same with the keys decoded too (`--key-format
registry`). Prints one JSON line.
"""

import json
import os
import pathlib
import sys
import tempfile
from decimal import Decimal

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))

from kafka_broker import KafkaBroker  # noqa: E402
from row_layout_bench import timed_archive  # noqa: E402  (bench/ is the script's directory)
from schema_registry import SchemaRegistry  # noqa: E402

import fixtures  # noqa: E402

V1 = {"type": "record", "name": "Order", "namespace": "bench", "fields": [
    {"name": "id", "type": "long"},
    {"name": "item", "type": "string"},
    {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [
        {"name": "name", "type": "string"},
        {"name": "tier", "type": {"type": "enum", "name": "Tier", "symbols": ["FREE", "GOLD"]}}]}},
    {"name": "note", "type": "string"}]}
V2 = json.loads(json.dumps(V1))
V2["fields"].append({"name": "channel", "type": ["null", "string"], "default": None})


def record(i: int, v2: bool) -> dict:
    d = {"id": i, "item": f"item-{i % 9973}", "price": Decimal(i % 100000) / 100, "tags": [f"t{i % 7}", f"t{i % 11}"],
         "customer": {"name": f"customer-{i % 977}", "tier": "GOLD" if i % 3 == 0 else "FREE"},
         "note": "n" * (100 + i % 40)}
    if v2:
        d["channel"] = None if i % 5 == 0 else "web"
    return d


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    thaw = os.environ.get("THAW_BIN", str(REPO / "build" / "bin" / "thaw"))
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    with tempfile.TemporaryDirectory() as d:
        broker = KafkaBroker.start(os.path.join(d, "kafka"))
        os.makedirs(os.path.join(d, "registry"))
        registry = SchemaRegistry.start(pathlib.Path(d) / "registry")
        try:
            topic = "regbench"
            broker.create_topic(topic, 4)
            prod = broker.producer(linger_ms=20)
            ctx = SerializationContext(topic, MessageField.VALUE)
            key_ser = AvroSerializer(registry.client(), '"string"')
            key_ctx = SerializationContext(topic, MessageField.KEY)
            value_bytes = 0
            for version, schema in ((False, V1), (True, V2)):
                ser = AvroSerializer(registry.client(), json.dumps(schema))
                lo, hi = (0, n // 2) if not version else (n // 2, n)
                for i in range(lo, hi):
                    v = ser(record(i, version), ctx)
                    value_bytes += len(v)
                    prod.produce(topic, key=key_ser(f"order-{i}", key_ctx), value=v, partition=i % 4)
                    if i % 1000 == 999:
                        prod.poll(0)
            prod.flush(120)
            wh = os.path.join(d, "wh")
            os.makedirs(wh)
            fixtures.open_catalog(wh)
            uri = fixtures.catalog_uri(wh)
            out = {"records": n, "value_mb": round(value_bytes / 1e6, 1)}
            for layout in ("thaw", "registry", "registry_keys"):
                extra = ["--layout", "thaw"] if layout == "thaw" else [
                    "--layout", "row", "--value-format", "registry", "--schema-registry", registry.url]
                if layout == "registry_keys":
                    extra += ["--key-format", "registry"]
                args = [thaw, "archive", "--brokers", broker.bootstrap, "--topic", topic, "--catalog", uri,
                        "--table", f"ns.{layout}", "--create", "--warehouse", wh, "--json", *extra]
                run = timed_archive(args, d, layout)
                if run is None:
                    return 1
                wall, ru, summary, stderr = run
                cpu = ru.ru_utime + ru.ru_stime
                out[layout] = {"wall_s": round(wall, 2), "records_per_s": round(n / wall),
                               "cpu_us_per_record": round(cpu / n * 1e6, 2), "peak_rss_mib": ru.ru_maxrss // 1024,
                               "records": summary.get("records")}
                for what, marker in (("log", "value_raw"), ("key_log", "into key_decoded")):
                    log = [ln for ln in stderr.decode(errors="replace").splitlines() if marker in ln]
                    if log:
                        out[layout][what] = log[-1][-160:]
            out["records_per_s_ratio"] = round(out["registry"]["records_per_s"] / out["thaw"]["records_per_s"], 2)
            out["cpu_per_record_ratio"] = round(out["registry"]["cpu_us_per_record"] /
                                                out["thaw"]["cpu_us_per_record"], 2)
            out["keys_records_per_s_ratio"] = round(out["registry_keys"]["records_per_s"] /
                                                    out["registry"]["records_per_s"], 2)
            out["keys_cpu_per_record_ratio"] = round(out["registry_keys"]["cpu_us_per_record"] /
                                                     out["registry"]["cpu_us_per_record"], 2)
            print(json.dumps(out))
        finally:
            registry.stop()
            broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
