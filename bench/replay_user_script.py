"""The peer for the replay benchmark: the script a user would otherwise write
to replay a Thaw-layout Iceberg table into Kafka -- a pyiceberg scan feeding a
confluent-kafka (librdkafka) producer.

    replay_user_script.py CATALOG_URI NS.TABLE BOOTSTRAP TOPIC [--limit N]

What it does, deliberately the competent-user version, not a straw man:
  * table.scan(selected_fields=the seven Kafka columns, limit=N)
    .to_arrow_batch_reader(): streamed Arrow record batches (pyiceberg reads
    files on its thread pool), never the whole table in memory;
  * per batch, the columns are converted once with to_pylist() (the timestamp
    column is cast to int64 microseconds first, so no datetime objects);
  * per row, Producer.produce(topic, key, value, headers, partition=source
    partition, timestamp=ms); on BufferError (local queue full) poll and retry;
    poll(0) after every batch to serve delivery callbacks; flush() at the end;
  * the producer uses the same settings as Thaw's: acks=all,
    enable.idempotence=true, linger.ms=20, batch.size=1000000,
    queue.buffering.max.kbytes=262144, message.max.bytes=104857600, no
    compression.
  * Every delivery is checked; the run fails if any record is not acknowledged.
Order: records go out in pyiceberg's scan order (file order of the plan),
which is not per-partition offset order; Thaw replays each partition in offset
order. Sorting would only cost the script more, so the baseline is, if
anything, flattered.

Prints one JSON line: {records, bytes, seconds, peak_rss_mib}. bytes counts key +
value + header keys + header values, as Thaw's summary does; seconds is from
before the scan is planned to after flush() returns (like Thaw's).
"""
import argparse
import json
import resource
import sys
import time

import pyarrow as pa
from confluent_kafka import Producer
from pyiceberg.catalog.sql import SqlCatalog

ap = argparse.ArgumentParser()
ap.add_argument("catalog")
ap.add_argument("table")
ap.add_argument("bootstrap")
ap.add_argument("topic")
ap.add_argument("--limit", type=int, default=None, help="replay only the first N records in scan order")
args = ap.parse_args()

COLS = ("kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_timestamp_type", "key", "value", "headers")

failed = []
acked = 0


def on_delivery(err, msg):
    global acked
    if err is not None:
        failed.append(err)
    else:
        acked += 1


producer = Producer({
    "bootstrap.servers": args.bootstrap,
    "acks": "all",
    "enable.idempotence": True,
    "linger.ms": 20,
    "batch.size": 1_000_000,
    "queue.buffering.max.kbytes": 262144,
    "message.max.bytes": 104857600,
    "compression.type": "none",
})

t0 = time.monotonic()
table = SqlCatalog("default", uri=args.catalog).load_table(args.table)
reader = table.scan(selected_fields=COLS, limit=args.limit).to_arrow_batch_reader()

records = nbytes = 0
produce = producer.produce
poll = producer.poll
topic = args.topic
for batch in reader:
    parts = batch.column("kafka_partition").to_pylist()
    ts_ms = [t // 1000 for t in batch.column("kafka_timestamp").cast(pa.int64()).to_pylist()]
    keys = batch.column("key").to_pylist()
    values = batch.column("value").to_pylist()
    headers = batch.column("headers").to_pylist()
    for p, ts, k, v, hs in zip(parts, ts_ms, keys, values, headers):
        hl = [(h["key"], h["value"]) for h in hs] if hs else None
        while True:
            try:
                produce(topic, value=v, key=k, headers=hl, partition=p, timestamp=ts, on_delivery=on_delivery)
                break
            except BufferError:  # local queue full: serve callbacks, then retry
                poll(0.05)
        nbytes += (len(k) if k is not None else 0) + (len(v) if v is not None else 0)
        if hs:
            for h in hs:
                nbytes += len(h["key"].encode()) + (len(h["value"]) if h["value"] is not None else 0)
    records += len(parts)
    poll(0)
remaining = producer.flush(120)
secs = time.monotonic() - t0
if remaining or failed or acked != records:
    print(f"replay_user_script: {remaining} records unflushed, {len(failed)} failed "
          f"(first: {failed[0] if failed else None}), {acked} of {records} acknowledged", file=sys.stderr)
    sys.exit(1)
print(json.dumps({"records": records, "bytes": nbytes, "seconds": round(secs, 3),
                  "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
