#!/usr/bin/env python3
"""confluent-kafka-python (its bundled librdkafka) as a consumer driver; prints
each record in the format of jsonl.py.

    confluent_consume.py -b HOST:PORT -t TOPIC [-t TOPIC...]
        [--mode assign|subscribe] [--partition P]...
        [--start beginning|end|offset:N|time:MS]   (assign mode: every selected
              partition; time:MS goes through offsets_for_times, a partition
              with no record at or after MS starts at its end)
        [--group G] [--commit] [--count N] [--follow] [--timeout S]
        [--seek-to P:OFFSET]    (assign mode: after the first record of P,
              seek P to OFFSET and go on from there: checks seek mid-read)
        [-X prop=value]...

Stops when every partition (of the assignment) has reached the end offset it
had when the driver started (--follow: only after --count records), or after
--count records. subscribe mode joins group G (default: a random name) with
auto.offset.reset=earliest; --commit commits each record's offset + 1
synchronously after printing it (so a stop after --count leaves the committed
offset right after the last printed record). Exit 1 on a consumer error.

Also prints, to stderr, one JSON line {"assigned": [[topic, partition], ...]}
per assignment in subscribe mode, and {"log_truncation": "..."} when
librdkafka reports a truncation it detected (KIP-320; it has then moved the
partition back to the broker's end offset and goes on).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonl import emit, fail  # noqa: E402

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, TopicPartition  # noqa: E402

TS_TYPES = {1: "CreateTime", 2: "LogAppendTime"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-b", "--bootstrap", required=True)
    ap.add_argument("-t", "--topic", action="append", required=True)
    ap.add_argument("--mode", choices=("assign", "subscribe"), default="assign")
    ap.add_argument("--partition", type=int, action="append")
    ap.add_argument("--start", default="beginning")
    ap.add_argument("--group")
    ap.add_argument("--commit", action="store_true")
    ap.add_argument("--count", type=int)
    ap.add_argument("--follow", action="store_true")
    ap.add_argument("--seek-to")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("-X", action="append", default=[])
    a = ap.parse_args()

    conf = {"bootstrap.servers": a.bootstrap, "group.id": a.group or f"thaw-driver-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False, "auto.offset.reset": "earliest", "enable.partition.eof": True,
            "check.crcs": True, "fetch.message.max.bytes": 10 << 20, "receive.message.max.bytes": 64 << 20}
    for x in a.X:
        k, v = x.split("=", 1)
        conf[k] = v
    c = Consumer(conf)
    # End offsets at start, for every partition of every topic.
    ends: dict[tuple[str, int], int] = {}
    for t in a.topic:
        md = c.list_topics(t, timeout=30).topics[t]
        if md.error is not None:
            fail(f"topic {t}: {md.error}")
        for p in sorted(md.partitions):
            if a.partition and p not in a.partition:
                continue
            ends[(t, p)] = c.get_watermark_offsets(TopicPartition(t, p), timeout=30)[1]
    pending: set[tuple[str, int]] = set()

    if a.mode == "assign":
        tps = [TopicPartition(t, p) for (t, p) in ends]
        if a.start == "beginning":
            for tp in tps:
                tp.offset = OFFSET_BEGINNING
        elif a.start == "end":
            for tp in tps:
                tp.offset = OFFSET_END
        elif a.start.startswith("offset:"):
            for tp in tps:
                tp.offset = int(a.start.split(":", 1)[1])
        elif a.start.startswith("time:"):
            ms = int(a.start.split(":", 1)[1])
            q = [TopicPartition(tp.topic, tp.partition, ms) for tp in tps]
            tps = c.offsets_for_times(q, timeout=30)
            for tp in tps:
                if tp.error is not None:
                    fail(f"offsets_for_times {tp.topic}/{tp.partition}: {tp.error}")
                if tp.offset < 0:
                    tp.offset = OFFSET_END
            sys.stderr.write(json.dumps({"offsets_for_times": [[tp.topic, tp.partition, tp.offset]
                                                               for tp in tps]}) + "\n")
        else:
            fail(f"bad --start {a.start}")
        c.assign(tps)
        pending = set(ends)
    else:
        def on_assign(cons, parts):
            sys.stderr.write(json.dumps({"assigned": [[p.topic, p.partition] for p in parts]}) + "\n")
        c.subscribe(a.topic, on_assign=on_assign)
        pending = set(ends)
    # A partition already empty (end == log start) gives an EOF event at once.
    seek_p, seek_off = (None, None)
    if a.seek_to:
        sp, so = a.seek_to.split(":")
        seek_p, seek_off = int(sp), int(so)
    n = 0
    deadline = time.monotonic() + a.timeout
    try:
        while True:
            if a.count is not None and n >= a.count:
                break
            if not a.follow and not pending:
                break
            if time.monotonic() > deadline:
                fail(f"timeout after {a.timeout} s: {n} records, partitions not at their end: "
                     f"{sorted(pending)} (ends {ends})")
            m = c.poll(0.5)
            if m is None:
                continue
            key = (m.topic(), m.partition())
            if m.error() is not None:
                if m.error().code() == KafkaError._PARTITION_EOF:
                    if m.offset() >= ends.get(key, 0):
                        pending.discard(key)
                    continue
                if m.error().code() == getattr(KafkaError, "_LOG_TRUNCATION", None):
                    sys.stderr.write(json.dumps({"log_truncation": str(m.error())}) + "\n")
                    continue
                fail(f"consumer error: {m.error()}")
            tt, ts = m.timestamp()
            emit(m.topic(), m.partition(), m.offset(), ts if tt in TS_TYPES else None, TS_TYPES.get(tt),
                 m.key(), m.value(), m.headers())
            n += 1
            if m.offset() + 1 >= ends.get(key, 0):
                pending.discard(key)
            if a.commit:
                c.commit(message=m, asynchronous=False)  # offset + 1, with the message's leader epoch
            if seek_p is not None and m.partition() == seek_p:
                c.seek(TopicPartition(m.topic(), seek_p, seek_off))
                seek_p = None
                pending.add(key)
    finally:
        c.close()


if __name__ == "__main__":
    main()
