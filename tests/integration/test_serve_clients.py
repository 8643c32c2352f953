"""`thaw serve`: the client matrix of issue 8, against real clients.

Every test consumes whole topics (or a stated slice) with a real client
(drivers in tests/clients/) and compares every record, offset included, with
the table (serve_harness.Served.check, over oracle.py). Layouts: Thaw's
canonical (offset gaps, a 1 MiB value, LogAppendTime rows, null/empty keys,
values and header values), a copy-on-write delete, Redpanda, Kafka Connect
sink (JSON values). Compression per topic: none, gzip (kafka-python,
kafkajs: no codec package needed), lz4, zstd, snappy.

THAW_SERVE_TARGET=kafka runs the same tests against a real broker holding
the same tables (replayed with `thaw replay`); see serve_harness.py.

The tests that take `served_env` also run with the tables behind Iceberg's
REST catalog in an S3-compatible store ("rest-s3", lakehouse.py).
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid

import pytest

import fixtures
from serve_harness import (  # noqa: F401  (fixtures)
    CONSOLE_CONSUMER,
    CONSUMER_GROUPS,
    Topic,
    _serve_broker,
    confluent_cmd,
    java_cmd,
    java_tool,
    kafka_python_cmd,
    kafkajs_cmd,
    kcat_cmd,
    open_served,
    serve_target,
)

CANON = "ns.canonical_v2"
TOPICS = [
    Topic("orders", CANON, "thaw"),
    Topic("orders-gzip", CANON, "thaw", compression="gzip"),
    Topic("orders-lz4", CANON, "thaw", compression="lz4"),
    Topic("orders-zstd", CANON, "thaw", compression="zstd"),
    Topic("orders-snappy", CANON, "thaw", compression="snappy"),
    Topic("deleted", "ns.canonical_cow_delete", "thaw", compression="gzip"),
    Topic("redpanda", "ns.redpanda", "redpanda"),
    Topic("connect", "ns.connect_flat", "kafka-connect-flat", compression="zstd"),
]
LAYOUT_TOPICS = ["orders", "deleted", "redpanda", "connect"]


@pytest.fixture(scope="module")
def served(thaw_bin, thaw, warehouse, tmp_path_factory, _serve_broker):
    with open_served(thaw_bin, thaw, tmp_path_factory.mktemp("serve"), _serve_broker, warehouse.dir,
                     TOPICS) as s:
        yield s
        assert s.alive(), f"thaw serve died during the tests\n{s.stderr()}"


@pytest.fixture(scope="module")
def served_rest(thaw_bin, thaw, lakehouse_warehouse, tmp_path_factory, _serve_broker):
    """The same topics, served from the tables behind the REST catalog in S3 (lakehouse.py)."""
    with open_served(thaw_bin, thaw, tmp_path_factory.mktemp("serve-rest"), _serve_broker, lakehouse_warehouse,
                     TOPICS) as s:
        yield s
        assert s.alive(), f"thaw serve died during the tests\n{s.stderr()}"


@pytest.fixture(params=["local", "rest-s3"])
def served_env(request):
    """`served` ("local") or `served_rest` ("rest-s3"), for the scenarios run in both."""
    return request.getfixturevalue("served" if request.param == "local" else "served_rest")


def mid_timestamp(served, name: str) -> int:
    ts = sorted(r["timestamp"] for r in served.records(name))
    return ts[len(ts) // 2]


# --------------------------------------------------------------------------- kcat


@pytest.mark.parametrize("name", LAYOUT_TOPICS + ["orders-lz4", "orders-snappy"])
def test_kcat_from_beginning(served, name):
    p = served.run(kcat_cmd("-b", served.bootstrap, "-t", served.topic(name), "--start", "beginning"))
    served.check(name, served.parse(p.stdout), client="kcat -C -o beginning -e")


def test_kcat_by_time(served):
    ms = mid_timestamp(served, "orders-zstd")
    p = served.run(kcat_cmd("-b", served.bootstrap, "-t", served.topic("orders-zstd"), "--start", f"s@{ms}"))
    lines = served.parse(p.stdout)
    served.check("orders-zstd", lines, start=f"time:{ms}", client=f"kcat -o s@{ms}")
    assert 0 < len(lines) < len(served.records("orders-zstd"))


def test_kcat_from_offset_in_gap(served):
    # Partition 0 of canonical_v2 has no offset 6 (a transaction marker's gap):
    # a consumer starting there gets offset 7 onwards.
    offs = [r["offset"] for r in served.records("orders") if r["partition"] == 0]
    assert 6 not in offs and 7 in offs
    p = served.run(kcat_cmd("-b", served.bootstrap, "-t", served.topic("orders"), "-p", "0",
                            "--start", str(served.wire_offset("orders", 0, 6))))
    served.check("orders", served.parse(p.stdout), start="offset:6", partitions=[0], client="kcat -p 0 -o 6")


def test_kcat_balanced_group(served):
    group = f"kcat-{uuid.uuid4().hex[:8]}"
    p = served.run(kcat_cmd("-b", served.bootstrap, "-t", served.topic("orders-zstd"), "--group", group))
    served.check("orders-zstd", served.parse(p.stdout), client="kcat -G")


def test_kcat_metadata(served):
    p = served.run(kcat_cmd("-b", served.bootstrap, "--metadata"))
    md = json.loads(p.stdout)
    brokers = {b["id"]: b["name"] for b in md["brokers"]}
    topics = {t["topic"]: t for t in md["topics"]}
    for name in LAYOUT_TOPICS:
        t = topics[served.topic(name)]
        assert "error" not in t or not t["error"], t
        parts = sorted(x["partition"] for x in t["partitions"])
        assert parts == list(range(served.partition_count(name))), (name, parts)
        for x in t["partitions"]:
            assert x["leader"] in brokers, (name, x, brokers)
    if served.mode == "thaw":
        assert list(brokers.values()) == [f"{served.bootstrap}"] or all(
            n.startswith(served.bootstrap) for n in brokers.values()), brokers
        # the configured topics, and nothing else but Kafka's internal ones
        assert {t.name for t in TOPICS} <= set(topics), sorted(topics)
        assert all(t.startswith("__") for t in set(topics) - {t.name for t in TOPICS}), sorted(topics)


# --------------------------------------------------------------------------- confluent-kafka


@pytest.mark.parametrize("name", LAYOUT_TOPICS + ["orders-snappy"])
def test_confluent_assign_from_beginning(served_env, name):
    p = served_env.run(confluent_cmd("-b", served_env.bootstrap, "-t", served_env.topic(name)))
    served_env.check(name, served_env.parse(p.stdout), client="confluent-kafka assign")


def test_confluent_seek_mid_read(served_env):
    # After the first record of partition 1, seek back to partition 1's
    # 10th record: everything from there is delivered again, in order.
    recs = [r for r in served_env.records("orders-lz4") if r["partition"] == 1]
    target = recs[10]["offset"]
    p = served_env.run(confluent_cmd("-b", served_env.bootstrap, "-t", served_env.topic("orders-lz4"),
                                     "--partition", "1",
                                     "--seek-to", f"1:{served_env.wire_offset('orders-lz4', 1, target)}"))
    lines = served_env.parse(p.stdout)
    assert len(lines) == 1 + len(recs) - 10
    assert lines[0]["offset"] == served_env.wire_offset("orders-lz4", 1, recs[0]["offset"]), lines[0]
    served_env.check("orders-lz4", lines[1:], start=f"offset:{target}", partitions=[1],
                     client="confluent-kafka after seek")


def test_confluent_offsets_for_times(served):
    ms = mid_timestamp(served, "orders")
    p = served.run(confluent_cmd("-b", served.bootstrap, "-t", served.topic("orders"), "--start", f"time:{ms}"))
    lines = served.parse(p.stdout)
    served.check("orders", lines, start=f"time:{ms}", client="confluent-kafka offsets_for_times")
    assert 0 < len(lines) < len(served.records("orders"))


def test_confluent_commit_restart_resume(served):
    """subscribe + commit half the records, restart Thaw, resume from the
    committed offsets: every record exactly once; then kafka-consumer-groups
    --describe shows the group at the end of every partition."""
    name = "orders-zstd"
    group = f"ck-{uuid.uuid4().hex[:8]}"
    total = len(served.records(name))
    half = total // 2
    args = ["-b", served.bootstrap, "-t", served.topic(name), "--mode", "subscribe", "--group", group, "--commit"]
    first = served.parse(served.run(confluent_cmd(*args, "--count", str(half))).stdout)
    assert len(first) == half
    served.restart()
    second = served.parse(served.run(confluent_cmd(*args)).stdout)
    served.check(name, first + second, client="confluent-kafka commit, restart, resume")

    p = served.run(java_tool(CONSUMER_GROUPS, "--bootstrap-server", served.bootstrap, "--describe",
                             "--group", group), timeout=90)
    rows = [ln.split() for ln in p.stdout.decode().splitlines() if ln.split()[:1] == [group]]
    ends = {}
    for r in served.records(name):
        ends[r["partition"]] = r["offset"] + 1
    seen = {}
    for r in rows:
        topic, part, cur, end, lag = r[1], int(r[2]), r[3], r[4], r[5]
        assert topic == served.topic(name), r
        seen[part] = (cur, end, lag)
    want_end = {p: str(served.wire_offset(name, p, e)) for p, e in ends.items()}
    assert {p: (c, e) for p, (c, e, _) in seen.items()} == {p: (e, e) for p, e in want_end.items()}, \
        (p.stdout.decode(), want_end)
    assert all(lag == "0" for _, _, lag in seen.values()), seen


# --------------------------------------------------------------------------- kafka-python


@pytest.mark.parametrize("name", ["orders-gzip", "redpanda", "connect", "deleted"])
def test_kafka_python_assign(served, name):
    p = served.run(kafka_python_cmd("-b", served.bootstrap, "-t", served.topic(name)))
    served.check(name, served.parse(p.stdout), client="kafka-python")


def test_kafka_python_group_and_time(served):
    group = f"kp-{uuid.uuid4().hex[:8]}"
    p = served.run(kafka_python_cmd("-b", served.bootstrap, "-t", served.topic("orders-gzip"), "--mode",
                                    "subscribe", "--group", group, "--commit"))
    served.check("orders-gzip", served.parse(p.stdout), client="kafka-python group")
    ms = mid_timestamp(served, "orders-gzip")
    p = served.run(kafka_python_cmd("-b", served.bootstrap, "-t", served.topic("orders-gzip"), "--start",
                                    f"time:{ms}"))
    served.check("orders-gzip", served.parse(p.stdout), start=f"time:{ms}", client="kafka-python offsets_for_times")


# --------------------------------------------------------------------------- kafkajs


@pytest.mark.parametrize("name", ["orders-gzip", "deleted", "redpanda"])  # kafkajs: no zstd, lz4, snappy codecs
def test_kafkajs_group(served, name):
    p = served.run(kafkajs_cmd("-b", served.bootstrap, "-t", served.topic(name)))
    served.check(name, served.parse(p.stdout), client="kafkajs")


# --------------------------------------------------------------------------- Java


def test_java_assign_compressed_and_by_time(served):
    p = served.run(java_cmd("--bootstrap", served.bootstrap, "--topic", served.topic("orders-lz4"),
                            "--topic", served.topic("deleted")))
    lines = served.parse(p.stdout)
    for name in ("orders-lz4", "deleted"):
        served.check(name, [x for x in lines if x["topic"] == served.topic(name)], client="Java KafkaConsumer")
    ms = mid_timestamp(served, "orders-snappy")
    p = served.run(java_cmd("--bootstrap", served.bootstrap, "--topic", served.topic("orders-snappy"),
                            "--start", f"time:{ms}"))
    served.check("orders-snappy", served.parse(p.stdout), start=f"time:{ms}", client="Java offsetsForTimes")


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "cooperative-sticky"])
def test_java_three_members_one_leaves(served, assignor):
    """Three members of one group; one reads a few records, commits and
    leaves; the other two take its partitions over and read everything to the
    end. Every record arrives (re-reads allowed only for records the leaver
    read but had not committed: none, it commits before leaving)."""
    name = "redpanda" if assignor == "roundrobin" else "orders"
    group = f"java3-{assignor}-{uuid.uuid4().hex[:6]}"
    p = served.run(java_cmd("--bootstrap", served.bootstrap, "--topic", served.topic(name), "--mode", "group3",
                            "--group", group, "--assignor", assignor, "--leave-after", "3"), timeout=150)
    lines = served.parse(p.stdout)
    served.check(name, lines, duplicates_ok=True, client=f"Java group of 3 ({assignor}), one leaving")
    events = [json.loads(x) for x in p.stderr.decode().splitlines() if x.startswith("{\"member\"")]
    assert any(e.get("left") for e in events), p.stderr.decode()[-3000:]
    assert {x["member"] for x in lines} >= {2}, "the leaver read nothing"
    # after the leave, members 0 and 1 together hold every partition
    left_at = next(i for i, e in enumerate(events) if e.get("left"))
    later = {}
    for e in events[left_at:]:
        if "assigned" in e:
            later[e["member"]] = e["assigned"]
    if assignor != "cooperative-sticky":  # cooperative: assignments are incremental
        held = {tuple(tp) for m in (0, 1) for tp in later.get(m, [])}
        assert {tp[1] for tp in held} == set(range(served.partition_count(name))), (events, later)


def test_java_console_consumer(served):
    name = "orders-zstd"
    recs = served.expected(name)
    p = served.run(java_tool(CONSOLE_CONSUMER, "--bootstrap-server", served.bootstrap, "--topic",
                             served.topic(name), "--from-beginning", "--max-messages", str(len(recs)),
                             "--timeout-ms", "30000", "--property", "print.partition=true", "--property",
                             "print.offset=true", "--property", "print.timestamp=true", "--property",
                             "print.value=false", "--property", "print.key=false"), timeout=90)
    got = []
    for ln in p.stdout.decode(errors="replace").splitlines():
        f = ln.split("\t")
        if len(f) < 3 or not f[1].startswith("Partition:"):
            continue
        tt, ts = f[0].split(":")
        got.append((int(f[1].split(":")[1]), int(f[2].split(":")[1]), tt, int(ts)))
    assert f"Processed a total of {len(recs)} messages" in p.stderr.decode(), p.stderr.decode()[-2000:]
    want = [(r["partition"], served.wire_offset(name, r["partition"], r["offset"]), r["timestamp_type"],
             r["timestamp"]) for r in recs]
    assert sorted(got) == sorted(want)


# --------------------------------------------------------------------------- growing table


def test_tail_while_appending(serve_target, tmp_path):
    """A consumer at the end of a topic keeps getting the records appended
    to the table (pyiceberg append) while it tails it."""
    wh = str(tmp_path / "wh")
    table = fixtures.build_small_canonical(wh, "ns.growing")
    before = fixtures.expected_view(fixtures.edge_case_records([0, 1], 12, seed=99))
    with serve_target(wh, [Topic("growing", "ns.growing", "thaw", compression="lz4")], refresh="1s") as served:
        assert len(served.records("growing")) == len(before)
        more = fixtures.edge_case_records([0, 1], 6, seed=7, start_offsets={
            p: max(r["offset"] for r in before if r["partition"] == p) + 3 for p in (0, 1)})
        total = len(before) + len(more)
        cmd = confluent_cmd("-b", served.bootstrap, "-t", served.topic("growing"), "--follow", "--count",
                            str(total), "--timeout", "60")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        lines = []
        try:
            while len(lines) < len(before):
                ln = proc.stdout.readline()
                assert ln, f"consumer ended early: {proc.stderr.read().decode()[-2000:]}"
                lines.append(json.loads(ln))
            time.sleep(1.0)  # the consumer now waits at the end of both partitions
            fixtures.append_rows(table, [fixtures.canonical_row(r) for r in more])
            served.sync("growing")
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 0, err.decode()[-3000:]
        lines += served.parse(out)
        served.check("growing", lines, client="confluent-kafka tailing")
        assert len(served.records("growing")) == total


def test_topic_args_form(serve_target, warehouse):
    """--topic NAME=NS.TABLE (no config file) serves the table too."""
    with serve_target(warehouse.dir, [Topic("plainargs", "ns.redpanda", "redpanda")], topic_args=True) as served:
        p = served.run(confluent_cmd("-b", served.bootstrap, "-t", served.topic("plainargs")))
        served.check("plainargs", served.parse(p.stdout), client="confluent-kafka")
