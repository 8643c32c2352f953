"""The Kafka test harness itself (tests/integration/kafka_broker.py): a real
broker from scripts/kafka.sh, records round-trip byte-identical through
consume_all, and read_committed hides aborted and open transactions."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

# Also registered by conftest.py; registering twice is harmless.
pytest_plugins = ["kafka_broker"]

KAFKA_SH = Path(__file__).resolve().parents[2] / "scripts" / "kafka.sh"


def _produce(producer, topic, records):
    """records: (partition, key, value, headers, timestamp_ms | None).
    Produces them in order, flushes, and fails on any delivery error."""
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err)

    for part, key, value, headers, ts in records:
        kw = {"partition": part, "key": key, "value": value,
              "on_delivery": on_delivery}
        if headers is not None:
            kw["headers"] = headers
        if ts is not None:
            kw["timestamp"] = ts
        producer.produce(topic, **kw)
        producer.poll(0)
    assert producer.flush(30) == 0, "records left unsent"
    assert not errors, errors


def test_broker_is_local(kafka):
    host, port = kafka.bootstrap.rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) > 0
    assert kafka.start_seconds is None or kafka.start_seconds < 60
    # auto.create.topics.enable=false: reading a missing topic is an error.
    with pytest.raises(KeyError):
        kafka.partitions("no-such-topic")
    # The command-line tools reach the same broker.
    if kafka.dir:
        kafka.create_topic("cli-visible", partitions=2)
        out = subprocess.run([str(KAFKA_SH), "topics", kafka.dir, "--list"],
                             capture_output=True, text=True, timeout=120, check=True)
        assert "cli-visible" in out.stdout.split()


def test_round_trip_byte_identical(kafka):
    topic = "harness-round-trip"
    kafka.create_topic(topic, partitions=3)
    big = random.Random(7).randbytes(1024 * 1024)           # 1 MiB value
    binary = bytes(range(256))
    ts = 1_700_000_000_123
    records = [
        # partition, key, value, headers, timestamp
        (0, b"k0", b"v0", [("dup", b"1"), ("dup", b"2"), ("null", None), ("dup", b"3")], ts),
        (0, None, b"null key", [("empty", b"")], ts + 1),
        (0, b"tombstone", None, None, ts + 2),
        (1, b"big", big, [("size", b"1048576")], ts + 3),
        (1, binary, binary, [("bin\u00e9", binary)], ts + 4),
        (2, None, None, [], ts + 5),
        (2, b"", b"", [("a", None), ("a", None)], ts + 6),
    ]
    producer = kafka.producer()
    try:
        _produce(producer, topic, records)
    finally:
        producer.close()

    want = []
    next_offset = {}
    for part, key, value, headers, t in records:
        off = next_offset.get(part, 0)
        next_offset[part] = off + 1
        want.append({"partition": part, "offset": off, "timestamp": t,
                     "timestamp_type": "CreateTime", "key": key, "value": value,
                     "headers": list(headers or [])})
    want.sort(key=lambda r: (r["partition"], r["offset"]))

    for isolation in ("read_committed", "read_uncommitted"):
        got = kafka.consume_all(topic, isolation=isolation, timeout=60)
        assert [(r["partition"], r["offset"]) for r in got] == \
               [(r["partition"], r["offset"]) for r in want]
        for g, w in zip(got, want):
            assert g == w, (g["partition"], g["offset"])
        assert got[3]["value"] == big and len(got[3]["value"]) == 1024 * 1024

    # Reading again gives the same records; an empty topic gives none.
    assert kafka.consume_all(topic) == want
    kafka.create_topic("harness-empty", partitions=2)
    assert kafka.consume_all("harness-empty") == []


def test_topic_config_log_append_time(kafka):
    topic = "harness-log-append-time"
    kafka.create_topic(topic, partitions=1,
                       config={"message.timestamp.type": "LogAppendTime"})
    producer = kafka.producer()
    try:
        _produce(producer, topic, [(0, b"k", b"v", None, 1_000)])
    finally:
        producer.close()
    (rec,) = kafka.consume_all(topic)
    assert rec["timestamp_type"] == "LogAppendTime"
    assert rec["timestamp"] > 1_000 and rec["key"] == b"k" and rec["value"] == b"v"


def test_transactions_read_committed(kafka):
    topic = "harness-txn"
    kafka.create_topic(topic, partitions=2)
    p = kafka.producer(**{"transactional.id": "harness-txn-1"})
    try:
        _transactions(kafka, topic, p)
    finally:
        p.close()


def _transactions(kafka, topic, p):
    p.init_transactions(30)

    def txn(values, commit):
        p.begin_transaction()
        for i, v in enumerate(values):
            p.produce(topic, partition=i % 2, key=v, value=v, headers=[("txn", v)])
        # Flush first: abort_transaction() would purge unsent records, and
        # the aborted ones must reach the log to prove they are filtered.
        assert p.flush(30) == 0
        if commit is True:
            p.commit_transaction(30)
        elif commit is False:
            p.abort_transaction(30)
        # None: leave the transaction open

    txn([b"a", b"b"], True)
    txn([b"c", b"d"], False)
    txn([b"e", b"f"], True)
    txn([b"g", b"h"], None)      # open: past the last stable offset

    def values(recs):
        return sorted(r["value"] for r in recs)

    committed = kafka.consume_all(topic, "read_committed", timeout=60, settle=0)
    assert values(committed) == [b"a", b"b", b"e", b"f"]
    assert all(r["headers"] == [("txn", r["value"])] for r in committed)
    uncommitted = kafka.consume_all(topic, "read_uncommitted", timeout=60)
    assert values(uncommitted) == [b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h"]
    # Offsets leave gaps for the transaction markers.
    assert [r["offset"] for r in uncommitted if r["partition"] == 0] == [0, 2, 4, 6]

    p.abort_transaction(30)
    assert values(kafka.consume_all(topic, "read_committed", timeout=60)) == \
        [b"a", b"b", b"e", b"f"]
    assert values(kafka.consume_all(topic, "read_uncommitted", timeout=60)) == \
        [b"a", b"b", b"c", b"d", b"e", b"f", b"g", b"h"]
