"""`thaw serve --upstream` in front of a 3-broker KRaft cluster (issue 21).

The upstream is the session's `kafka_cluster` (nodes 1..3, replication
factor 3, min.insync.replicas 2). Each test makes a tiered topic of several
partitions (upstream_harness.Tiered): its history is archived into Iceberg
by `thaw archive`, then DeleteRecords drops it from the cluster, so that the
log start is > 0 on every partition (checked); a few records stay in the
cluster. Consumers bootstrap from Thaw, which forwards everything to the
cluster and serves what lies below the log start from the table. What every
client reads is compared, offset for offset, with what the cluster held
before it lost the history (Tiered.expected()).

* Metadata and DescribeCluster through Thaw name Thaw's ports only (START +
  node id); a librdkafka and a Java consumer read history, the cluster's
  records and records produced while they tail.
* Faults while consumers are inside the history (their output is held so
  that they are mid-read when the fault hits): every partition leader moved,
  a broker hung (SIGSTOP) and resumed, a broker killed (kill -9) and
  restarted. Nothing lost or duplicated, every client finishes, Thaw stays
  up, logs a bounded number of lines for the event and exits 143 (a clean stop) on SIGTERM.
* A consumer group: FindCoordinator through Thaw names Thaw's port of the
  coordinator; the coordinator broker is killed mid-read and the group goes
  on and finishes with every record once, its offsets committed in the
  cluster.

Bugs these tests found (fixed): a cold fetch during a leader change was
answered OFFSET_OUT_OF_RANGE (the client reset to offset 0 and read the
history again); no client bootstrapped through Thaw while the first
--upstream broker hung; a warning per client retry while a broker was down.
"""

from __future__ import annotations

import json
import os
import re
import socket
import struct
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from serve_harness import confluent_cmd, java_cmd
from upstream_harness import Tiered, diff, norm_line, produce_records

PARTITIONS = 4
# Records per partition archived then deleted: a few cold record batches
# each (batches are cut at 256 KiB), so that a consumer reading slowly is
# still inside the history when the fault hits.
HISTORY = 6000
HISTORY_GROUP = 150  # the group member commits every record: fewer
LIVE = 15  # records per partition produced while the consumers run
# THAW_TEST_FAULT_TRIALS=N runs each fault case N times (a soak run).
TRIALS = int(os.environ.get("THAW_TEST_FAULT_TRIALS", "1"))

# librdkafka made to read slowly: a tiny fetch queue, one batch per fetch.
SLOW_RDKAFKA = ["-X", "queued.max.messages.kbytes=1", "-X", "queued.min.messages=1",
                "-X", "fetch.message.max.bytes=1024"]


# ---------------------------------------------------------------------------
# helpers


class Reader:
    """A consumer driver whose stdout is read by a thread that can be held:
    while held, the driver blocks on a full pipe (so it stops polling and,
    with a small fetch queue, stops fetching) -- it is then mid-read at a
    known point."""

    def __init__(self, name: str, cmd: list[str], workdir: Path, hold_at: int | None = None):
        """`hold_at`: hold by itself once that many records were read."""
        self.name = name
        self.hold_at = hold_at
        self.cmd = cmd
        self.stderr_path = workdir / f"{name}.stderr"
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=open(self.stderr_path, "wb"),
                                     stdin=subprocess.DEVNULL, text=True)
        self.lines: list[str] = []
        self.gate = threading.Event()
        self.gate.set()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if line.strip():
                self.lines.append(line)
                if self.hold_at is not None and len(self.lines) == self.hold_at:
                    self.gate.clear()
            self.gate.wait()

    def hold(self) -> None:
        self.gate.clear()

    def resume(self) -> None:
        self.gate.set()

    def wait_lines(self, n: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while len(self.lines) < n:
            if self.proc.poll() is not None and not self.thread.is_alive():
                pytest.fail(f"{self.name} exited {self.proc.returncode} after {len(self.lines)} records:\n"
                            f"{self.stderr()}", pytrace=False)
            if time.monotonic() > deadline:
                pytest.fail(f"{self.name}: {len(self.lines)} records after {timeout} s, waiting for {n}",
                            pytrace=False)
            time.sleep(0.05)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-4000:]

    def finish(self, timeout: float, thaw_log=lambda: "") -> list[tuple]:
        """Waits for the driver's exit 0; its records, normalized and sorted."""
        self.resume()
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"{self.name} did not finish within {timeout} s ({len(self.lines)} records)\n"
                        f"{self.stderr()}\nthaw:\n{thaw_log()[-4000:]}", pytrace=False)
        self.thread.join(30)
        assert rc == 0, f"{self.name}: exit {rc}\n{self.stderr()}\nthaw:\n{thaw_log()[-4000:]}"
        return sorted(norm_line(json.loads(x)) for x in self.lines)

    def kill(self) -> None:
        self.resume()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def cluster_tiered(thaw_bin, kafka_cluster, tmp_path):
    """Factory: a Tiered topic on the 3-node cluster (DeleteRecords drops the
    archived history), its bounds checked."""
    made: list[Tiered] = []
    readers: list[Reader] = []

    def make(partitions: int = PARTITIONS, history: int = HISTORY) -> Tiered:
        t = Tiered(thaw_bin, kafka_cluster, tmp_path / f"t{len(made)}", partitions=partitions, history=history,
                   truncate="delete_records")
        made.append(t)
        t.readers = readers
        assert sorted(t.bounds) == list(range(partitions))
        for p, (lo, hi) in t.bounds.items():
            # DeleteRecords moved the log start past the whole history.
            assert lo == history and hi > lo, f"partition {p}: bounds {t.bounds}"
        reps = kafka_cluster.replicas(t.topic)
        assert all(sorted(r["replicas"]) == [1, 2, 3] for r in reps.values()), reps
        return t

    yield make
    for r in readers:
        r.kill()
    for t in made:
        t.stop()


def reader(t: Tiered, name: str, cmd: list[str], hold_at: int | None = None) -> Reader:
    r = Reader(name, cmd, t.tmp, hold_at)
    t.readers.append(r)
    return r


def produce_live(t: Tiered, tag: str) -> None:
    produce_records(t.kafka, t.topic, t.partitions, LIVE, int(time.time() * 1000), tag)


def refresh_expected(t: Tiered) -> list[tuple]:
    """Tiered.expected() with every record the cluster holds now."""
    t.recent = t.kafka.consume_all(t.topic, isolation="read_uncommitted")
    return t.expected()


def assert_thaw_brokers(t: Tiered, bootstrap: str | None = None) -> None:
    """Metadata and DescribeCluster through Thaw name nodes 1..3 on Thaw's
    ports, never the cluster's."""
    import confluent_kafka.admin as ka
    admin = ka.AdminClient({"bootstrap.servers": bootstrap or t.bootstrap})
    md = admin.list_topics(timeout=30)
    upstream_ports = {n["port"] for n in t.kafka.nodes.values()}
    got = {b.id: (b.host, b.port) for b in md.brokers.values()}
    assert got == {i: ("127.0.0.1", t.broker_ports + i) for i in (1, 2, 3)}, got
    assert not upstream_ports & {p for _h, p in got.values()}
    # Leaders and replicas are the cluster's node ids.
    tm = md.topics[t.topic]
    assert sorted(tm.partitions) == list(range(t.partitions))
    for pm in tm.partitions.values():
        assert pm.leader in (1, 2, 3) and sorted(pm.replicas) == [1, 2, 3], pm
    dc = admin.describe_cluster(request_timeout=30).result(timeout=30)
    assert {(n.id, n.host, n.port) for n in dc.nodes} == {(i, "127.0.0.1", t.broker_ports + i) for i in (1, 2, 3)}
    if dc.controller is not None:
        assert (dc.controller.host, dc.controller.port) == ("127.0.0.1", t.broker_ports + dc.controller.id)


def stop_thaw(t: Tiered) -> str:
    """Thaw still up, then SIGTERM: exit 143 (128 + SIGTERM, a clean stop). Returns its log."""
    assert t.proc.poll() is None, f"thaw serve exited {t.proc.returncode}\n{t.log()[-4000:]}"
    t.proc.terminate()
    rc = t.proc.wait(30)
    assert rc == 128 + signal.SIGTERM, f"thaw serve exited {rc} after SIGTERM\n{t.log()[-4000:]}"
    return t.log()


def warnings(log: str) -> list[str]:
    return [x for x in log.splitlines() if ": warning: " in x or ": error: " in x]


def check_log(log: str, max_warnings: int) -> None:
    """No crash trace, and a bounded number of warnings: one line per
    connection the event closed, not one per request or per retry loop."""
    for bad in ("terminate called", "Assertion", "AddressSanitizer", "Segmentation", "fatal"):
        assert bad not in log, log[-4000:]
    w = warnings(log)
    assert len(w) <= max_warnings, f"{len(w)} warnings:\n" + "\n".join(w[:60])
    # Each is one line naming the client it is about.
    for x in w:
        assert re.search(r"client \S+", x) or "upstream broker" in x or "learning the upstream" in x, x


# A broker that is down (issue 21 finding, reported): every reconnect of a
# client to its Thaw port is refused with a warning of its own.
def upstream_event_lines(log: str, kafka, node: int, clients: int) -> str | None:
    """Lines about a broker that went down: one per client connection it
    closed, plus at most a few saying it cannot be reached; None when so,
    else what is wrong."""
    addr = f"127.0.0.1:{kafka.nodes[node]['port']}"
    lines = [x for x in warnings(log) if addr in x]
    refused = [x for x in lines if "cannot connect" in x]
    closed = [x for x in lines if x not in refused]
    if not lines:
        return f"no line about node {node} ({addr})"
    if len(refused) > clients + 2:
        return f"{len(refused)} 'cannot connect' warnings for node {node} ({addr}), {len(closed)} closed: {refused[:3]}"
    return None


# ---------------------------------------------------------------------------
# 1. a healthy cluster


def test_cluster_metadata_names_thaw_ports_and_clients_read_every_record(cluster_tiered):
    t = cluster_tiered(history=2000)
    t.start()
    assert_thaw_brokers(t)
    # Straight from the cluster, the history is gone.
    direct = t.kafka.consume_all(t.topic, isolation="read_uncommitted")
    assert min(r["offset"] for r in direct) == 2000

    total = len(t.expected()) + LIVE * t.partitions
    rd = reader(t, "confluent", confluent_cmd("-b", t.bootstrap, "-t", t.topic, "--start", "beginning",
                                              "--follow", "--count", str(total), "--timeout", "120"))
    jv = reader(t, "java", java_cmd("--bootstrap", t.bootstrap, "--topic", t.topic, "--mode", "assign",
                                    "--start", "beginning", "--follow", "--count", str(total),
                                    "--timeout", "150"))
    # Both tail the cluster once they crossed; then new records arrive.
    rd.wait_lines(len(t.expected()))
    jv.wait_lines(len(t.expected()), timeout=150)
    produce_live(t, "live")
    expected = refresh_expected(t)
    assert len(expected) == total
    for r in (rd, jv):
        got = r.finish(120, t.log)
        assert got == expected, f"{r.name}: " + diff(expected, got)
    log = stop_thaw(t)
    check_log(log, max_warnings=6)
    for i in (1, 2, 3):
        assert f"upstream broker {i} (127.0.0.1:{t.kafka.nodes[i]['port']}) is reachable through " \
               f"127.0.0.1:{t.broker_ports + i}" in log, log


# ---------------------------------------------------------------------------
# 2. faults while consumers read across the boundary


def _wait_leaders_away(kafka, topic: str, node: int, timeout: float = 60) -> dict[int, int]:
    """Waits until no partition of `topic` is led by `node` (paused or dead),
    asking the other nodes (a request to a hung node waits for
    socket.timeout.ms)."""
    import confluent_kafka.admin as ka
    others = ",".join(f"127.0.0.1:{n['port']}" for i, n in kafka.nodes.items() if i != node)
    deadline = time.monotonic() + timeout
    while True:
        try:
            admin = ka.AdminClient({"bootstrap.servers": others, "socket.timeout.ms": 3000})
            md = admin.list_topics(topic=topic, timeout=5)
            lead = {p: pm.leader for p, pm in sorted(md.topics[topic].partitions.items())}
            if all(v in (1, 2, 3) and v != node for v in lead.values()):
                return lead
        except Exception:  # noqa: BLE001 - metadata from a cluster in flux
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"partitions of {topic} still led by node {node} after {timeout} s", pytrace=False)
        time.sleep(0.3)


# A leader change under a cold Fetch (issue 21 bug, reported): the upstream
# refuses the fetch with OFFSET_OUT_OF_RANGE, Thaw's ListOffsets for the
# bounds fails (NOT_LEADER_OR_FOLLOWER, OFFSET_NOT_AVAILABLE from a new
# leader), and Thaw passes OFFSET_OUT_OF_RANGE to the client, whose
# auto.offset.reset moves it to the merged log start: the history again.
def went_back(lines: list[str]) -> list[tuple[int, int, int]]:
    """(partition, offset, next offset) wherever a reader's offsets of a
    partition went back."""
    last: dict[int, int] = {}
    out = []
    for x in lines:
        d = json.loads(x)
        p, o = d["partition"], d["offset"]
        if p in last and o <= last[p]:
            out.append((p, last[p], o))
        last[p] = o
    return out


def check_reader(r: Reader, expected: list[tuple], got: list[tuple], what: str) -> None:
    """Asserts the reader got `expected`, each record once (a partition
    that went back to offset 0 is the reset a cold fetch answered
    OFFSET_OUT_OF_RANGE during a leader change caused, before it became a
    retriable error)."""
    if got == expected:
        return
    back = went_back(r.lines)
    raise AssertionError(f"{r.name} ({what}): {diff(expected, got)}; went back at {back[:8]}\n{r.stderr()}")


@pytest.mark.parametrize("trial", range(TRIALS))
@pytest.mark.parametrize("fault", ["move_leaders", "pause", "kill"])
def test_fault_while_consumers_cross_the_boundary(cluster_tiered, fault, trial):
    t = cluster_tiered()
    t.start()
    kafka = t.kafka
    before = kafka.leaders(t.topic)
    victim = before[0]
    hist = len(t.expected())
    # Three rounds of LIVE records per partition are produced while they read.
    total = hist + 3 * LIVE * t.partitions
    t0 = time.monotonic()

    def phase(what: str) -> None:
        print(f"{time.monotonic() - t0:7.2f} s  {what}", flush=True)

    readers = [
        reader(t, "confluent-slow", confluent_cmd("-b", t.bootstrap, "-t", t.topic, "--start", "beginning",
                                                  "--follow", "--count", str(total), "--timeout", "150",
                                                  *SLOW_RDKAFKA), hold_at=200),
        reader(t, "java", java_cmd("--bootstrap", t.bootstrap, "--topic", t.topic, "--mode", "assign",
                                   "--start", "beginning", "--follow", "--count", str(total),
                                   "--timeout", "170"), hold_at=200),
    ]
    # Each holds itself inside the history (its pipe fills, it stops polling
    # and fetching), then goes on as the fault hits.
    for r in readers:
        r.wait_lines(200, timeout=90)
    time.sleep(1.0)
    phase(f"held at {[len(r.lines) for r in readers]} of {hist} history records; leaders {before}")

    if fault == "move_leaders":
        # Every partition's leader moves, twice, records produced in between.
        moved = kafka.move_leaders(t.topic, range(t.partitions))
        assert all(old != new for old, new in moved.values()), moved
        for r in readers:
            r.resume()
        produce_live(t, "live1")
        kafka.move_leaders(t.topic, range(t.partitions))
        produce_live(t, "live2")
    elif fault == "pause":
        kafka.pause_node(victim)
        for r in readers:
            r.resume()
        # Fenced after broker.session.timeout.ms (6 s): its partitions get new leaders.
        lead = _wait_leaders_away(kafka, t.topic, victim)
        phase(f"node {victim} paused; leaders {lead}")
        time.sleep(2)
        kafka.resume_node(victim)
        # (Not produced while paused: the test's own producer would wait for the hung node.)
        produce_live(t, "live1")
        produce_live(t, "live2")
    else:
        kafka.kill_node(victim)
        for r in readers:
            r.resume()
        lead = _wait_leaders_away(kafka, t.topic, victim)
        phase(f"node {victim} killed; leaders {lead}")
        produce_live(t, "live1")
        time.sleep(1)
        kafka.restart_node(victim)
        produce_live(t, "live2")
    phase(f"{fault} of node {victim} done; leaders {kafka.leaders(t.topic)}")
    kafka.wait_healthy(120)
    produce_live(t, "after")
    expected = refresh_expected(t)
    assert len(expected) == total
    results = {}
    for r in readers:
        results[r.name] = r.finish(180, t.log)
        phase(f"{r.name} finished")
    for r in readers:
        check_reader(r, expected, results[r.name], f"{fault} of node {victim}")
    # Thaw still serves, and its metadata names the same ports.
    assert_thaw_brokers(t)
    log = stop_thaw(t)
    print("\n".join(warnings(log)))
    check_log(log, max_warnings=200)
    if fault == "kill":
        # The killed broker's connections were closed, each with one line;
        # its refusals while down are not one line per client retry.
        problem = upstream_event_lines(log, kafka, victim, clients=len(readers))
        assert problem is None, problem + "\n" + log[-3000:]
    else:
        check_log(log, max_warnings=10)


# Fetch v11 by hand: a client that sends current_leader_epoch -1 (allowed:
# "unknown") reaches a follower, which serves consumer fetches from v11 on
# (KIP-392) and refuses an offset below its log start.

def _kstr(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def raw_fetch_v11(port: int, topic: str, partition: int, offset: int) -> tuple[int, int]:
    """(partition error code, base offset of the first batch or -1)."""
    body = struct.pack(">iiiibii", -1, 100, 1, 1 << 20, 0, 0, -1)
    body += struct.pack(">i", 1) + _kstr(topic) + struct.pack(">i", 1)
    body += struct.pack(">iiqqi", partition, -1, offset, -1, 1 << 20)
    body += struct.pack(">i", 0) + _kstr("")
    msg = struct.pack(">hhi", 1, 11, 4242) + _kstr("raw-fetch") + body
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(struct.pack(">i", len(msg)) + msg)
        f = s.makefile("rb")
        (n,) = struct.unpack(">i", f.read(4))
        r = f.read(n)
    o = 4 + 4 + 2 + 4  # correlation id, throttle, error, session id
    (ntopics,) = struct.unpack_from(">i", r, o)
    assert ntopics == 1, r[:64]
    o += 4
    (ln,) = struct.unpack_from(">h", r, o)
    o += 2 + ln + 4
    _p, err = struct.unpack_from(">ih", r, o)
    o += 4 + 2 + 8 * 3
    (naborted,) = struct.unpack_from(">i", r, o)
    o += 4 + max(naborted, 0) * 16 + 4
    (rl,) = struct.unpack_from(">i", r, o)
    o += 4
    first = struct.unpack_from(">q", r, o)[0] if rl >= 8 else -1
    return err, first


def test_a_cold_fetch_a_follower_refuses_is_not_out_of_range(cluster_tiered):
    t = cluster_tiered(partitions=1, history=2000)
    t.start()
    reps = t.kafka.replicas(t.topic)[0]
    follower = next(n for n in reps["replicas"] if n != reps["leader"])
    # Through the leader's port: the table's batches.
    assert raw_fetch_v11(t.broker_ports + reps["leader"], t.topic, 0, 100) == (0, 0)
    # Through a follower's port: the follower refuses (its log starts at
    # 2000) and cannot say its bounds; offset 100 is in the merged log all
    # the same: the table's batches, or an error that sends the client to
    # the leader (NOT_LEADER_OR_FOLLOWER), never OFFSET_OUT_OF_RANGE.
    err, first = raw_fetch_v11(t.broker_ports + follower, t.topic, 0, 100)
    assert err != 1, f"OFFSET_OUT_OF_RANGE for offset 100 of 0..{t.bounds[0][1]} (node {follower}, a follower)"
    assert (err, first) == (0, 0) or err in (6, 74, 75), (err, first)
    stop_thaw(t)


def raw_list_offsets_latest(port: int, topic: str, partition: int) -> int:
    """ListOffsets v4 (latest) by hand: the partition's error code."""
    body = struct.pack(">ib", -1, 0) + struct.pack(">i", 1) + _kstr(topic) + struct.pack(">i", 1)
    body += struct.pack(">iiq", partition, -1, -1)
    msg = struct.pack(">hhi", 2, 4, 4243) + _kstr("raw-list-offsets") + body
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(struct.pack(">i", len(msg)) + msg)
        f = s.makefile("rb")
        (n,) = struct.unpack(">i", f.read(4))
        r = f.read(n)
    o = 4 + 4 + 4  # correlation id, throttle, topic count
    (ln,) = struct.unpack_from(">h", r, o)
    o += 2 + ln + 4
    _p, err = struct.unpack_from(">ih", r, o)
    return err


def test_a_cold_fetch_right_after_a_leader_election_is_not_out_of_range(cluster_tiered):
    """A new leader whose high watermark has not reached its epoch's start
    (records were produced just before the election) refuses ListOffsets
    LATEST (OFFSET_NOT_AVAILABLE; LEADER_NOT_AVAILABLE before v5) for a
    while, and a Fetch below its log start with OFFSET_OUT_OF_RANGE. A cold
    fetch through Thaw in that window must not be OFFSET_OUT_OF_RANGE."""
    t = cluster_tiered(partitions=1, history=2000)
    t.start()
    kafka = t.kafka
    prod = kafka.producer(acks="all")
    in_window: list[tuple[int, int, int]] = []  # (new leader, Thaw's error, first offset)
    for _round in range(8):
        for i in range(200):
            prod.produce(t.topic, value=b"x" * 100, partition=0)
        assert prod.flush(30) == 0
        _old, new = kafka.move_leader(t.topic, 0)
        direct = kafka.nodes[new]["port"]
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            # A Thaw fetch bracketed by two refusals of the new leader's
            # ListOffsets LATEST: Thaw's own bound request saw it too.
            if raw_list_offsets_latest(direct, t.topic, 0) == 0:
                continue
            err, first = raw_fetch_v11(t.broker_ports + new, t.topic, 0, 100)
            if raw_list_offsets_latest(direct, t.topic, 0) != 0:
                in_window.append((new, err, first))
        if len(in_window) >= 5:
            break
    assert len(in_window) >= 5, f"the new leaders never refused ListOffsets LATEST after an election ({in_window})"
    oor = [x for x in in_window if x[1] == 1]
    assert not oor, f"{len(oor)} of {len(in_window)} cold fetches (offset 100 of a merged log from 0) in the " \
                    f"election window answered OFFSET_OUT_OF_RANGE"
    assert all((err, first) == (0, 0) or err in (5, 6, 74, 75) for _n, err, first in in_window), in_window
    stop_thaw(t)


def test_clients_bootstrap_while_the_first_upstream_broker_hangs(cluster_tiered):
    import confluent_kafka.admin as ka
    t = cluster_tiered(partitions=1, history=100)
    t.start()
    kafka = t.kafka
    first = next(i for i, n in kafka.nodes.items() if kafka.bootstrap.split(",")[0] == f"127.0.0.1:{n['port']}")
    kafka.pause_node(first)
    try:
        # Straight to the cluster, its bootstrap list gets metadata from another node at once.
        assert sorted(ka.AdminClient({"bootstrap.servers": kafka.bootstrap}).list_topics(timeout=20).brokers) \
            == [1, 2, 3]
        # Through Thaw, as well (a retry after the client gives up on an unanswered ApiVersions).
        t0 = time.monotonic()
        try:
            md = ka.AdminClient({"bootstrap.servers": t.bootstrap,
                                 "api.version.request.timeout.ms": 3000}).list_topics(timeout=12)
        except Exception as e:  # noqa: BLE001
            raise AssertionError(f"no metadata through Thaw after {time.monotonic() - t0:.1f} s with node {first} "
                                 f"(the first --upstream address) hung: {e}") from e
        assert sorted(md.brokers) == [1, 2, 3]
    finally:
        kafka.resume_node(first)
    stop_thaw(t)


# ---------------------------------------------------------------------------
# 3. a consumer group whose coordinator dies


def _coordinator(admin, group: str, timeout: float = 30) -> tuple[int, str, int]:
    d = admin.describe_consumer_groups([group], request_timeout=timeout)[group].result(timeout=timeout)
    return d.coordinator.id, d.coordinator.host, d.coordinator.port


def test_group_survives_its_coordinator_killed(cluster_tiered):
    import confluent_kafka as ck
    import confluent_kafka.admin as ka
    t = cluster_tiered(history=HISTORY_GROUP)
    t.start()
    kafka = t.kafka
    group = f"g-{uuid.uuid4().hex[:6]}"
    expected = t.expected()
    t0 = time.monotonic()

    def phase(what: str) -> None:
        print(f"{time.monotonic() - t0:7.2f} s  {what}", flush=True)

    # One member, a synchronous commit after every record it prints.
    rd = reader(t, "group", confluent_cmd("-b", t.bootstrap, "-t", t.topic, "--mode", "subscribe",
                                          "--group", group, "--commit", "--timeout", "150"), hold_at=100)
    rd.wait_lines(100, timeout=90)
    phase("the member read 100 records")
    # FindCoordinator through Thaw: Thaw's port of the cluster's coordinator.
    coord, _host, port = _coordinator(kafka.admin(), group)
    assert port == kafka.nodes[coord]["port"]
    via = _coordinator(ka.AdminClient({"bootstrap.servers": t.bootstrap}), group)
    assert via == (coord, "127.0.0.1", t.broker_ports + coord), via
    time.sleep(1.0)
    assert len(rd.lines) < len(expected) // 2, len(rd.lines)

    kafka.kill_node(coord)
    phase(f"coordinator node {coord} killed; leaders {kafka.leaders(t.topic)}")
    rd.resume()
    # The group moves to another coordinator. Each look is a new admin client
    # with a short timeout: one that asked while the killed node still led
    # the group's offsets partition would wait out its request timeout
    # reconnecting to the dead node (30 s, twice, ran past the deadline).
    deadline = time.monotonic() + 60
    while True:
        try:
            new = _coordinator(ka.AdminClient({"bootstrap.servers": kafka.bootstrap}), group, timeout=5)[0]
            if new != coord:
                break
        except Exception:  # noqa: BLE001 - no coordinator while the group loads
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"the group's coordinator is still node {coord} after 60 s", pytrace=False)
        time.sleep(0.5)
    phase(f"coordinator now node {new}; the member printed {len(rd.lines)} records")
    got = rd.finish(150, t.log)
    phase("the member finished")
    # Every record once (the driver commits each record after printing it).
    check_reader(rd, expected, got, f"kill of coordinator node {coord}")
    # Through Thaw, FindCoordinator names the new coordinator's port.
    via = _coordinator(ka.AdminClient({"bootstrap.servers": t.bootstrap}), group)
    assert via == (new, "127.0.0.1", t.broker_ports + new), via
    # The group's offsets are in the cluster: the ends of the partitions.
    # (A new admin client: the shared one may still hold the killed coordinator.)
    fresh = ka.AdminClient({"bootstrap.servers": kafka.bootstrap})
    fut = fresh.list_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(group)])[group]
    committed = {tp.partition: tp.offset for tp in fut.result(timeout=30).topic_partitions}
    ends = kafka.offsets(t.topic, "read_uncommitted")
    assert committed == {p: ends[p][1] for p in ends}
    kafka.restart_node(coord)
    log = stop_thaw(t)
    print("\n".join(warnings(log)))
    check_log(log, max_warnings=200)
    problem = upstream_event_lines(log, kafka, coord, clients=1)
    assert problem is None, problem + "\n" + log[-3000:]
