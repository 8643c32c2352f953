"""pytest plugin: a real single-node Apache Kafka broker (KRaft) for the tests.

Load it with ``pytest_plugins = ["kafka_broker"]`` (in conftest.py). It defines
the session-scoped fixture ``kafka``: a fresh broker started by
scripts/kafka.sh (jars from Maven Central, installed on first use by
scripts/deps/install-kafka.sh) into a pytest temp dir, bound to 127.0.0.1 on
a free port, stopped and removed at the end of the session. The broker runs
with auto.create.topics.enable=false and message.max.bytes=10 MiB.

    def test_x(kafka):
        kafka.create_topic("t", partitions=3, config={"cleanup.policy": "compact"})
        ... run thaw with kafka.bootstrap ...
        recs = kafka.consume_all("t")             # read_committed by default
        recs[0] == {"partition": 0, "offset": 0, "timestamp": 1700000000000,
                    "timestamp_type": "CreateTime", "key": b"k", "value": b"v",
                    "headers": [("h", b"1"), ("h", None)]}

Clients use confluent-kafka (librdkafka); it is imported lazily so that tests
that do not use the fixture do not need it. A missing JDK, missing jars that
cannot be installed, or a broker that does not come up FAIL the tests that use
the fixture; they never skip.

Environment:
  THAW_TEST_KAFKA_BOOTSTRAP  use this already-running broker instead of
                             starting one (host:port; stop() is a no-op)
  THAW_TEST_KAFKA_DIR        start the broker in this dir (must be absent or
                             empty) and keep it after the session, for debugging
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KAFKA_SH = REPO / "scripts" / "kafka.sh"

# Large enough for the 1 MiB values the tests replay (broker allows 10 MiB).
MAX_MESSAGE_BYTES = 10 * 1024 * 1024

_TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}


def _ck():
    try:
        import confluent_kafka
        import confluent_kafka.admin  # noqa: F401
    except ImportError as e:  # pragma: no cover - environment problem
        pytest.fail(
            "confluent-kafka is not installed in this Python "
            f"({e}); run scripts/deps/install.sh", pytrace=False)
    return confluent_kafka


class KafkaBroker:
    """A running broker: ``bootstrap`` plus a few client helpers."""

    def __init__(self, bootstrap: str, dir: str | None = None,
                 pid: int | None = None, start_seconds: float | None = None,
                 keep_dir: bool = False):
        self.bootstrap = bootstrap
        self.dir = dir
        self.pid = pid
        self.start_seconds = start_seconds
        self.keep_dir = keep_dir
        self.log = os.path.join(dir, "logs", "server.log") if dir else None
        self._admin = None

    # -- lifecycle ---------------------------------------------------------
    @classmethod
    def start(cls, dir: str, keep_dir: bool = False,
              timeout: float = 180.0) -> "KafkaBroker":
        env = dict(os.environ)
        # If this pytest process dies without teardown, a watchdog stops the
        # broker and removes its dir.
        env["THAW_KAFKA_OWNER_PID"] = str(os.getpid())
        try:
            p = subprocess.run([str(KAFKA_SH), "start", dir], env=env,
                               capture_output=True, text=True, timeout=timeout,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"scripts/kafka.sh start timed out after {timeout} s: "
                        f"{e.stderr}", pytrace=False)
        if p.returncode != 0:
            pytest.fail(f"scripts/kafka.sh start failed (exit {p.returncode}):\n"
                        f"{p.stdout}\n{p.stderr}", pytrace=False)
        kv = dict(line.split("=", 1) for line in p.stdout.splitlines()
                  if "=" in line)
        return cls(kv["BOOTSTRAP"], kv["KAFKA_DIR"], int(kv["KAFKA_PID"]),
                   float(kv["KAFKA_START_SECONDS"]), keep_dir)

    def stop(self) -> None:
        if self._admin is not None:
            self._admin = None
        if self.dir is None or not os.path.isdir(self.dir):
            return
        args = [str(KAFKA_SH), "stop", self.dir]
        if self.keep_dir:
            args.append("--keep")
        subprocess.run(args, check=False, timeout=120, stdin=subprocess.DEVNULL)

    def log_tail(self, lines: int = 40) -> str:
        if not self.log or not os.path.exists(self.log):
            return ""
        with open(self.log, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    # -- clients -------------------------------------------------------------
    def admin(self):
        if self._admin is None:
            self._admin = _ck().admin.AdminClient(
                {"bootstrap.servers": self.bootstrap})
        return self._admin

    def producer(self, **conf):
        """A confluent_kafka.Producer for this broker (dots as underscores
        also accepted: ``transactional_id="t"``). Idempotent by default, so
        records land in each partition in the order they were produced."""
        c = {"bootstrap.servers": self.bootstrap,
             "message.max.bytes": MAX_MESSAGE_BYTES,
             "enable.idempotence": True,
             "linger.ms": 0}
        c.update({k.replace("_", "."): v for k, v in conf.items()})
        return _ck().Producer(c)

    def create_topic(self, name: str, partitions: int = 1,
                     config: dict | None = None, timeout: float = 30.0) -> None:
        """Create a topic (replication factor 1) and wait until every
        partition has a leader. Like a topic a user prepares for a replay of
        old records, it keeps them (retention.ms=-1) unless `config` says
        otherwise: thaw replay refuses topics whose retention would delete
        what it sends."""
        ck = _ck()
        config = {"retention.ms": "-1", **(config or {})}
        nt = ck.admin.NewTopic(name, num_partitions=partitions,
                               replication_factor=1,
                               config={k: str(v) for k, v in config.items()})
        fs = self.admin().create_topics([nt], operation_timeout=timeout,
                                        request_timeout=timeout)
        fs[name].result(timeout=timeout)
        deadline = time.monotonic() + timeout
        while True:
            md = self.admin().list_topics(topic=name, timeout=timeout)
            t = md.topics.get(name)
            if (t is not None and t.error is None
                    and len(t.partitions) == partitions
                    and all(p.leader >= 0 and p.error is None
                            for p in t.partitions.values())):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"topic {name!r} has no leaders after "
                                   f"{timeout} s: {t and t.partitions}")
            time.sleep(0.05)

    def delete_topic(self, name: str, timeout: float = 30.0) -> None:
        fs = self.admin().delete_topics([name], operation_timeout=timeout,
                                        request_timeout=timeout)
        fs[name].result(timeout=timeout)

    def partitions(self, topic: str, timeout: float = 30.0) -> list[int]:
        md = self.admin().list_topics(topic=topic, timeout=timeout)
        t = md.topics.get(topic)
        if t is None or t.error is not None:
            raise KeyError(f"no topic {topic!r}: {t and t.error}")
        return sorted(t.partitions)

    def offsets(self, topic: str, isolation: str = "read_committed",
                timeout: float = 30.0) -> dict[int, tuple[int, int]]:
        """{partition: (earliest, end)}; with read_committed, end is the last
        stable offset (open transactions are not included)."""
        ck = _ck()
        level = {"read_committed": ck.IsolationLevel.READ_COMMITTED,
                 "read_uncommitted": ck.IsolationLevel.READ_UNCOMMITTED}[isolation]
        parts = self.partitions(topic, timeout)

        def query(spec):
            # Right after a topic is created its leadership can still be
            # settling: retry the retriable errors for a few seconds.
            deadline = time.monotonic() + min(timeout, 15.0)
            while True:
                req = {ck.TopicPartition(topic, p): spec for p in parts}
                fs = self.admin().list_offsets(req, isolation_level=level,
                                               request_timeout=timeout)
                try:
                    return {tp.partition: f.result(timeout=timeout).offset
                            for tp, f in fs.items()}
                except ck.KafkaException as e:
                    err = e.args[0]
                    settling = err.code() in (
                        ck.KafkaError.NOT_LEADER_FOR_PARTITION,
                        ck.KafkaError.LEADER_NOT_AVAILABLE,
                        ck.KafkaError.UNKNOWN_TOPIC_OR_PART)
                    if not (settling or err.retriable()) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)

        lo = query(ck.admin.OffsetSpec.earliest())
        hi = query(ck.admin.OffsetSpec.latest())
        return {p: (lo[p], hi[p]) for p in parts}

    def consume_all(self, topic: str, isolation: str = "read_committed",
                    timeout: float = 60.0) -> list[dict]:
        """Every record of every partition of ``topic`` from the earliest
        offset up to the end offsets observed at call time (the last stable
        offsets for read_committed), sorted by (partition, offset). Each is
        {partition, offset, timestamp, timestamp_type, key, value, headers},
        headers a list of (str, bytes | None) in wire order."""
        if isolation not in ("read_committed", "read_uncommitted"):
            raise ValueError(f"bad isolation {isolation!r}")
        ck = _ck()
        ends = self.offsets(topic, isolation, timeout)
        todo = {p: (lo, hi) for p, (lo, hi) in ends.items() if hi > lo}
        if not todo:
            return []
        c = ck.Consumer({
            "bootstrap.servers": self.bootstrap,
            "group.id": f"thaw-test-consume-all-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "isolation.level": isolation,
            "enable.partition.eof": True,
            "fetch.message.max.bytes": MAX_MESSAGE_BYTES,
            "fetch.max.bytes": 4 * MAX_MESSAGE_BYTES,
            "receive.message.max.bytes": 5 * MAX_MESSAGE_BYTES,
            "check.crcs": True,
        })
        out: list[dict] = []
        try:
            c.assign([ck.TopicPartition(topic, p, lo)
                      for p, (lo, _) in todo.items()])
            pending = set(todo)
            deadline = time.monotonic() + timeout
            while pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    pos = {tp.partition: tp.offset for tp in c.position(
                        [ck.TopicPartition(topic, p) for p in pending])}
                    raise TimeoutError(
                        f"consume_all({topic!r}, {isolation}): partitions "
                        f"{sorted(pending)} not read to their end offsets "
                        f"{ {p: todo[p][1] for p in pending} } after {timeout} s "
                        f"(positions {pos})")
                m = c.poll(min(left, 0.5))
                if m is None:
                    # Control records (transaction markers) at the tail are
                    # never delivered: rely on the position instead.
                    for tp in c.position([ck.TopicPartition(topic, p)
                                          for p in list(pending)]):
                        if tp.offset >= 0 and tp.offset >= todo[tp.partition][1]:
                            pending.discard(tp.partition)
                    continue
                p = m.partition()
                if m.error() is not None:
                    if m.error().code() == ck.KafkaError._PARTITION_EOF:
                        if p in pending and m.offset() >= todo[p][1]:
                            pending.discard(p)
                        continue
                    raise ck.KafkaException(m.error())
                end = todo[p][1]
                if m.offset() < end:
                    ts_type, ts = m.timestamp()
                    out.append({
                        "partition": p,
                        "offset": m.offset(),
                        "timestamp": ts if ts_type != 0 else None,
                        "timestamp_type": _TIMESTAMP_TYPES.get(ts_type),
                        "key": m.key(),
                        "value": m.value(),
                        "headers": list(m.headers() or []),
                    })
                if m.offset() + 1 >= end:
                    pending.discard(p)
        finally:
            c.close()
        out.sort(key=lambda r: (r["partition"], r["offset"]))
        return out


@pytest.fixture(scope="session")
def kafka(tmp_path_factory):
    external = os.environ.get("THAW_TEST_KAFKA_BOOTSTRAP")
    if external:
        yield KafkaBroker(external)
        return
    keep = os.environ.get("THAW_TEST_KAFKA_DIR")
    d = str(Path(keep).resolve()) if keep else str(tmp_path_factory.mktemp("kafka"))
    broker = KafkaBroker.start(d, keep_dir=bool(keep))
    try:
        yield broker
    finally:
        broker.stop()
