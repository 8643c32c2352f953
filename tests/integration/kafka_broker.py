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

Two more fixtures, started only by the tests that use them:

* ``kafka_cluster``: a 3-node KRaft cluster (scripts/kafka.sh start-cluster;
  combined broker+controller nodes 1..3, default.replication.factor=3,
  min.insync.replicas=2, auto.create.topics.enable=false), shared by the
  session and healed (paused nodes resumed, dead ones restarted, ISRs full)
  before and after each test. On top of the helpers above:

      kafka_cluster.create_topic("t", 4)            # replication factor 3
      kafka_cluster.leaders("t")                    # {0: 2, 1: 3, ...}
      kafka_cluster.move_leader("t", 0)             # -> (old, new) leader ids
      kafka_cluster.kill_node(2)                    # kill -9
      kafka_cluster.pause_node(3); kafka_cluster.resume_node(3)   # SIGSTOP/CONT
      kafka_cluster.restart_node(2)                 # start again, wait until up

* ``kafka_fast_retention``: a single broker whose retention checker runs
  every second (log.retention.check.interval.ms=1000).

Clients use confluent-kafka (librdkafka); it is imported lazily so that tests
that do not use the fixture do not need it. A missing JDK, missing jars that
cannot be installed, or a broker that does not come up FAIL the tests that use
the fixture; they never skip.

Environment:
  THAW_TEST_KAFKA_BOOTSTRAP  use this already-running broker instead of
                             starting one (host:port; stop() is a no-op)
  THAW_TEST_KAFKA_DIR        start the broker in this dir (must be absent or
                             empty) and keep it after the session, for debugging
  THAW_TEST_KAFKA_CLUSTER_DIR  the same for the cluster
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
                 keep_dir: bool = False, ssl_bootstrap: str | None = None,
                 sasl_ssl_bootstrap: str | None = None):
        self.bootstrap = bootstrap
        self.ssl_bootstrap = ssl_bootstrap  # the SSL listener's, when started with one
        self.sasl_ssl_bootstrap = sasl_ssl_bootstrap  # the SASL_SSL listener's (THAW_KAFKA_SASL_USERS)
        self.dir = dir
        self.pid = pid
        self.start_seconds = start_seconds
        self.keep_dir = keep_dir
        self.log = os.path.join(dir, "logs", "server.log") if dir else None
        self._admin = None

    # -- lifecycle ---------------------------------------------------------
    @classmethod
    def start(cls, dir: str, keep_dir: bool = False,
              timeout: float = 180.0, env_extra: dict[str, str] | None = None) -> "KafkaBroker":
        """env_extra: scripts/kafka.sh settings, e.g. THAW_KAFKA_SSL_KEYSTORE
        for an SSL listener too (then ssl_bootstrap is set), plus
        THAW_KAFKA_SASL_USERS for a SASL_SSL listener with SCRAM users and
        ACLs (then sasl_ssl_bootstrap is set)."""
        env = dict(os.environ)
        env.update(env_extra or {})
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
                   float(kv["KAFKA_START_SECONDS"]), keep_dir, kv.get("SSL_BOOTSTRAP"),
                   kv.get("SASL_SSL_BOOTSTRAP"))

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

    default_replication_factor = 1

    def create_topic(self, name: str, partitions: int = 1,
                     config: dict | None = None, timeout: float = 30.0,
                     rf: int | None = None) -> None:
        """Create a topic (replication factor `rf`, default 1 on a single
        broker, 3 on a cluster) and wait until every partition has a leader.
        Like a topic a user prepares for a replay of old records, it keeps
        them (retention.ms=-1) unless `config` says otherwise: thaw replay
        refuses topics whose retention would delete what it sends."""
        ck = _ck()
        config = {"retention.ms": "-1", **(config or {})}
        nt = ck.admin.NewTopic(name, num_partitions=partitions,
                               replication_factor=rf or self.default_replication_factor,
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

    def add_partitions(self, name: str, total: int, timeout: float = 30.0) -> None:
        """Grow a topic to `total` partitions with the Admin API
        (CreatePartitions, as `kafka-topics --alter --partitions`) and wait
        until every one has a leader."""
        ck = _ck()
        fs = self.admin().create_partitions([ck.admin.NewPartitions(name, total)], operation_timeout=timeout,
                                            request_timeout=timeout)
        fs[name].result(timeout=timeout)
        deadline = time.monotonic() + timeout
        while True:
            t = self.admin().list_topics(topic=name, timeout=timeout).topics.get(name)
            if t is not None and len(t.partitions) == total and all(p.leader >= 0 for p in t.partitions.values()):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"topic {name!r} did not reach {total} partitions with leaders")
            time.sleep(0.05)

    def topic_config(self, name: str, timeout: float = 30.0) -> dict[str, str]:
        """The topic's effective configs {name: value} (defaults included)."""
        ck = _ck()
        res = ck.admin.ConfigResource(ck.admin.ResourceType.TOPIC, name)
        fs = self.admin().describe_configs([res], request_timeout=timeout)
        entries = fs[res].result(timeout=timeout)
        return {k: e.value for k, e in entries.items()}

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
            deadline = time.monotonic() + min(timeout, 30.0)
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
                        ck.KafkaError.UNKNOWN_TOPIC_OR_PART,
                        # a new leader's high watermark not caught up yet
                        ck.KafkaError.OFFSET_NOT_AVAILABLE,
                        ck.KafkaError.FENCED_LEADER_EPOCH,
                        ck.KafkaError.UNKNOWN_LEADER_EPOCH)
                    if not (settling or err.retriable()) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)

        lo = query(ck.admin.OffsetSpec.earliest())
        hi = query(ck.admin.OffsetSpec.latest())
        return {p: (lo[p], hi[p]) for p in parts}

    def consume_all(self, topic: str, isolation: str = "read_committed",
                    timeout: float = 60.0, settle: float = 15.0) -> list[dict]:
        """Every record of every partition of ``topic`` from the earliest
        offset up to the end offsets observed at call time (the last stable
        offsets for read_committed), sorted by (partition, offset). Each is
        {partition, offset, timestamp, timestamp_type, key, value, headers},
        headers a list of (str, bytes | None) in wire order.

        read_committed first waits up to ``settle`` seconds for the last
        stable offsets to reach the high watermarks: a transaction's commit
        returns once the coordinator has logged it, and its markers reach
        the partitions (and move the last stable offset) a moment later --
        longer on a broker that was just paused. Pass 0 when a transaction
        is meant to stay open."""
        if isolation not in ("read_committed", "read_uncommitted"):
            raise ValueError(f"bad isolation {isolation!r}")
        ck = _ck()
        ends = self.offsets(topic, isolation, timeout)
        if isolation == "read_committed" and settle > 0:
            until = time.monotonic() + settle
            while time.monotonic() < until:
                high = self.offsets(topic, "read_uncommitted", timeout)
                if all(ends[p][1] >= high[p][1] for p in high):
                    break
                time.sleep(0.1)
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


# ---------------------------------------------------------------------------
# A 3-node cluster (scripts/kafka.sh start-cluster), for fault injection.


class KafkaCluster(KafkaBroker):
    """N combined broker+controller KRaft nodes (ids 1..N) on 127.0.0.1, with
    default.replication.factor=3 and min.insync.replicas=2. The KafkaBroker
    helpers work on it (create_topic defaults to replication factor 3); on
    top of them: leaders(), move_leader(), kill_node(), pause_node(),
    resume_node(), restart_node(), heal()."""

    default_replication_factor = 3

    def __init__(self, bootstrap: str, dir: str, nodes: dict[int, dict],
                 start_seconds: float, keep_dir: bool = False):
        super().__init__(bootstrap, dir, None, start_seconds, keep_dir)
        self.nodes = nodes          # id -> {"port", "pid", "dir", "log"}
        self.log = None
        self._mover = None
        self._mover_ready = False
        import threading
        self._mover_lock = threading.Lock()

    @classmethod
    def start(cls, dir: str, n: int = 3, keep_dir: bool = False,
              timeout: float = 300.0) -> "KafkaCluster":
        env = dict(os.environ)
        env["THAW_KAFKA_OWNER_PID"] = str(os.getpid())
        try:
            p = subprocess.run([str(KAFKA_SH), "start-cluster", dir, str(n)], env=env,
                               capture_output=True, text=True, timeout=timeout,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            pytest.fail(f"scripts/kafka.sh start-cluster timed out after {timeout} s: "
                        f"{e.stderr}", pytrace=False)
        if p.returncode != 0:
            pytest.fail(f"scripts/kafka.sh start-cluster failed (exit {p.returncode}):\n"
                        f"{p.stdout}\n{p.stderr}", pytrace=False)
        kv = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
        nodes = {}
        for i in map(int, kv["KAFKA_NODES"].split()):
            nodes[i] = {"port": int(kv[f"NODE_{i}_PORT"]), "pid": int(kv[f"NODE_{i}_PID"]),
                        "dir": kv[f"NODE_{i}_DIR"], "log": kv[f"NODE_{i}_LOG"]}
        c = cls(kv["BOOTSTRAP"], kv["KAFKA_DIR"], nodes, float(kv["KAFKA_START_SECONDS"]), keep_dir)
        c.wait_healthy()
        c.warm_up_mover()
        return c

    def stop(self) -> None:
        self._close_mover()
        super().stop()

    def log_tail(self, lines: int = 40) -> str:
        out = []
        for i, n in self.nodes.items():
            if os.path.exists(n["log"]):
                with open(n["log"], errors="replace") as f:
                    out.append(f"--- node {i} ---\n" + "".join(f.readlines()[-lines:]))
        return "\n".join(out)

    # -- nodes ----------------------------------------------------------------
    def _sh(self, *args: str, timeout: float = 240.0) -> str:
        p = subprocess.run([str(KAFKA_SH), *args], capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            raise RuntimeError(f"scripts/kafka.sh {' '.join(args)} failed "
                               f"(exit {p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p.stdout

    def node_states(self) -> dict[int, str]:
        """{node id: "running" | "paused" | "dead"}"""
        kv = dict(line.split("=", 1) for line in self._sh("nodes", self.dir).splitlines() if "=" in line)
        return {i: kv[f"NODE_{i}_STATE"] for i in self.nodes}

    def node_bootstrap(self, node: int) -> str:
        return f"127.0.0.1:{self.nodes[node]['port']}"

    def kill_node(self, node: int) -> None:
        """kill -9 the node (broker and controller) and wait until it is gone."""
        self._sh("kill", self.dir, str(node))

    def stop_node(self, node: int) -> None:
        """SIGTERM: a controlled shutdown (leaders move away first)."""
        self._sh("stop-node", self.dir, str(node))

    def pause_node(self, node: int) -> None:
        """SIGSTOP: the node hangs with its sockets open."""
        self._sh("pause", self.dir, str(node))

    def resume_node(self, node: int) -> None:
        self._sh("resume", self.dir, str(node))

    def restart_node(self, node: int, kill: bool = False) -> None:
        """Stop the node (SIGTERM, or SIGKILL with kill=True) if it runs, start
        it again on the same ports and data, and wait until it serves."""
        out = self._sh("restart", self.dir, str(node), *(["--kill"] if kill else []))
        for line in out.splitlines():
            if line.startswith(f"NODE_{node}_PID="):
                self.nodes[node]["pid"] = int(line.split("=", 1)[1])

    def heal(self, timeout: float = 120.0) -> None:
        """Resume paused nodes, restart dead ones, and wait until every node
        is registered and every partition has its full ISR again."""
        for i, st in self.node_states().items():
            if st == "paused":
                self.resume_node(i)
            elif st == "dead":
                self.restart_node(i)
        self.wait_healthy(timeout)

    def wait_healthy(self, timeout: float = 120.0) -> None:
        """Every node is a live broker and no partition is under-replicated."""
        ck = _ck()
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                md = self.admin().list_topics(timeout=10)
                brokers = set(md.brokers)
                bad = [f"{t}-{p}" for t, tm in md.topics.items() for p, pm in tm.partitions.items()
                       if pm.leader < 0 or len(pm.isrs) < len(pm.replicas)]
                if brokers == set(self.nodes) and not bad:
                    return
                last = f"brokers {sorted(brokers)}, under-replicated {bad[:10]}"
            except ck.KafkaException as e:
                last = str(e)
            time.sleep(0.5)
        raise TimeoutError(f"cluster not healthy after {timeout} s: {last}\n{self.log_tail(15)}")

    # -- leaders ----------------------------------------------------------------
    def leaders(self, topic: str, timeout: float = 30.0) -> dict[int, int]:
        """{partition: leader node id} (-1 while a partition has none)."""
        t = self._topic_metadata(topic, timeout)
        return {p: pm.leader for p, pm in sorted(t.partitions.items())}

    def _topic_metadata(self, topic: str, timeout: float):
        """The topic's metadata from whichever node the client asks. A topic
        created moments ago may still be unknown to a node other than the
        one that answered create_topic's wait (KRaft metadata reaches each
        broker on its own), so UNKNOWN_TOPIC_OR_PART is retried until
        `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            md = self.admin().list_topics(topic=topic, timeout=timeout)
            t = md.topics.get(topic)
            if t is not None and t.error is None:
                return t
            if time.monotonic() > deadline:
                raise KeyError(f"no topic {topic!r}: {t and t.error}")
            time.sleep(0.1)

    def replicas(self, topic: str, timeout: float = 30.0) -> dict[int, dict]:
        """{partition: {"leader", "replicas", "isr"}}"""
        t = self._topic_metadata(topic, timeout)
        return {p: {"leader": pm.leader, "replicas": list(pm.replicas), "isr": list(pm.isrs)}
                for p, pm in sorted(t.partitions.items())}

    def _close_mover(self) -> None:
        if self._mover is not None:
            try:
                self._mover.stdin.close()
                self._mover.wait(timeout=10)
            except Exception:
                self._mover.kill()
                self._mover.wait()
            self._mover = None

    def start_mover(self) -> None:
        """Start the leader-mover JVM now (it takes seconds to start), so that
        the first move_leader() is fast."""
        if self._mover is None or self._mover.poll() is not None:
            self._mover = subprocess.Popen(
                [str(KAFKA_SH), "leader-mover", self.dir], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
            self._mover_ready = False

    def move_leaders(self, topic: str, partitions, to: int | None = None) -> dict[int, tuple[int, int]]:
        """Make `to` (default: each partition's next in-sync replica) the
        leader of `partitions`, all at once: one reassignment that only
        reorders the replicas (no data moves), then one preferred leader
        election (Kafka Admin API in scripts/kafka-leaders.java, kept running
        between calls). Returns {partition: (old leader, new leader)} once the
        metadata shows the new leaders. Thread-safe (calls are serialised)."""
        parts = ",".join(str(int(p)) for p in partitions)
        with self._mover_lock:
            self.start_mover()
            if not self._mover_ready:
                ready = self._mover.stdout.readline().strip()
                if ready != "ready":
                    raise RuntimeError(f"scripts/kafka.sh leader-mover did not start: {ready!r}")
                self._mover_ready = True
            self._mover.stdin.write(f"move {topic} {parts}{'' if to is None else f' {to}'}\n")
            self._mover.stdin.flush()
            ans = self._mover.stdout.readline().strip()
        if not ans.startswith("ok "):
            raise RuntimeError(f"move_leaders({topic!r}, {parts}, {to}): {ans or 'mover exited'}")
        out = {}
        for m in ans.split()[3:]:
            p, ch = m.split(":")
            old, new = ch.split(">")
            out[int(p)] = (int(old), int(new))
        return out

    def move_leader(self, topic: str, partition: int, to: int | None = None) -> tuple[int, int]:
        """move_leaders() for one partition: (old leader, new leader)."""
        return self.move_leaders(topic, [partition], to)[partition]

    def warm_up_mover(self) -> None:
        """A few moves on a scratch topic: the mover's first moves are slow
        (JIT, connections), the tests' must not be."""
        topic = f"mover-warm-up-{uuid.uuid4().hex[:6]}"
        self.create_topic(topic, 2)
        for _ in range(3):
            self.move_leaders(topic, [0, 1])
        self.delete_topic(topic)


@pytest.fixture(scope="session")
def _kafka_cluster_session(tmp_path_factory):
    keep = os.environ.get("THAW_TEST_KAFKA_CLUSTER_DIR")
    d = str(Path(keep).resolve()) if keep else str(tmp_path_factory.mktemp("kafka-cluster"))
    cluster = KafkaCluster.start(d, 3, keep_dir=bool(keep))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def kafka_cluster(_kafka_cluster_session):
    """The session's 3-node cluster, healed (nodes resumed/restarted, ISRs
    full) before and after each test that uses it."""
    c = _kafka_cluster_session
    c.heal()
    try:
        yield c
    finally:
        c.heal()


@pytest.fixture(scope="session")
def kafka_fast_retention(tmp_path_factory):
    """A single broker whose retention checker runs every second (and deletes
    at once), for tests that what a replayed topic keeps stays."""
    d = str(tmp_path_factory.mktemp("kafka-fast-retention"))
    old = os.environ.get("THAW_KAFKA_EXTRA_CONFIG")
    os.environ["THAW_KAFKA_EXTRA_CONFIG"] = "\n".join(
        x for x in [old, "log.retention.check.interval.ms=1000",
                    "log.segment.delete.delay.ms=0"] if x)
    try:
        broker = KafkaBroker.start(d)
    finally:
        if old is None:
            del os.environ["THAW_KAFKA_EXTRA_CONFIG"]
        else:
            os.environ["THAW_KAFKA_EXTRA_CONFIG"] = old
    try:
        _wait_for_retention_checker(broker)
        yield broker
    finally:
        broker.stop()


def _wait_for_retention_checker(broker: KafkaBroker, timeout: float = 90.0) -> None:
    """The broker's first retention check runs 30 s after it starts (then
    every second): wait until a probe topic's month-old record is deleted, so
    that tests see the checker running."""
    probe = f"retention-probe-{uuid.uuid4().hex[:8]}"
    broker.create_topic(probe, 1, config={"retention.ms": 86_400_000})
    prod = broker.producer()
    prod.produce(probe, b"old", timestamp=int(time.time() * 1000) - 30 * 86_400_000)
    if prod.flush(30) != 0:
        pytest.fail("could not produce the retention probe record", pytrace=False)
    deadline = time.monotonic() + timeout
    while True:
        lo, hi = broker.offsets(probe, "read_uncommitted")[0]
        if hi == 1 and lo == 1:
            break
        if time.monotonic() > deadline:
            pytest.fail(f"the retention checker did not delete a month-old record within {timeout} s "
                        f"(offsets {lo}..{hi}):\n{broker.log_tail()}", pytrace=False)
        time.sleep(0.5)
    broker.delete_topic(probe)
