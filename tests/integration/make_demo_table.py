#!/usr/bin/env python3
"""Create the demo table `demo.orders` (Thaw's canonical layout) for `make demo`.

    make_demo_table.py WAREHOUSE_DIR

Writes WAREHOUSE_DIR/catalog.db (pyiceberg SqlCatalog "default", warehouse
file://WAREHOUSE_DIR) and the table at WAREHOUSE_DIR/demo/orders: 4 Kafka
partitions, ~2000 JSON order events, keys "customer-N", headers
"content-type" and "trace-id" (plus "retry" on a few), written in several
appends. Idempotent: an existing demo.orders is dropped and its files deleted
first. Prints the catalog URI on stdout.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pyarrow as pa  # noqa: E402
from pyiceberg.exceptions import NoSuchTableError  # noqa: E402
from pyiceberg.io.pyarrow import schema_to_pyarrow  # noqa: E402

import fixtures  # noqa: E402

TABLE = "demo.orders"
PARTITIONS = 4
PER_PARTITION = 500
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def events(rng: random.Random) -> list[dict]:
    rows = []
    statuses = ["created", "paid", "packed", "shipped", "delivered", "cancelled"]
    skus = ["SKU-%04d" % i for i in range(1, 60)]
    for p in range(PARTITIONS):
        off = 0
        ts = START_MS + p * 137
        for i in range(PER_PARTITION):
            if rng.random() < 0.01:
                off += 1  # transaction marker
            ts += rng.randrange(50, 4000)
            customer = rng.randrange(1, 200) * PARTITIONS + p  # keys hash to "their" partition
            order = {
                "order_id": f"o-{p}-{off:06d}",
                "customer": f"customer-{customer}",
                "status": rng.choice(statuses),
                "items": [{"sku": rng.choice(skus), "qty": rng.randrange(1, 5),
                           "price": f"{rng.randrange(199, 19999) / 100:.2f}"}
                          for _ in range(rng.randrange(1, 4))],
                "currency": "EUR",
                "at": dt.datetime.fromtimestamp(ts / 1000, dt.timezone.utc).isoformat(timespec="milliseconds"),
            }
            headers = [{"key": "content-type", "value": b"application/json"},
                       {"key": "trace-id", "value": rng.randbytes(8).hex().encode()}]
            if rng.random() < 0.03:
                headers.append({"key": "retry", "value": b"1"})
            rows.append({
                "kafka_partition": p,
                "kafka_offset": off,
                "kafka_timestamp": fixtures.ts_tz(ts * 1000),
                "kafka_timestamp_type": 0,
                "key": f"customer-{customer}".encode(),
                "value": json.dumps(order, separators=(",", ":")).encode(),
                "headers": headers,
            })
            off += 1
    return rows


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: make_demo_table.py WAREHOUSE_DIR", file=sys.stderr)
        return 2
    wh = os.path.abspath(sys.argv[1])
    os.makedirs(wh, exist_ok=True)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists("demo")
    try:
        cat.drop_table(TABLE)
    except NoSuchTableError:
        pass
    shutil.rmtree(os.path.join(wh, "demo", "orders"), ignore_errors=True)
    # The tiered step (scripts/demo-tiered.sh) archives a fresh topic into
    # tiered.orders each run: start it from nothing.
    try:
        cat.drop_table("tiered.orders")
    except NoSuchTableError:
        pass
    shutil.rmtree(os.path.join(wh, "tiered.db"), ignore_errors=True)
    t = cat.create_table(TABLE, schema=fixtures.canonical_schema(), location=f"file://{wh}/demo/orders",
                         partition_spec=fixtures.CANONICAL_SPEC, sort_order=fixtures.CANONICAL_SORT,
                         properties={"format-version": "2", "thaw.layout": "thaw/1", "thaw.source.topic": "orders"})
    rows = events(random.Random(2026))
    arrow_schema = schema_to_pyarrow(t.schema())
    # 4 appends, each a contiguous offset range of every partition
    per_append = PER_PARTITION // 4
    for k in range(4):
        batch = [r for n, r in enumerate(rows) if (n % PER_PARTITION) // per_append == k]
        t.append(pa.Table.from_pylist(batch, schema=arrow_schema))
    print(fixtures.catalog_uri(wh))
    return 0


if __name__ == "__main__":
    sys.exit(main())
