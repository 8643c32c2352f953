#!/usr/bin/env python3
"""kafka-python 3.x (pure Python; infers the broker version from ApiVersions)
as a consumer driver; prints each record in the format of jsonl.py.

    kafka_python_consume.py -b HOST:PORT -t TOPIC [-t TOPIC...]
        [--mode assign|subscribe] [--group G] [--commit]
        [--start beginning|offset:N|time:MS] [--count N] [--timeout S]

assign mode: assign() every partition, then seek_to_beginning / seek /
offsets_for_times. subscribe mode: joins group G (auto_offset_reset=earliest,
manual commits after each record with --commit). Stops when every partition
reached its end offset of the start (end_offsets), or after --count records.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonl import emit, fail  # noqa: E402

from kafka import KafkaConsumer, TopicPartition  # noqa: E402
from kafka.structs import OffsetAndMetadata  # noqa: E402

TS_TYPES = {0: "CreateTime", 1: "LogAppendTime"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-b", "--bootstrap", required=True)
    ap.add_argument("-t", "--topic", action="append", required=True)
    ap.add_argument("--mode", choices=("assign", "subscribe"), default="assign")
    ap.add_argument("--group")
    ap.add_argument("--commit", action="store_true")
    ap.add_argument("--start", default="beginning")
    ap.add_argument("--count", type=int)
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()

    c = KafkaConsumer(bootstrap_servers=a.bootstrap.split(","), group_id=a.group or f"thaw-kp-{uuid.uuid4().hex[:8]}",
                      enable_auto_commit=False, auto_offset_reset="earliest", check_crcs=True,
                      max_partition_fetch_bytes=10 << 20, fetch_max_bytes=64 << 20, request_timeout_ms=30000)
    tps = []
    for t in a.topic:
        parts = c.partitions_for_topic(t)
        deadline = time.monotonic() + 30
        while not parts and time.monotonic() < deadline:
            time.sleep(0.2)
            parts = c.partitions_for_topic(t)
        if not parts:
            fail(f"topic {t}: no partitions in the metadata")
        tps += [TopicPartition(t, p) for p in sorted(parts)]
    ends = c.end_offsets(tps)
    if a.mode == "assign":
        c.assign(tps)
        if a.start == "beginning":
            c.seek_to_beginning(*tps)
        elif a.start.startswith("offset:"):
            for tp in tps:
                c.seek(tp, int(a.start.split(":", 1)[1]))
        elif a.start.startswith("time:"):
            ms = int(a.start.split(":", 1)[1])
            found = c.offsets_for_times({tp: ms for tp in tps})
            for tp in tps:
                if found.get(tp) is None:
                    c.seek_to_end(tp)
                else:
                    c.seek(tp, found[tp].offset)
        else:
            fail(f"bad --start {a.start}")
    else:
        c.subscribe(a.topic)
    pending = {tp for tp in tps}
    n = 0
    deadline = time.monotonic() + a.timeout
    try:
        while pending and (a.count is None or n < a.count):
            if time.monotonic() > deadline:
                fail(f"timeout after {a.timeout} s: {n} records; not at the end: {sorted(pending)} (ends {ends})")
            batch = c.poll(timeout_ms=500)
            for tp, msgs in batch.items():
                for m in msgs:
                    if a.count is not None and n >= a.count:
                        break
                    emit(m.topic, m.partition, m.offset, m.timestamp if m.timestamp_type in TS_TYPES else None,
                         TS_TYPES.get(m.timestamp_type), m.key, m.value, m.headers)
                    n += 1
                    if a.commit:
                        c.commit({tp: OffsetAndMetadata(m.offset + 1, "", -1)})
            for tp in list(pending):
                if tp in c.assignment() and c.position(tp) >= ends[tp]:
                    pending.discard(tp)
    finally:
        c.close(autocommit=False)


if __name__ == "__main__":
    main()
