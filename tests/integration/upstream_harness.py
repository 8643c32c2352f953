"""The tiered proxy's test harness (`thaw serve --upstream`, issue 21):
topics whose early segments retention really deleted after `thaw archive`
archived them, a `thaw serve --upstream` in front of the broker, and the
expected records (what the broker held before retention deleted it).

    t = tiered()                      # fixture: a Tiered on kafka_fast_retention
    t = Tiered(thaw_bin, broker, tmp_path, partitions=3, history=120, archive_all=True)
    t.bounds                          # {partition: (log start, end)} on the broker, log start > 0
    t.start(*extra_serve_args)        # thaw serve --upstream ... on t.bootstrap
    t.consume(kcat_cmd(...))          # a driver's records, normalized and sorted
    t.expected()                      # every record the topic ever held, normalized and sorted
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest

import archive_cli
from serve_harness import free_port, wait_port

DAY_MS = 86_400_000


def _b64(b):
    return None if b is None else base64.b64encode(bytes(b)).decode("ascii")


def free_port_block(n: int) -> int:
    """A port P with P..P+n-1 all free now (Thaw's bootstrap port, then
    broker N's on --broker-ports START+N).

    Blocks come from below the kernel's ephemeral range: inside it, a suite's
    thousands of client connections (and their TIME_WAIT sockets) leave few
    runs of n free ports (CI once found none in 200 tries). Thaw's listeners
    set SO_REUSEADDR, so the check does too."""
    import random
    import socket
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    low = max(low, 2048 + n)
    for _ in range(500):
        base = random.randrange(1024, low - n)
        held = []
        try:
            for port in range(base, base + n):
                t = socket.socket()
                t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                held.append(t)
                t.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for t in held:
                t.close()
    raise RuntimeError(f"no block of {n} free ports below {low}")


def norm_broker(r: dict) -> tuple:
    return (r["partition"], r["offset"], r["timestamp"], _b64(r["key"]), _b64(r["value"]),
            tuple((k, _b64(v)) for k, v in r["headers"]))


def norm_line(r: dict) -> tuple:
    return (r["partition"], r["offset"], r["timestamp"], r["key"], r["value"],
            tuple((k, v) for k, v in r["headers"]))


def produce_records(kafka, topic: str, partitions: int, count: int, ts_base: int, tag: str, rounds: int = 1,
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


def set_retention(kafka, topic: str, retention_ms: int) -> None:
    import confluent_kafka.admin as ka
    res = ka.ConfigResource(ka.ResourceType.TOPIC, topic, incremental_configs=[
        ka.ConfigEntry("retention.ms", str(retention_ms), incremental_operation=ka.AlterConfigOpType.SET)])
    fs = kafka.admin().incremental_alter_configs([res], request_timeout=30)
    for f in fs.values():
        f.result(timeout=30)


def wait_log_start(kafka, topic: str, above: dict[int, int], timeout: float = 60.0) -> dict[int, tuple[int, int]]:
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
                 archive_all: bool = True, truncate: str = "retention", compression: str = "lz4"):
        """`truncate`: how the broker loses the history once archived:
        "retention" (retention.ms=1 day deletes the month-old segments; needs
        a broker whose retention checker runs often, kafka_fast_retention) or
        "delete_records" (DeleteRecords up to the history's end, as
        kafka-delete-records.sh; any broker, e.g. the 3-node cluster).
        `compression`: the producer's codec for every record (gzip for a topic
        kafkajs and kafka-python read: they have no lz4)."""
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
        produce_records(kafka, self.topic, partitions, half, old, "old", rounds=2, compression=compression)
        if not archive_all:
            # The archive lags: it ran when the first half was there.
            self.thaw(*archive_cli.archive_args(kafka, self.uri, self.table, self.topic))
        produce_records(kafka, self.topic, partitions, history - half, old + half, "older", rounds=2,
                        compression=compression)
        self.history = kafka.consume_all(self.topic, isolation="read_uncommitted")
        self.archived_until = {p: half if not archive_all else history for p in range(partitions)}
        if archive_all:
            self.thaw(*archive_cli.archive_args(kafka, self.uri, self.table, self.topic))
        if truncate == "retention":
            # Retention now deletes every segment of the month-old records.
            set_retention(kafka, self.topic, DAY_MS)
        produce_records(kafka, self.topic, partitions, 40, int(time.time() * 1000), "new", rounds=1,
                        compression=compression)
        if truncate == "delete_records":
            import confluent_kafka as ck
            fs = kafka.admin().delete_records([ck.TopicPartition(self.topic, p, history) for p in range(partitions)],
                                              request_timeout=30)
            for f in fs.values():
                f.result(timeout=30)
        self.bounds = wait_log_start(kafka, self.topic, {p: history for p in range(partitions)})
        self.recent = kafka.consume_all(self.topic, isolation="read_uncommitted")
        self.port = free_port_block(11)
        self.broker_ports = self.port + 1
        self.proc = None
        self.others: list[subprocess.Popen] = []

    def thaw(self, *args: str) -> subprocess.CompletedProcess:
        p = subprocess.run([str(self.thaw_bin), *args], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, f"thaw {' '.join(args)}: exit {p.returncode}\n{p.stderr}"
        return p

    def expected(self) -> list[tuple]:
        """Every record the topic ever held, what retention deleted included."""
        seen = {}
        for r in self.history + self.recent:
            seen[(r["partition"], r["offset"])] = norm_broker(r)
        return [seen[k] for k in sorted(seen)]

    def start(self, *extra: str, topic_options: str = "") -> None:
        self.stderr_path = self.tmp / f"serve-{self.port}.log"
        self.proc = subprocess.Popen(
            [str(self.thaw_bin), "serve", "--upstream", self.kafka.bootstrap, "--catalog", self.uri,
             "--topic", f"{self.topic}={self.table}{topic_options}", "--listen", f"127.0.0.1:{self.port}",
             "--broker-ports", f"{self.broker_ports}-{self.broker_ports + 9}", "--state", str(self.tmp / "state"),
             "--refresh", "500ms", *extra],
            stdout=subprocess.DEVNULL, stderr=open(self.stderr_path, "wb"), stdin=subprocess.DEVNULL)
        wait_port(self.port, self.proc, 60, "thaw serve --upstream")

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def start_another(self, *extra: str, upstream: str | None = None) -> str:
        """A second `thaw serve --upstream` in front of the same cluster, on
        ports of its own; returns its bootstrap address (its log:
        log_of(address)). `upstream`: another --upstream address than the
        broker's (e.g. a fault-injecting TCP proxy in front of it)."""
        port = free_port_block(11)
        broker_ports = port + 1
        log = self.tmp / f"serve-{port}.log"
        proc = subprocess.Popen(
            [str(self.thaw_bin), "serve", "--upstream", upstream or self.kafka.bootstrap, "--catalog", self.uri,
             "--topic", f"{self.topic}={self.table}", "--listen", f"127.0.0.1:{port}",
             "--broker-ports", f"{broker_ports}-{broker_ports + 9}", "--state", str(self.tmp / f"state-{port}"),
             "--refresh", "500ms", *extra],
            stdout=subprocess.DEVNULL, stderr=open(log, "wb"), stdin=subprocess.DEVNULL)
        self.others.append(proc)
        wait_port(port, proc, 60, "a second thaw serve --upstream")
        return f"127.0.0.1:{port}"

    def log_of(self, bootstrap: str) -> str:
        """The log of the instance start_another() returned `bootstrap` for."""
        return (self.tmp / f"serve-{bootstrap.rsplit(':', 1)[1]}.log").read_text(errors="replace")

    def stop(self) -> None:
        for proc in [self.proc, *self.others]:
            if proc and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()

    def consume(self, cmd: list[str], timeout: float = 180) -> list[tuple]:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        assert p.returncode == 0, f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-4000:]}\nthaw:\n{self.log()[-4000:]}"
        lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
        return sorted(norm_line(x) for x in lines)


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


def diff(expected: list[tuple], got: list[tuple]) -> str:
    e, g = set(expected), set(got)
    missing = sorted(e - g)[:5]
    extra = sorted(g - e)[:5]
    dup = len(got) - len(set(got))
    return f"{len(expected)} expected, {len(got)} read; missing {missing}; unexpected {extra}; duplicates {dup}"


