"""Kafka topics for the `thaw archive` tests, produced on the real broker of
kafka_broker.py (confluent-kafka / librdkafka producers).

* make_rich_topic(kafka, log_append_time=False, scale=1) -> topic name.
  3 partitions holding every record shape Kafka has: keys, null keys, empty
  keys; values, null values (tombstones), empty values, a 256 KiB value;
  headers with duplicate keys, null and empty values, non-ASCII keys; no
  headers. Batches come from two idempotent producers, one with lz4 and one
  with zstd compression (linger so that batches hold several records), and
  from a transactional producer that commits some transactions and aborts
  others after flushing them (so aborted records and their markers are in the
  log: read_committed skips them and their offsets stay gaps; every commit or
  abort marker takes an offset too). CreateTime timestamps are set by the
  producers (distinct, increasing per partition); with log_append_time=True
  the topic has message.timestamp.type=LogAppendTime (the broker stamps them).
  `scale` multiplies the record counts (1: about 600 records).

* make_compacted_topic(kafka, timeout=40) -> (topic, compacted: bool).
  cleanup.policy=compact, a few keys rewritten many times in small segments
  (segment.ms=100), min.cleanable.dirty.ratio=0.01, then waits until the log
  cleaner removed superseded records: the read_uncommitted records no longer
  cover every offset from the start offset to the end (gaps). `compacted` is
  False when the broker did not compact within `timeout` s (its cleaner backs
  off 15 s between runs); the topic is still a valid compact topic then.

* produce_steady(kafka, topic, rate, seconds, ...) -> list of (partition,
  offset, produce_time): a producer thread at a steady rate, for the
  --follow tests.

Record contents are deterministic (a seeded random.Random), so a failing test
can be rerun on the same data.
"""

from __future__ import annotations

import random
import threading
import time
import uuid

PARTITIONS = 3
# 2026-01-01T00:00:00Z in ms; CreateTime timestamps count up from here.
BASE_TS_MS = 1_767_225_600_000
BIG_VALUE = 256 * 1024


def topic_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def _check_delivery(errors: list):
    def cb(err, msg):
        if err is not None:
            errors.append(f"{msg.topic()}[{msg.partition()}]: {err}")
    return cb


def _flush(producer, errors: list, what: str) -> None:
    left = producer.flush(60)
    assert left == 0, f"{what}: {left} records not delivered after 60 s"
    assert not errors, f"{what}: delivery failed: {errors[:5]}"


def produce(kafka, topic: str, records) -> None:
    """Produces (partition, key, value) triples, in order, and waits until
    every one is delivered."""
    errors: list = []
    prod = kafka.producer()
    for p, k, v in records:
        prod.produce(topic, key=k, value=v, partition=p, on_delivery=_check_delivery(errors))
    _flush(prod, errors, f"producing {topic}")


class _Shapes:
    """The i-th record of a producer: cycles through every shape."""

    def __init__(self, seed: int, tag: str):
        self.rnd = random.Random(seed)
        self.tag = tag

    def key(self, i: int):
        m = i % 7
        if m == 0:
            return None
        if m == 1:
            return b""
        if m == 2:
            return bytes(self.rnd.randrange(256) for _ in range(self.rnd.randrange(1, 40)))  # binary
        return f"{self.tag}-k{i % 23}".encode()

    def value(self, i: int):
        m = i % 11
        if m == 0:
            return None  # tombstone
        if m == 1:
            return b""
        if i % 97 == 5:
            return bytes(self.rnd.randrange(256) for _ in range(64)) * (BIG_VALUE // 64)
        return f'{{"tag": "{self.tag}", "i": {i}, "r": {self.rnd.randrange(10**9)}}}'.encode() * (1 + i % 5)

    def headers(self, i: int):
        m = i % 6
        if m == 0:
            return None  # no headers
        if m == 1:
            return [("dup", b"1"), ("dup", None), ("dup", b"3")]
        if m == 2:
            return [("n", None)]
        if m == 3:
            return [("empty", b""), ("trace", f"{self.tag}-{i}".encode())]
        if m == 4:
            return [("ünï-çødé", "v\u00e9".encode()), ("bin", bytes([0, 255, 10, 13]))]
        return [(f"h{j}", bytes([j]) * j) for j in range(5)]


def make_rich_topic(kafka, log_append_time: bool = False, scale: int = 1, prefix: str = "rich") -> str:
    topic = topic_name(prefix)
    config = {"compression.type": "producer"}  # keep each producer's batches as they were compressed
    if log_append_time:
        config["message.timestamp.type"] = "LogAppendTime"
    kafka.create_topic(topic, PARTITIONS, config=config)
    ts = {p: BASE_TS_MS for p in range(PARTITIONS)}
    ts_lock = threading.Lock()

    def next_ts(p: int) -> int:
        with ts_lock:
            ts[p] += 7
            return ts[p]

    def produce_plain(codec: str, seed: int, n: int) -> None:
        errors: list = []
        prod = kafka.producer(compression_type=codec, linger_ms=20, batch_num_messages=50)
        shapes = _Shapes(seed, codec)
        for i in range(n):
            p = i % PARTITIONS if i % 5 else (i // 5) % PARTITIONS
            prod.produce(topic, key=shapes.key(i), value=shapes.value(i), headers=shapes.headers(i), partition=p,
                         timestamp=next_ts(p), on_delivery=_check_delivery(errors))
            if i % 40 == 39:
                prod.poll(0)
        _flush(prod, errors, f"{codec} producer")

    # Two producers at once: their batches interleave in each partition.
    n = 200 * scale
    threads = [threading.Thread(target=produce_plain, args=(codec, seed, n))
               for codec, seed in (("lz4", 1), ("zstd", 2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # Transactions: commit, abort (flushed first, so the aborted batches are in the log), ...
    errors: list = []
    tx = kafka.producer(transactional_id=f"thaw-test-{uuid.uuid4().hex[:8]}", compression_type="zstd", linger_ms=5)
    tx.init_transactions(30)
    shapes = _Shapes(3, "tx")
    i = 0
    for t in range(6 * scale):
        tx.begin_transaction()
        for _ in range(15):
            p = i % PARTITIONS
            tx.produce(topic, key=shapes.key(i), value=shapes.value(i), headers=shapes.headers(i), partition=p,
                       timestamp=next_ts(p), on_delivery=_check_delivery(errors))
            i += 1
        if t % 3 == 1:
            tx.flush(30)
            tx.abort_transaction(30)
        else:
            tx.commit_transaction(30)
    _flush(tx, errors, "transactional producer")

    # A few plain records after the transactions (offsets after markers).
    errors = []
    tail = kafka.producer(compression_type="lz4")
    shapes = _Shapes(4, "tail")
    for i in range(12):
        p = i % PARTITIONS
        tail.produce(topic, key=shapes.key(i), value=shapes.value(i), headers=shapes.headers(i), partition=p,
                     timestamp=next_ts(p), on_delivery=_check_delivery(errors))
    _flush(tail, errors, "tail producer")
    return topic


def has_gaps(kafka, topic: str) -> bool:
    """True when some partition's read_uncommitted records skip offsets
    (compaction removed records, or transaction markers / aborted data)."""
    recs = kafka.consume_all(topic, isolation="read_uncommitted")
    ends = kafka.offsets(topic, "read_uncommitted")
    for p, (lo, hi) in ends.items():
        offs = [r["offset"] for r in recs if r["partition"] == p]
        if len(offs) != hi - lo:
            return True
    return False


def make_compacted_topic(kafka, timeout: float = 40.0, prefix: str = "compacted") -> tuple[str, bool]:
    topic = topic_name(prefix)
    kafka.create_topic(topic, PARTITIONS, config={
        "cleanup.policy": "compact",
        "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01",
        "min.compaction.lag.ms": "0",
        "delete.retention.ms": "86400000",  # keep tombstones: they are records to archive
        "compression.type": "producer",
    })
    errors: list = []
    prod = kafka.producer(compression_type="zstd", linger_ms=5)
    rnd = random.Random(5)
    ts = BASE_TS_MS
    # Rounds of rewrites of the same keys, each round in its own segment
    # (segment.ms=100: a record written later than that rolls a new one).
    for rnd_no in range(8):
        for k in range(30):
            ts += 3
            value = None if (rnd_no == 7 and k % 10 == 0) else f"v{rnd_no}-{k}-{rnd.randrange(10**6)}".encode()
            prod.produce(topic, key=f"key-{k}".encode(), value=value, partition=k % PARTITIONS, timestamp=ts,
                         headers=[("round", str(rnd_no).encode())], on_delivery=_check_delivery(errors))
        _flush(prod, errors, "compacted topic producer")
        time.sleep(0.15)
    deadline = time.monotonic() + timeout
    while True:
        # The active segment is never cleaned: a late record rolls the last round out of it.
        for p in range(PARTITIONS):
            ts += 3
            prod.produce(topic, key=b"roll", value=str(ts).encode(), partition=p, timestamp=ts,
                         on_delivery=_check_delivery(errors))
        _flush(prod, errors, "compacted topic producer")
        if has_gaps(kafka, topic):
            return topic, True
        if time.monotonic() > deadline:
            return topic, False
        time.sleep(1.0)


def produce_steady(kafka, topic: str, rate: float, seconds: float, partitions: int = PARTITIONS,
                   value_size: int = 200, out: list | None = None, stop: threading.Event | None = None) -> list:
    """Produces `rate` records/s for `seconds` (round-robin over partitions,
    key = sequence number); returns (and appends to `out`) one
    (partition, offset, produce_time.monotonic) per record, as delivered."""
    out = [] if out is None else out
    errors: list = []
    prod = kafka.producer(linger_ms=0)

    def cb(err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            out.append((msg.partition(), msg.offset(), sent[msg.key()]))

    sent: dict[bytes, float] = {}
    t0 = time.monotonic()
    i = 0
    while time.monotonic() - t0 < seconds and not (stop is not None and stop.is_set()):
        due = t0 + i / rate
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        key = str(i).encode()
        sent[key] = time.monotonic()
        prod.produce(topic, key=key, value=b"x" * value_size, partition=i % partitions, on_delivery=cb)
        prod.poll(0)
        i += 1
    _flush(prod, errors, "steady producer")
    return out
