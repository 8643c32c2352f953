"""`thaw serve --upstream`: one topic from two tiers (issue 21).

A real broker (kafka_fast_retention: its retention checker runs every second)
holds a topic whose early segments retention really deleted (log start > 0
on every partition, checked); `thaw archive` archived them into Iceberg
before. Consumers bootstrap from Thaw, which forwards everything to the
broker and answers what lies below the broker's log start from the table.
Every record read through Thaw is compared, offset for offset, with what
the broker held before retention deleted it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import time
import uuid
from pathlib import Path

import pytest

import archive_cli
from serve_harness import PY, confluent_cmd, free_port, java_cmd, kcat_cmd, wait_port

DAY_MS = 86_400_000


def _b64(b):
    return None if b is None else base64.b64encode(bytes(b)).decode("ascii")


def _norm_broker(r: dict) -> tuple:
    return (r["partition"], r["offset"], r["timestamp"], _b64(r["key"]), _b64(r["value"]),
            tuple((k, _b64(v)) for k, v in r["headers"]))


def _norm_line(r: dict) -> tuple:
    return (r["partition"], r["offset"], r["timestamp"], r["key"], r["value"],
            tuple((k, v) for k, v in r["headers"]))


def _produce(kafka, topic: str, partitions: int, count: int, ts_base: int, tag: str, rounds: int = 1,
             compression: str = "lz4") -> None:
    """`count` records per partition in `rounds` rounds (segment.ms=100: each
    round lands in a segment of its own), keys, a null value every 13th,
    headers with a null value."""
    prod = kafka.producer(compression_type=compression, linger_ms=5)
    errors: list = []

    def cb(err, _msg):
        if err is not None:
            errors.append(str(err))

    per_round = max(1, count // rounds)
    n = 0
    for r in range(rounds):
        for i in range(per_round if r < rounds - 1 else count - per_round * (rounds - 1)):
            for p in range(partitions):
                value = None if n % 13 == 5 else f"{tag}-{p}-{n}".encode() * (1 + n % 7)
                prod.produce(topic, key=f"k{n % 50}".encode(), value=value, partition=p, timestamp=ts_base + n,
                             headers=[("tag", tag.encode()), ("null", None)], on_delivery=cb)
            n += 1
        assert prod.flush(30) == 0
        time.sleep(0.15)
    assert not errors, errors


def _set_retention(kafka, topic: str, retention_ms: int) -> None:
    import confluent_kafka.admin as ka
    res = ka.ConfigResource(ka.ResourceType.TOPIC, topic, incremental_configs=[
        ka.ConfigEntry("retention.ms", str(retention_ms), incremental_operation=ka.AlterConfigOpType.SET)])
    fs = kafka.admin().incremental_alter_configs([res], request_timeout=30)
    for f in fs.values():
        f.result(timeout=30)


def _wait_log_start(kafka, topic: str, above: dict[int, int], timeout: float = 60.0) -> dict[int, tuple[int, int]]:
    """Waits until retention moved every partition's log start past `above`."""
    deadline = time.monotonic() + timeout
    while True:
        offs = kafka.offsets(topic, "read_uncommitted")
        if all(offs[p][0] >= above[p] for p in above):
            return offs
        if time.monotonic() > deadline:
            pytest.fail(f"retention did not delete the early segments of {topic} within {timeout} s: {offs}",
                        pytrace=False)
        # A record later than segment.ms rolls the active segment, so that
        # the old one can go.
        time.sleep(1.0)


class Tiered:
    """A topic with history only in Iceberg, the rest in the broker, and a
    `thaw serve --upstream` in front of the broker."""

    def __init__(self, thaw_bin: Path, kafka, tmp_path: Path, partitions: int = 3, history: int = 120,
                 archive_all: bool = True):
        self.kafka = kafka
        self.thaw_bin = thaw_bin
        self.tmp = tmp_path
        self.topic = f"tiered-{uuid.uuid4().hex[:8]}"
        self.partitions = partitions
        kafka.create_topic(self.topic, partitions, config={"retention.ms": "-1", "segment.ms": "100"})
        old = int(time.time() * 1000) - 30 * DAY_MS
        self.uri = archive_cli.new_catalog(str(tmp_path / "wh"))
        self.table = f"arch.{self.topic.replace('-', '_')}"
        half = history // 2
        _produce(kafka, self.topic, partitions, half, old, "old", rounds=2)
        if not archive_all:
            # The archive lags: it ran when the first half was there.
            self.thaw(*archive_cli.archive_args(kafka, self.uri, self.table, self.topic))
        _produce(kafka, self.topic, partitions, history - half, old + half, "older", rounds=2)
        self.history = kafka.consume_all(self.topic, isolation="read_uncommitted")
        self.archived_until = {p: half if not archive_all else history for p in range(partitions)}
        if archive_all:
            self.thaw(*archive_cli.archive_args(kafka, self.uri, self.table, self.topic))
        # Retention now deletes every segment of the month-old records.
        _set_retention(kafka, self.topic, DAY_MS)
        _produce(kafka, self.topic, partitions, 40, int(time.time() * 1000), "new", rounds=1)
        self.bounds = _wait_log_start(kafka, self.topic, {p: history for p in range(partitions)})
        self.recent = kafka.consume_all(self.topic, isolation="read_uncommitted")
        self.port = free_port()
        self.broker_ports = free_port()
        self.proc = None

    def thaw(self, *args: str) -> subprocess.CompletedProcess:
        p = subprocess.run([str(self.thaw_bin), *args], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, f"thaw {' '.join(args)}: exit {p.returncode}\n{p.stderr}"
        return p

    def expected(self) -> list[tuple]:
        """Every record the topic ever held, what retention deleted included."""
        seen = {}
        for r in self.history + self.recent:
            seen[(r["partition"], r["offset"])] = _norm_broker(r)
        return [seen[k] for k in sorted(seen)]

    def start(self, *extra: str) -> None:
        self.stderr_path = self.tmp / f"serve-{self.port}.log"
        self.proc = subprocess.Popen(
            [str(self.thaw_bin), "serve", "--upstream", self.kafka.bootstrap, "--catalog", self.uri,
             "--topic", f"{self.topic}={self.table}", "--listen", f"127.0.0.1:{self.port}",
             "--broker-ports", f"{self.broker_ports}-{self.broker_ports + 9}", "--state", str(self.tmp / "state"),
             "--refresh", "500ms", *extra],
            stdout=subprocess.DEVNULL, stderr=open(self.stderr_path, "wb"), stdin=subprocess.DEVNULL)
        wait_port(self.port, self.proc, 60, "thaw serve --upstream")

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def consume(self, cmd: list[str], timeout: float = 180) -> list[tuple]:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        assert p.returncode == 0, f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-4000:]}\nthaw:\n{self.log()[-4000:]}"
        lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
        return sorted(_norm_line(x) for x in lines)


@pytest.fixture
def tiered(thaw_bin, kafka_fast_retention, tmp_path):
    made: list[Tiered] = []

    def make(**kw) -> Tiered:
        t = Tiered(thaw_bin, kafka_fast_retention, tmp_path, **kw)
        made.append(t)
        return t

    yield make
    for t in made:
        t.stop()


def _diff(expected: list[tuple], got: list[tuple]) -> str:
    e, g = set(expected), set(got)
    missing = sorted(e - g)[:5]
    extra = sorted(g - e)[:5]
    dup = len(got) - len(set(got))
    return f"{len(expected)} expected, {len(got)} read; missing {missing}; unexpected {extra}; duplicates {dup}"


def test_kcat_reads_the_whole_history_across_the_boundary(tiered):
    t = tiered()
    for p, (lo, _hi) in t.bounds.items():
        assert lo > 0, f"partition {p}: retention deleted nothing ({t.bounds})"
    t.start()
    got = t.consume(kcat_cmd("-b", t.bootstrap, "-t", t.topic, "--start", "beginning"))
    expected = t.expected()
    assert got == expected, _diff(expected, got)
    # Straight from the broker, offset 0 is gone.
    direct = t.kafka.consume_all(t.topic, isolation="read_uncommitted")
    assert min(r["offset"] for r in direct) > 0


def test_confluent_group_reads_both_tiers_and_its_offsets_stay_in_the_upstream(tiered):
    t = tiered()
    t.start()
    group = f"g-{uuid.uuid4().hex[:6]}"
    got = t.consume(confluent_cmd("-b", t.bootstrap, "-t", t.topic, "--mode", "subscribe", "--group", group,
                                  "--commit"))
    expected = t.expected()
    assert got == expected, _diff(expected, got)
    # The group lives in the upstream cluster: its committed offsets are the
    # ends of the partitions, read straight from the broker.
    import confluent_kafka as ck
    admin = t.kafka.admin()
    fut = admin.list_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(group)])[group]
    committed = {tp.partition: tp.offset for tp in fut.result(timeout=30).topic_partitions}
    ends = t.kafka.offsets(t.topic, "read_uncommitted")
    assert committed == {p: ends[p][1] for p in ends}


def test_list_offsets_through_thaw_report_the_merged_log_start(tiered):
    t = tiered()
    t.start()
    import confluent_kafka as ck
    c = ck.Consumer({"bootstrap.servers": t.bootstrap, "group.id": "lo-" + uuid.uuid4().hex[:6]})
    try:
        for p in range(t.partitions):
            lo, hi = c.get_watermark_offsets(ck.TopicPartition(t.topic, p), timeout=30)
            assert lo == 0, f"partition {p}: earliest {lo} through Thaw"
            assert hi == t.bounds[p][1]
        # By time: the first record of the month-old history is in the table only.
        first_ts = min(r["timestamp"] for r in t.history if r["partition"] == 1)
        found = c.offsets_for_times([ck.TopicPartition(t.topic, 1, first_ts)], timeout=30)[0]
        assert found.offset == 0
        new_ts = min(r["timestamp"] for r in t.recent if r["partition"] == 1)
        found = c.offsets_for_times([ck.TopicPartition(t.topic, 1, new_ts)], timeout=30)[0]
        assert found.offset == t.bounds[1][0]
    finally:
        c.close()


def test_java_consumer_reads_from_offset_zero_and_tails_live_records(tiered):
    t = tiered()
    t.start()
    got = t.consume(java_cmd("--bootstrap", t.bootstrap, "--topic", t.topic, "--mode", "assign", "--start",
                             "beginning"), timeout=240)
    expected = t.expected()
    assert got == expected, _diff(expected, got)


def test_a_consumer_tails_records_produced_after_it_crossed(tiered):
    t = tiered()
    t.start()
    before = len(t.expected())
    proc = subprocess.Popen(confluent_cmd("-b", t.bootstrap, "-t", t.topic, "--start", "beginning", "--follow",
                                          "--count", str(before + 30), "--timeout", "120"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    _produce(t.kafka, t.topic, t.partitions, 10, int(time.time() * 1000), "live")
    out, err = proc.communicate(timeout=150)
    assert proc.returncode == 0, err[-3000:]
    got = sorted(_norm_line(json.loads(x)) for x in out.splitlines() if x.strip())
    now = t.kafka.consume_all(t.topic, isolation="read_uncommitted")
    t.recent = now
    expected = t.expected()
    assert got == expected, _diff(expected, got)


def test_produce_and_admin_pass_through(tiered, kafka_fast_retention):
    t = tiered()
    t.start()
    kafka = kafka_fast_retention
    plain = f"plain-{uuid.uuid4().hex[:6]}"
    kafka.create_topic(plain, 2)
    import confluent_kafka as ck
    for acks in ("all", "0"):
        prod = ck.Producer({"bootstrap.servers": t.bootstrap, "acks": acks, "linger.ms": 5,
                            "enable.idempotence": acks == "all"})
        for i in range(200):
            prod.produce(plain, key=str(i).encode(), value=f"{acks}-{i}".encode(), partition=i % 2)
        assert prod.flush(30) == 0
    deadline = time.monotonic() + 30
    while True:
        recs = kafka.consume_all(plain, isolation="read_uncommitted")
        if len(recs) >= 400 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    values = sorted(r["value"].decode() for r in recs)
    assert values == sorted([f"all-{i}" for i in range(200)] + [f"0-{i}" for i in range(200)])
    # Metadata through Thaw names Thaw's ports only.
    md = ck.admin.AdminClient({"bootstrap.servers": t.bootstrap}).list_topics(timeout=30)
    for b in md.brokers.values():
        assert (b.host, b.port) == ("127.0.0.1", t.broker_ports + b.id), md.brokers
    assert plain in md.topics and t.topic in md.topics


def test_a_range_neither_tier_holds_is_skipped_and_logged(tiered):
    t = tiered(archive_all=False)
    t.start()
    got = t.consume(kcat_cmd("-b", t.bootstrap, "-t", t.topic, "--start", "beginning"))
    held = [r for r in t.expected()
            if r[1] < t.archived_until[r[0]] or r[1] >= t.bounds[r[0]][0]]
    assert got == held, _diff(held, got)
    log = t.log()
    for p in range(t.partitions):
        assert re.search(rf"{re.escape(t.topic)}-{p}: offsets {t.archived_until[p]}\.\.\d+ are in neither tier", log), log
