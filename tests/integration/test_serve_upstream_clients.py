"""`thaw serve --upstream` (issue 21) with every client driver, the Java CLI
tools, passthrough producers, two Thaw instances, bad clients and a bad
upstream.

One tiered topic is shared by the module (`shared`): 3 partitions whose first
120 offsets retention really deleted from the broker (log start 120 on every
partition, checked) after `thaw archive` archived them, then 40 records only
the broker holds; gzip, because kafkajs and kafka-python have no lz4. Each
test compares what a client read through Thaw with Tiered.expected() (what
the broker held before retention deleted it), offset for offset and field for
field; a test that writes to the tiered topic refreshes `t.recent` so that the
next one expects the new records too.

The upstream fault test puts a TCP proxy (KafkaFaultProxy below) between
Thaw's --upstream and the broker: it rewrites the broker's port in the
responses that name it (same length, so the frame stays valid), so every
upstream connection of Thaw goes through it, and it cuts connections in the
middle of a response frame.
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import socket
import struct
import signal
import subprocess
import threading
import time
import uuid

import pytest

from kafka_broker import KafkaBroker
from serve_harness import (
    CONSOLE_CONSUMER,
    CONSUMER_GROUPS,
    DEPS,
    confluent_cmd,
    java_cmd,
    java_tool,
    kafka_python_cmd,
    kafkajs_cmd,
    kcat_cmd,
)
from tls_certs import certs  # noqa: F401  (fixture)
from upstream_harness import Tiered, diff, norm_line

TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
# Short-lived JVMs: C1 only and the serial collector start in about half the
# CPU time (the file runs a dozen of them).
QUICK_JVM = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def jtool(main_class: str, *args: str) -> list[str]:
    c = java_tool(main_class, *args)
    return c[:1] + QUICK_JVM + c[1:]


def jconsume(*args: str) -> list[str]:
    c = java_cmd(*args)
    return c[:1] + QUICK_JVM + c[1:]


@pytest.fixture(scope="module")
def shared(thaw_bin, kafka_fast_retention, tmp_path_factory):
    t = Tiered(thaw_bin, kafka_fast_retention, tmp_path_factory.mktemp("tiered-clients"), compression="gzip")
    for p, (lo, _hi) in t.bounds.items():
        assert lo >= 120, f"partition {p}: retention did not delete the history ({t.bounds})"
    t.start()
    yield t
    t.stop()


@pytest.fixture
def t(shared):
    yield shared
    assert shared.proc.poll() is None, f"thaw serve exited {shared.proc.returncode}:\n{shared.log()[-4000:]}"


# --------------------------------------------------------------------------- helpers


def run(t: Tiered, cmd: list[str], timeout: float = 180) -> subprocess.CompletedProcess:
    env = dict(os.environ, NODE_PATH=str(DEPS / "node" / "node_modules"))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"timed out after {timeout} s: {' '.join(cmd)}\nstderr:\n{(e.stderr or b'')[-3000:]!r}\n"
                    f"thaw:\n{t.log()[-3000:]}", pytrace=False)
    if p.returncode != 0:
        pytest.fail(f"{' '.join(cmd)}: exit {p.returncode}\nstderr:\n{p.stderr[-4000:]}\nthaw:\n{t.log()[-4000:]}",
                    pytrace=False)
    return p


def lines_of(stdout: str) -> list[dict]:
    return [json.loads(x) for x in stdout.splitlines() if x.startswith("{\"topic\"")]


def norm(line: dict) -> tuple:
    """norm_line, for kafkajs's grouped headers too (the topic's header keys
    are distinct, so grouping keeps their order)."""
    if "headers_grouped" in line:
        line = dict(line, headers=[[k, v] for k, vs in line["headers_grouped"] for v in vs])
    return norm_line(line)


def _b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(bytes(b)).decode("ascii")


def refresh_recent(t: Tiered) -> None:
    """After records were added to the tiered topic: expect them too."""
    t.recent = t.kafka.consume_all(t.topic, isolation="read_uncommitted")


def from_time(expected: list[tuple], ms: int) -> list[tuple]:
    """Each partition's records from its first one with timestamp >= ms (as
    ListOffsets by timestamp answers), in offset order."""
    out, started = [], set()
    for r in expected:
        if r[0] in started or r[2] >= ms:
            started.add(r[0])
            out.append(r)
    return out


def cold_offsets(t: Tiered, recs: list[tuple]) -> int:
    return sum(1 for r in recs if r[1] < t.bounds[r[0]][0])


def describe_group(t: Tiered, bootstrap: str, group: str) -> dict[int, tuple[str, str, str]]:
    """kafka-consumer-groups.sh --describe: {partition: (current, log end, lag)}."""
    p = run(t, jtool(CONSUMER_GROUPS, "--bootstrap-server", bootstrap, "--describe", "--group", group),
            timeout=90)
    out = {}
    for ln in p.stdout.splitlines():
        f = ln.split()
        if f[:2] == [group, t.topic]:
            out[int(f[2])] = (f[3], f[4], f[5])
    assert out, f"no rows for {group} in:\n{p.stdout}\n{p.stderr[-2000:]}"
    return out


# --------------------------------------------------------------------------- 1. kafka-python, kafkajs


def test_kafka_python_assign_reads_the_whole_history(t):
    """kafka-python, assign() + seek_to_beginning: 360 records from the table,
    the rest from the broker, every field equal."""
    expected = t.expected()
    p = run(t, kafka_python_cmd("-b", t.bootstrap, "-t", t.topic, "--mode", "assign", "--start", "beginning"))
    got = sorted(norm(x) for x in lines_of(p.stdout))
    assert got == expected, diff(expected, got)
    assert cold_offsets(t, got) == 3 * 120


def test_kafkajs_group_reads_the_whole_history_and_commits_in_the_upstream(t):
    """kafkajs, a group member with fromBeginning (ListOffsets earliest through
    Thaw is 0): the whole history, and its commits land in the broker."""
    expected = t.expected()
    group = f"kjs-{uuid.uuid4().hex[:6]}"
    p = run(t, kafkajs_cmd("-b", t.bootstrap, "-t", t.topic, "--group", group))
    got = sorted(norm(x) for x in lines_of(p.stdout))
    assert got == expected, diff(expected, got)
    # kafkajs commits what it read (auto commit, on disconnect at the latest):
    # the group's offsets are the partitions' ends, in the broker.
    import confluent_kafka as ck
    fut = t.kafka.admin().list_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(group)])[group]
    committed = {tp.partition: tp.offset for tp in fut.result(timeout=30).topic_partitions}
    ends = t.kafka.offsets(t.topic, "read_uncommitted")
    assert committed == {p: ends[p][1] for p in ends}


# --------------------------------------------------------------------------- 2. the Java client


def test_java_group_of_three_one_leaving_reads_every_record_once(t):
    """The Java client, three members of one group; one leaves after 20
    records (still in the table's part of its partition): the others take
    over from its committed offset, and every record is read exactly once."""
    expected = t.expected()
    group = f"j3-{uuid.uuid4().hex[:6]}"
    p = run(t, jconsume("--bootstrap", t.bootstrap, "--topic", t.topic, "--mode", "group3", "--group", group,
                        "--leave-after", "20", "--timeout", "150"), timeout=200)
    lines = lines_of(p.stdout)
    got = sorted(norm(x) for x in lines)
    # The members commit after every poll and the leaver commits what it
    # printed before it leaves: nothing is read twice.
    assert got == expected, diff(expected, got)
    events = [json.loads(x) for x in p.stderr.splitlines() if x.startswith("{\"member\"")]
    assert any(e.get("left") for e in events), p.stderr[-3000:]
    by_member = {}
    for x in lines:
        by_member.setdefault(x["member"], []).append(x)
    assert len(by_member.get(2, [])) == 20, {m: len(v) for m, v in by_member.items()}
    # Every partition was read in offset order by whoever held it, across the boundary.
    for m, recs in by_member.items():
        last = {}
        for x in recs:
            assert x["offset"] > last.get(x["partition"], -1), (m, x, last)
            last[x["partition"]] = x["offset"]


def test_java_offsets_for_times_inside_the_table_only_history(t):
    """offsetsForTimes for a month-old timestamp that only the table holds
    starts each partition at offset 77 (the broker alone answers 120)."""
    expected = t.expected()
    # Offset 77 of partition 0: month-old, held by the table only.
    ms = next(r[2] for r in expected if r[0] == 0 and r[1] == 77)
    want = from_time(expected, ms)
    starts = {}
    for r in want:
        starts.setdefault(r[0], r[1])
    for p, o in starts.items():
        assert 0 < o < t.bounds[p][0], (starts, t.bounds)
    p = run(t, jconsume("--bootstrap", t.bootstrap, "--topic", t.topic, "--mode", "assign", "--start", f"time:{ms}"))
    got = sorted(norm(x) for x in lines_of(p.stdout))
    assert got == want, diff(want, got)
    # Straight from the broker the same timestamp finds its log start: the
    # answer above came from the table.
    import confluent_kafka as ck
    c = ck.Consumer({"bootstrap.servers": t.kafka.bootstrap, "group.id": "x-" + uuid.uuid4().hex[:6]})
    try:
        direct = c.offsets_for_times([ck.TopicPartition(t.topic, 0, ms)], timeout=30)[0].offset
    finally:
        c.close()
    assert direct == t.bounds[0][0]


# --------------------------------------------------------------------------- 3. Java CLI tools


def test_console_consumer_and_consumer_groups_through_thaw(t):
    """kafka-console-consumer reads the whole history through Thaw;
    kafka-consumer-groups --describe shows its group the same through Thaw
    and at the broker; --reset-offsets through Thaw reaches the table's
    offsets (earliest 0, by time 77) and writes them to the broker."""
    expected = t.expected()
    group = f"console-{uuid.uuid4().hex[:6]}"
    p = run(t, jtool(CONSOLE_CONSUMER, "--bootstrap-server", t.bootstrap, "--topic", t.topic, "--from-beginning",
                         "--group", group, "--max-messages", str(len(expected)), "--timeout-ms", "30000",
                         "--property", "print.partition=true", "--property", "print.offset=true",
                         "--property", "print.timestamp=true", "--property", "print.value=false",
                         "--property", "print.key=false"), timeout=120)
    got = []
    for ln in p.stdout.splitlines():
        f = ln.split("\t")
        if len(f) < 3 or not f[1].startswith("Partition:"):
            continue
        tt, ts = f[0].split(":")
        assert tt == "CreateTime", ln
        got.append((int(f[1].split(":")[1]), int(f[2].split(":")[1]), int(ts)))
    assert f"Processed a total of {len(expected)} messages" in p.stderr, p.stderr[-2000:]
    want = [(r[0], r[1], r[2]) for r in expected]
    assert sorted(got) == want, diff(want, sorted(got))

    # The group (committed by the console consumer on close) is the
    # upstream's: described through Thaw and straight at the broker alike.
    ends = t.kafka.offsets(t.topic, "read_uncommitted")
    through = describe_group(t, t.bootstrap, group)
    direct = describe_group(t, t.kafka.bootstrap, group)
    assert through == direct, (through, direct)
    assert through == {p: (str(hi), str(hi), "0") for p, (_lo, hi) in ends.items()}, (through, ends)

    # --reset-offsets through Thaw sees the merged log: the earliest offset is
    # the table's 0 (the broker's own log start is 120), and a month-old time
    # finds its offset in the table.
    def reset(bootstrap: str, *how: str) -> dict[int, int]:
        p = run(t, jtool(CONSUMER_GROUPS, "--bootstrap-server", bootstrap, "--reset-offsets", "--group", group,
                             "--topic", t.topic, *how, "--execute"), timeout=90)
        rows = [ln.split() for ln in p.stdout.splitlines() if ln.split()[:2] == [group, t.topic]]
        return {int(r[2]): int(r[3]) for r in rows}

    assert reset(t.bootstrap, "--to-earliest") == {p: 0 for p in ends}
    ms = next(r[2] for r in expected if r[0] == 1 and r[1] == 77)
    when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"
    want = {}
    for r in from_time(expected, ms):
        want.setdefault(r[0], r[1])
    assert all(0 < o < t.bounds[p][0] for p, o in want.items()), want
    assert reset(t.bootstrap, "--to-datetime", when) == want
    # The reset went to the upstream: the broker has the group at those offsets.
    import confluent_kafka as ck
    fut = t.kafka.admin().list_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(group)])[group]
    assert {tp.partition: tp.offset for tp in fut.result(timeout=30).topic_partitions} == want


def test_kafka_topics_describe_through_thaw(t):
    """kafka-topics --describe through Thaw prints what it prints at the broker."""
    args = ("--describe", "--topic", t.topic)
    through = run(t, jtool(TOPIC_COMMAND, "--bootstrap-server", t.bootstrap, *args), timeout=90).stdout
    direct = run(t, jtool(TOPIC_COMMAND, "--bootstrap-server", t.kafka.bootstrap, *args), timeout=90).stdout
    assert re.search(rf"Topic: {re.escape(t.topic)}\s+TopicId: \S+\s+PartitionCount: 3\s", through), through
    parts = re.findall(r"Partition: (\d+)\s+Leader: (\d+)", through)
    assert sorted(int(p) for p, _ in parts) == [0, 1, 2], through
    assert "retention.ms=86400000" in through, through
    # Nothing in it is Thaw's: the same text as the broker's own.
    assert through == direct


# --------------------------------------------------------------------------- 4. passthrough producers


def test_transactional_producer_through_thaw(t):
    """A transactional producer through Thaw (FindCoordinator for the
    transaction coordinator rewritten, InitProducerId, AddPartitionsToTxn,
    EndTxn passed through) commits 4 transactions and aborts 2;
    read_committed readers, straight and through Thaw, see the committed
    records only, at the same offsets."""
    import confluent_kafka as ck
    plain = f"txn-{uuid.uuid4().hex[:6]}"
    t.kafka.create_topic(plain, 2)
    prod = ck.Producer({"bootstrap.servers": t.bootstrap, "transactional.id": f"tx-{uuid.uuid4().hex[:6]}",
                        "linger.ms": 5, "compression.type": "gzip"})
    prod.init_transactions(30)
    committed, aborted = [], []
    for i in range(6):
        prod.begin_transaction()
        values = [f"txn{i}-{j}".encode() for j in range(20)]
        for j, v in enumerate(values):
            prod.produce(plain, key=str(j).encode(), value=v, partition=j % 2)
        prod.flush(30)
        if i % 3 == 1:
            prod.abort_transaction(30)
            aborted += values
        else:
            prod.commit_transaction(30)
            committed += values
    assert aborted and committed

    direct = t.kafka.consume_all(plain, isolation="read_committed")
    assert sorted(r["value"] for r in direct) == sorted(committed)
    # The aborted records are in the log (a read_uncommitted reader sees them).
    dirty = t.kafka.consume_all(plain, isolation="read_uncommitted")
    assert sorted(r["value"] for r in dirty) == sorted(committed + aborted)
    # Through Thaw, read_committed: the same records at the same offsets.
    through = KafkaBroker(t.bootstrap).consume_all(plain, isolation="read_committed")
    assert through == direct


def test_idempotent_producer_to_the_tiered_topic_through_thaw(t):
    """An idempotent producer through Thaw appends to the tiered topic itself
    (in order, no gaps); a read from offset 0 through Thaw then gets the
    history, the broker's records and the new ones."""
    import confluent_kafka as ck
    before = t.expected()
    ends = t.kafka.offsets(t.topic, "read_uncommitted")
    prod = ck.Producer({"bootstrap.servers": t.bootstrap, "enable.idempotence": True, "acks": "all",
                        "linger.ms": 5, "compression.type": "gzip", "max.in.flight.requests.per.connection": 5})
    now = int(time.time() * 1000)
    sent = {p: [] for p in range(t.partitions)}
    for i in range(25):
        for p in range(t.partitions):
            v = f"idem-{p}-{i}".encode()
            prod.produce(t.topic, key=f"k{i}".encode(), value=v, partition=p, timestamp=now + i,
                         headers=[("tag", b"idem"), ("null", None)])
            sent[p].append(v)
    assert prod.flush(30) == 0
    refresh_recent(t)
    expected = t.expected()
    for p in range(t.partitions):
        new = [r for r in t.recent if r["partition"] == p and r["offset"] >= ends[p][1]]
        assert [r["value"] for r in new] == sent[p], p
        assert [r["offset"] for r in new] == list(range(ends[p][1], ends[p][1] + 25))
    assert len(expected) == len(before) + 75
    p = run(t, confluent_cmd("-b", t.bootstrap, "-t", t.topic, "--start", "beginning"))
    got = sorted(norm(x) for x in lines_of(p.stdout))
    assert got == expected, diff(expected, got)


# --------------------------------------------------------------------------- 5. two Thaw instances


def test_one_group_across_two_thaw_instances(t):
    """Two Thaw instances in front of one broker: one group, one member
    bootstrapping from each; together they read every record exactly once,
    and the group's offsets end up in the broker."""
    import confluent_kafka as ck
    second = t.start_another()
    expected = t.expected()
    ends = {p: hi for p, (_lo, hi) in t.kafka.offsets(t.topic, "read_uncommitted").items()}
    group = f"two-{uuid.uuid4().hex[:6]}"
    reached: dict[int, int] = {}
    lock = threading.Lock()
    assigned = {0: threading.Event(), 1: threading.Event()}
    got: dict[int, list] = {0: [], 1: []}
    errors: list[str] = []
    stop = threading.Event()

    def member(i: int, bootstrap: str) -> None:
        c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "partition.assignment.strategy": "range",
                         "session.timeout.ms": 10000, "heartbeat.interval.ms": 500, "check.crcs": True})

        def on_assign(cons, parts):
            if parts:
                assigned[i].set()
        c.subscribe([t.topic], on_assign=on_assign)
        try:
            while not stop.is_set():
                m = c.poll(0.2)
                if m is None:
                    continue
                if m.error() is not None:
                    errors.append(f"member {i}: {m.error()}")
                    return
                tt, ts = m.timestamp()
                got[i].append({"topic": m.topic(), "partition": m.partition(), "offset": m.offset(), "timestamp": ts,
                               "key": _b64(m.key()), "value": _b64(m.value()),
                               "headers": [[k, _b64(v)] for k, v in (m.headers() or [])]})
                c.commit(message=m, asynchronous=False)
                with lock:
                    reached[m.partition()] = max(reached.get(m.partition(), 0), m.offset() + 1)
                    if all(reached.get(p, 0) >= e for p, e in ends.items()):
                        stop.set()
                # Until both members hold partitions, go slowly: the group
                # must be split between the two instances.
                if not (assigned[0].is_set() and assigned[1].is_set()):
                    time.sleep(0.02)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"member {i}: {e!r}")
        finally:
            if errors:
                stop.set()
            c.close()

    threads = [threading.Thread(target=member, args=(0, t.bootstrap)),
               threading.Thread(target=member, args=(1, second))]
    for th in threads:
        th.start()
        time.sleep(0.5)
    deadline = time.monotonic() + 120
    for th in threads:
        th.join(max(1.0, deadline - time.monotonic()))
    stop.set()
    for th in threads:
        th.join(30)
    assert not errors, errors
    assert stop.is_set() and all(reached.get(p, 0) >= e for p, e in ends.items()), (reached, ends)
    both = sorted(norm(x) for x in got[0] + got[1])
    assert both == expected, diff(expected, both)
    assert got[0] and got[1], {i: len(v) for i, v in got.items()}
    assert assigned[0].is_set() and assigned[1].is_set()
    # One group, in the upstream: its offsets are the partitions' ends.
    fut = t.kafka.admin().list_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(group)])[group]
    committed = {tp.partition: tp.offset for tp in fut.result(timeout=30).topic_partitions}
    assert committed == ends
    # The second instance really was in the path: it opened the broker's port.
    assert re.search(r"upstream broker \d+ .* is reachable through", t.log_of(second)), t.log_of(second)


# --------------------------------------------------------------------------- 6. bad clients, bad upstream


def _closed(sock: socket.socket, timeout: float = 10.0) -> bool:
    """Whether the peer closes the connection (EOF or reset) within timeout,
    without sending anything."""
    sock.settimeout(timeout)
    try:
        data = sock.recv(65536)
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
    return data == b""


def _assign_reader(bootstrap: str, **extra):
    import confluent_kafka as ck
    conf = {"bootstrap.servers": bootstrap, "group.id": f"r-{uuid.uuid4().hex[:6]}", "enable.auto.commit": False,
            "enable.partition.eof": True, "check.crcs": True,
            # Many small fetches, so that the reader is mid-stream for a while.
            "message.max.bytes": 1000, "fetch.max.bytes": 1024, "max.partition.fetch.bytes": 512}
    conf.update(extra)
    return ck.Consumer(conf)


def _read(c, t: Tiered, ends: dict[int, int], out: list, timeout: float, limit: int | None = None) -> list[str]:
    """Polls until every partition reached its end (or `limit` records),
    appending the records to `out`; returns the connection errors librdkafka
    reported (and recovered from)."""
    import confluent_kafka as ck
    lost: list[str] = []
    pending = {p for p in ends if not any(r["partition"] == p and r["offset"] + 1 >= ends[p] for r in out)}
    deadline = time.monotonic() + timeout
    n = 0
    while pending and (limit is None or n < limit):
        if time.monotonic() > deadline:
            pytest.fail(f"reader: partitions {sorted(pending)} not at their ends {ends} after {timeout} s "
                        f"({len(out)} records)\nthaw:\n{t.log()[-3000:]}", pytrace=False)
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error() is not None:
            if m.error().code() == ck.KafkaError._PARTITION_EOF:
                if m.offset() >= ends[m.partition()]:
                    pending.discard(m.partition())
                continue
            if m.error().retriable() or m.error().code() in (ck.KafkaError._TRANSPORT,
                                                              ck.KafkaError._ALL_BROKERS_DOWN):
                lost.append(str(m.error()))
                continue  # a connection lost: librdkafka reconnects
            pytest.fail(f"reader: {m.error()}", pytrace=False)
        tt, ts = m.timestamp()
        out.append({"topic": m.topic(), "partition": m.partition(), "offset": m.offset(), "timestamp": ts,
                    "key": _b64(m.key()), "value": _b64(m.value()),
                    "headers": [[k, _b64(v)] for k, v in (m.headers() or [])]})
        n += 1
        if m.offset() + 1 >= ends[m.partition()]:
            pending.discard(m.partition())
    return lost


def _fetch_v5(sock: socket.socket, correlation_id: int, topic: str, parts: list[tuple[int, int, int]],
              max_bytes: int) -> dict[int, dict]:
    """A hand-made Fetch v5 on a raw socket: parts [(partition, offset,
    partition_max_bytes)]; returns {partition: {error, high_watermark,
    log_start, batches: [(base offset, partition leader epoch)]}}."""
    t = topic.encode()
    body = struct.pack(">iiiib", -1, 0, 0, max_bytes, 0) + struct.pack(">i", 1) + struct.pack(">h", len(t)) + t
    body += struct.pack(">i", len(parts))
    for p, off, pmb in parts:
        body += struct.pack(">iqqi", p, off, -1, pmb)
    cid = b"raw-fetch"
    frame = struct.pack(">hhi", 1, 5, correlation_id) + struct.pack(">h", len(cid)) + cid + body
    sock.sendall(struct.pack(">i", len(frame)) + frame)
    size = struct.unpack(">i", KafkaFaultProxy._exactly(sock, 4))[0]
    data = KafkaFaultProxy._exactly(sock, size)
    at = 0

    def take(fmt: str):
        nonlocal at
        v = struct.unpack_from(fmt, data, at)
        at += struct.calcsize(fmt)
        return v if len(v) > 1 else v[0]

    assert take(">i") == correlation_id
    take(">i")  # throttle
    out = {}
    for _ in range(take(">i")):
        n = take(">h")
        name = data[at:at + n]
        at += n
        assert name == t
        for _ in range(take(">i")):
            p, err, hw, lso, lstart = take(">ihqqq")
            n_aborted = take(">i")
            at += max(n_aborted, 0) * 16
            size = take(">i")
            records = data[at:at + max(size, 0)]
            at += max(size, 0)
            batches, i = [], 0
            while i + 61 <= len(records):
                base, length, epoch = struct.unpack_from(">qii", records, i)
                batches.append((base, epoch))
                i += 12 + length
            out[p] = {"error": err, "high_watermark": hw, "log_start": lstart, "batches": batches}
    return out


def test_hand_made_fetches_at_the_boundary(t):
    """Wire-level: a Fetch v5 for offset 0 with max_bytes 1 gets the table's
    first batch whole (KIP-74) with leader epoch -1 and the merged log start
    0; one at the broker's log start gets the broker's batch with its epoch;
    one below everything gets OFFSET_OUT_OF_RANGE; all on one connection."""
    ends = t.kafka.offsets(t.topic, "read_uncommitted")
    with socket.create_connection(("127.0.0.1", t.port), timeout=30) as s:
        cold = _fetch_v5(s, 7, t.topic, [(0, 0, 1)], 1)[0]
        assert cold["error"] == 0, cold
        assert cold["log_start"] == 0 and cold["high_watermark"] == ends[0][1], (cold, ends)
        assert len(cold["batches"]) == 1 and cold["batches"][0] == (0, -1), cold
        lo = t.bounds[0][0]
        hot = _fetch_v5(s, 8, t.topic, [(0, lo, 1 << 20), (1, 50, 1 << 20), (2, -1, 1 << 20)], 1 << 20)
        assert hot[0]["error"] == 0 and hot[0]["batches"][0][0] == lo and hot[0]["batches"][0][1] >= 0, hot[0]
        assert hot[0]["log_start"] == 0, hot[0]
        # partition 1 from the table, up to the broker's log start, epoch -1 throughout
        assert hot[1]["error"] == 0 and hot[1]["batches"] and hot[1]["batches"][0][0] <= 50, hot[1]
        assert all(e == -1 and b < t.bounds[1][0] for b, e in hot[1]["batches"]), hot[1]
        assert hot[2]["error"] == 1, hot[2]  # OFFSET_OUT_OF_RANGE
        assert hot[2]["log_start"] == 0, hot[2]


def test_large_passthrough_responses_reach_slow_and_fast_readers_whole(t):
    """Responses relayed as they are, 64 KiB and more, move through a pipe
    with splice(2): a topic of 200 KiB random values read whole by a
    consumer, and by a raw client that reads its 5 MiB answer slowly through
    a tiny receive buffer (Thaw's writes block), byte for byte."""
    import hashlib
    import os
    import confluent_kafka as ck
    topic = f"big-{uuid.uuid4().hex[:6]}"
    t.kafka.create_topic(topic, 1)
    values = [os.urandom(200 << 10) for _ in range(30)]
    prod = t.kafka.producer(compression_type="none", linger_ms=50)
    for v in values:
        prod.produce(topic, value=v, partition=0)
    assert prod.flush(30) == 0
    c = ck.Consumer({"bootstrap.servers": t.bootstrap, "group.id": "big-" + uuid.uuid4().hex[:6],
                     "enable.auto.commit": False, "fetch.max.bytes": 8 << 20, "max.partition.fetch.bytes": 8 << 20})
    got = []
    try:
        c.assign([ck.TopicPartition(topic, 0, ck.OFFSET_BEGINNING)])
        deadline = time.monotonic() + 60
        while len(got) < len(values):
            assert time.monotonic() < deadline, f"{len(got)} of {len(values)} read"
            m = c.poll(0.5)
            if m is not None and not m.error():
                got.append(m.value())
    finally:
        c.close()
    assert [hashlib.sha256(v).hexdigest() for v in got] == [hashlib.sha256(v).hexdigest() for v in values]

    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.settimeout(30)
    raw.connect(("127.0.0.1", t.broker_ports + 1))  # broker 1's port: the partition's leader
    try:
        name = topic.encode()
        body = struct.pack(">iiiib", -1, 500, 1, 5 << 20, 0) + struct.pack(">i", 1)
        body += struct.pack(">h", len(name)) + name + struct.pack(">i", 1) + struct.pack(">iqqi", 0, 0, -1, 5 << 20)
        cid = b"slow-reader"
        frame = struct.pack(">hhi", 1, 5, 77) + struct.pack(">h", len(cid)) + cid + body
        raw.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", KafkaFaultProxy._exactly(raw, 4))[0]
        assert size > 4 << 20, size
        data = bytearray()
        while len(data) < size:
            chunk = raw.recv(min(16384, size - len(data)))
            assert chunk, f"closed after {len(data)} of {size} bytes"
            data += chunk
            if len(data) < (1 << 20):
                time.sleep(0.002)  # slow at first: Thaw's side of the socket fills up
        assert struct.unpack_from(">i", data, 0)[0] == 77
        whole = bytes(data)
        held = [v for v in values if v in whole]
        assert len(held) >= 20, len(held)  # 5 MiB of 200 KiB values, each whole
        assert held == values[:len(held)]
    finally:
        raw.close()


def test_tls_on_the_proxys_listeners(t, certs):
    """serve --upstream --tls-cert/--tls-key: the bootstrap and every broker
    port speak TLS (clients follow Metadata to broker ports, so a plaintext
    one there would fail the read); kcat reads the whole history across the
    boundary, and the large responses go through OpenSSL (no splice)."""
    boot = t.start_another("--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key"))
    ssl_x = ["-X", "security.protocol=ssl", "-X", f"ssl.ca.location={certs / 'ca.pem'}"]
    got = t.consume(kcat_cmd("-b", boot, "-t", t.topic, "--start", "beginning", *ssl_x))
    expected = t.expected()
    assert got == expected, diff(expected, got)
    # A plaintext client is refused at the handshake, before any upstream connection.
    p = subprocess.run(kcat_cmd("-b", boot, "-t", t.topic, "--start", "beginning", "--timeout", "15"),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    assert "TLS handshake failed" in t.log_of(boot)


def test_bad_frames_close_only_their_own_connection(t):
    """Frames above 100 MiB, negative or too short, an unknown API key, a
    frame cut short: each closes its own connection (logged); a reader in the
    middle of the topic on its own connections reads on, undisturbed."""
    import confluent_kafka as ck
    expected = t.expected()
    ends = {p: hi for p, (_lo, hi) in t.kafka.offsets(t.topic, "read_uncommitted").items()}
    c = _assign_reader(t.bootstrap)
    out: list = []
    try:
        c.assign([ck.TopicPartition(t.topic, p, ck.OFFSET_BEGINNING) for p in ends])
        lost = _read(c, t, ends, out, 60, limit=60)
        assert 0 < len(out) < len(expected)
        port = t.port
        attacks = {
            # a size above socket.request.max.bytes: closed before anything is allocated
            "101 MiB": struct.pack(">i", (100 << 20) + 1) + b"\x00\x03\x00\x0c" + b"\x00" * 16,
            "2 GiB": struct.pack(">I", 0x7FFFFFFF),
            "negative": struct.pack(">i", -5) + b"\x00" * 8,
            "short": struct.pack(">i", 3) + b"abc",
            # an API key no broker has, then random bytes: the broker closes, so does Thaw
            "garbage": struct.pack(">i", 200) + b"\x7f\x7f\x00\x00" + random.Random(5).randbytes(196),
        }
        for name, data in attacks.items():
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(data)
                assert _closed(s), f"{name}: Thaw did not close the connection\nthaw:\n{t.log()[-2000:]}"
        # A frame cut short: the client sends part of it and half-closes.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(struct.pack(">i", 1000) + b"\x00\x12\x00\x03" + b"\x00" * 6)
            s.shutdown(socket.SHUT_WR)
            assert _closed(s), "a cut frame: not closed"
        # Clients that connect and send nothing hold nothing up.
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(20)]
        try:
            # The first reader's connections were not touched: it reads on.
            lost += _read(c, t, ends, out, 90)
        finally:
            for s in idle:
                s.close()
    finally:
        c.close()
    got = sorted(norm(x) for x in out)
    assert got == expected, diff(expected, got)
    assert not lost, lost
    log = t.log()
    assert f"request frame of {(100 << 20) + 1} bytes is outside the accepted 8..{100 << 20}" in log, log[-3000:]
    assert "request frame of -5 bytes is outside" in log, log[-3000:]
    assert "connection lost inside a 1000-byte request frame" in log, log[-3000:]
    assert t.proc.poll() is None


def test_an_upstream_that_never_answers_does_not_keep_thaw_from_stopping(t):
    """An upstream that accepts connections and never answers (a hung
    broker): Thaw's own Metadata request to it hangs, and SIGTERM still
    stops Thaw at once, exit 0."""
    hung = socket.create_server(("127.0.0.1", 0))
    hung.settimeout(0.1)
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                held.append(hung.accept()[0])
            except socket.timeout:
                continue
            except OSError:
                return
    threading.Thread(target=accept, daemon=True).start()
    try:
        bootstrap = t.start_another("-X", "request.timeout.ms=1500", upstream=f"127.0.0.1:{hung.getsockname()[1]}")
        proc = t.others[-1]
        deadline = time.monotonic() + 10
        while not held and time.monotonic() < deadline:
            time.sleep(0.05)
        assert held, "Thaw did not connect to its upstream"
        # -X request.timeout.ms bounds Thaw's own request.
        deadline = time.monotonic() + 10
        while "no answer to Metadata within 1500 ms (request.timeout.ms)" not in t.log_of(bootstrap):
            assert time.monotonic() < deadline, t.log_of(bootstrap)[-3000:]
            time.sleep(0.1)
        proc.terminate()
        try:
            rc = proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail(f"thaw serve did not stop within 5 s of SIGTERM:\n{t.log_of(bootstrap)[-3000:]}",
                        pytrace=False)
        assert rc == 128 + signal.SIGTERM, t.log_of(bootstrap)[-3000:]
    finally:
        done.set()
        hung.close()
        for s in held:
            s.close()


def test_upstream_properties_thaw_cannot_honour_are_refused(t):
    """-X/-F upstream client properties: one Thaw's connection does not
    honour is bad usage (exit 2) naming it, not silently ignored; -X
    without --upstream too."""
    props = t.tmp / "client.properties"
    props.write_text("# as the Java tools' --command-config\nssl.truststore.location=/x.jks\n")
    cases = [
        (["--upstream", t.kafka.bootstrap, "-F", str(props)],
         f"-F {props}: 'ssl.truststore.location' is not an upstream property"),
        (["--upstream", t.kafka.bootstrap, "-X", "security.protocol=SASL_GSSAPI"],
         "give PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"),
        (["--upstream", t.kafka.bootstrap, "-X", "security.protocol=SASL_SSL"], "set -X sasl.mechanism"),
        (["--upstream", t.kafka.bootstrap, "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanism=OAUTHBEARER"],
         "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"),
        (["--upstream", t.kafka.bootstrap, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=PLAIN",
          "-X", "sasl.username=thaw"], "set -X sasl.username and -X sasl.password"),
        (["--upstream", t.kafka.bootstrap, "-X", "request.timeout.ms=30s"], "give a whole number"),
        (["-X", "request.timeout.ms=100"], "they are for --upstream (the tiered proxy) only"),
    ]
    for extra, message in cases:
        p = subprocess.run([str(t.thaw_bin), "serve", "--catalog", t.uri, "--topic", f"{t.topic}={t.table}",
                            "--listen", "127.0.0.1:0", "--state", str(t.tmp / "state-x"), *extra],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, (extra, p.returncode, p.stderr)
        assert message in p.stderr, (extra, p.stderr)


class KafkaFaultProxy:
    """A TCP proxy in front of one Kafka broker, for `--upstream`.

    Upstream -> client, it relays whole frames and rewrites the broker's own
    address in them (the bytes of its host followed by its port as an int32,
    as Metadata, FindCoordinator and DescribeCluster carry it in every
    version) to the proxy's port: same length, so the frame stays valid, and
    every connection Thaw opens to the broker goes through here. Client ->
    upstream is relayed byte for byte.

    Faults: with `cut` set, each connection relays a random number of
    responses in [cut[0], cut[1]] (seeded), then half of the next one, and is
    closed (alternately with FIN and RST). down() stops listening and closes
    every connection (an upstream that is down: connections are refused);
    up() listens again on the same port.
    """

    def __init__(self, upstream: str, cut: tuple[int, int] | None = None, seed: int = 1):
        host, port = upstream.rsplit(":", 1)
        self.up_addr = (host, int(port))
        self.pattern = host.encode() + struct.pack(">i", int(port))
        self.cut = cut
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.connections = 0
        self.cuts = 0
        self.rewritten = 0
        self.socks: list[socket.socket] = []
        self.server: socket.socket | None = None
        self.port = 0
        self.up()
        self.replacement = host.encode() + struct.pack(">i", self.port)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def up(self) -> None:
        self.server = socket.create_server(("127.0.0.1", self.port))
        self.server.settimeout(0.1)
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, args=(self.server,), daemon=True).start()

    def down(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.close()
        with self.lock:
            socks, self.socks = self.socks, []
        self._shut(*socks)

    stop = down

    def _accept(self, server: socket.socket) -> None:
        while self.server is server:
            try:
                client, _ = server.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            client.settimeout(None)
            with self.lock:
                self.connections += 1
                budget = None if self.cut is None else self.rng.randint(*self.cut)
                fin = self.connections % 2 == 0
            try:
                upstream = socket.create_connection(self.up_addr, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self.lock:
                self.socks += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._frames, args=(upstream, client, budget, fin), daemon=True).start()

    @staticmethod
    def _shut(*socks: socket.socket, rst: bool = False) -> None:
        for s in socks:
            try:
                if rst:
                    # Closed with a linger of 0: RST. SHUT_RD first wakes a
                    # thread blocked reading it (close alone would not, and
                    # the connection would stay open while it waits).
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    s.shutdown(socket.SHUT_RD)
                else:
                    s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        self._shut(src, dst)

    @staticmethod
    def _exactly(s: socket.socket, n: int) -> bytes | None:
        buf = bytearray()
        while len(buf) < n:
            chunk = s.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)

    def _frames(self, src: socket.socket, dst: socket.socket, budget: int | None, fin: bool) -> None:
        try:
            while True:
                head = self._exactly(src, 4)
                if head is None:
                    break
                body = self._exactly(src, struct.unpack(">i", head)[0])
                if body is None:
                    break
                if self.pattern in body:
                    body = body.replace(self.pattern, self.replacement)
                    with self.lock:
                        self.rewritten += 1
                if budget is not None and self.cut is not None:
                    if budget == 0:
                        dst.sendall(head + body[:len(body) // 2])
                        with self.lock:
                            self.cuts += 1
                        self._shut(dst, src, rst=not fin)
                        return
                    budget -= 1
                dst.sendall(head + body)
        except OSError:
            pass
        self._shut(src, dst)


def test_upstream_closing_connections_mid_stream(t):
    """Every upstream connection of a Thaw instance goes through
    KafkaFaultProxy, which cuts each one in the middle of a response after a
    few: librdkafka, the Java client and kafka-python all read the whole
    history; with the upstream down, a client started meanwhile reads it all
    once it is back. Thaw stays up and logs each loss."""
    import confluent_kafka as ck
    proxy = KafkaFaultProxy(t.kafka.bootstrap, cut=(3, 6), seed=21)
    try:
        bootstrap = t.start_another(upstream=proxy.address)
        proc = t.others[-1]
        expected = t.expected()
        ends = {p: hi for p, (_lo, hi) in t.kafka.offsets(t.topic, "read_uncommitted").items()}

        # librdkafka, assign from offset 0, many small fetches through a
        # connection cut every few responses.
        c = _assign_reader(bootstrap, **{"reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500,
                                         "topic.metadata.refresh.interval.ms": 2000})
        out: list = []
        try:
            c.assign([ck.TopicPartition(t.topic, p, ck.OFFSET_BEGINNING) for p in ends])
            _read(c, t, ends, out, 60, limit=10)
            cuts = proxy.cuts
            _read(c, t, ends, out, 120)
        finally:
            c.close()
        got = sorted(norm(x) for x in out)
        assert got == expected, diff(expected, got)
        # Connections were cut while the reader was mid-stream, and it went on.
        assert proxy.cuts - cuts >= 3, (cuts, proxy.cuts, proxy.connections)
        assert proxy.rewritten >= 1

        # The Java client, the same way.
        p = run(t, jconsume("--bootstrap", bootstrap, "--topic", t.topic, "--mode", "assign", "--start", "beginning",
                            "--timeout", "120"), timeout=180)
        got = sorted(norm(x) for x in lines_of(p.stdout))
        assert got == expected, diff(expected, got)
        # And kafka-python.
        p = run(t, kafka_python_cmd("-b", bootstrap, "-t", t.topic, "--start", "beginning", "--timeout", "120"),
                timeout=180)
        got = sorted(norm(x) for x in lines_of(p.stdout))
        assert got == expected, diff(expected, got)

        # The upstream down for a while, then back: a client started meanwhile reads everything.
        proxy.cut = None
        proxy.down()
        reader = subprocess.Popen(confluent_cmd("-b", bootstrap, "-t", t.topic, "--start", "beginning",
                                                "--timeout", "90", "-X", "reconnect.backoff.max.ms=500"),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        proxy.up()
        out_s, err_s = reader.communicate(timeout=120)
        assert reader.returncode == 0, err_s[-3000:]
        got = sorted(norm(x) for x in lines_of(out_s))
        assert got == expected, diff(expected, got)

        assert proc.poll() is None, "thaw serve exited"
        log = t.log_of(bootstrap)
        assert re.search(r"upstream .*(closed the connection|connection lost inside a|Connection reset|"
                         r"End of file|Broken pipe).*; closing the connection", log), log[-4000:]
        assert re.search(r"no --upstream address answers: cannot connect to 127\.0\.0\.1:\d+: Connection refused"
                         r"; clients arriving for it are closed", log), log[-4000:]
        # One line while it was down, one when it came back: not one per retry.
        assert log.count("no --upstream address answers") == 1, log[-4000:]
        assert "the upstream's bootstrap servers: reachable again" in log, log[-4000:]
    finally:
        proxy.stop()
