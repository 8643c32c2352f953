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

import json
import re
import subprocess
import time
import uuid

from serve_harness import confluent_cmd, java_cmd, kcat_cmd
from upstream_harness import diff, norm_line, produce_records, tiered  # noqa: F401 (tiered is a fixture)

def test_kcat_reads_the_whole_history_across_the_boundary(tiered):
    t = tiered()
    for p, (lo, _hi) in t.bounds.items():
        assert lo > 0, f"partition {p}: retention deleted nothing ({t.bounds})"
    t.start()
    got = t.consume(kcat_cmd("-b", t.bootstrap, "-t", t.topic, "--start", "beginning"))
    expected = t.expected()
    assert got == expected, diff(expected, got)
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
    assert got == expected, diff(expected, got)
    # The group lives in the upstream cluster: its committed offsets are the
    # ends of the partitions, read straight from the broker.
    import confluent_kafka as ck
    admin = t.kafka.admin()
    fut = admin.list_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(group)])[group]
    committed = {tp.partition: tp.offset for tp in fut.result(timeout=30).topic_partitions}
    ends = t.kafka.offsets(t.topic, "read_uncommitted")
    assert committed == {p: ends[p][1] for p in ends}


def test_a_kip848_consumer_group_reads_both_tiers(tiered):
    """The new consumer protocol (KIP-848, group.protocol=consumer): the
    ConsumerGroupHeartbeat exchanges pass through to the upstream's
    coordinator, which assigns the partitions; the member reads the whole
    history across the boundary and commits in the upstream."""
    t = tiered()
    t.start()
    group = f"g848-{uuid.uuid4().hex[:6]}"
    got = t.consume(confluent_cmd("-b", t.bootstrap, "-t", t.topic, "--mode", "subscribe", "--group", group,
                                  "--commit", "-X", "group.protocol=consumer"))
    expected = t.expected()
    assert got == expected, diff(expected, got)
    import confluent_kafka as ck
    admin = t.kafka.admin()
    described = admin.describe_consumer_groups([group])[group].result(timeout=30)
    assert str(described.type).endswith("CONSUMER"), described.type  # not CLASSIC: the new protocol ran
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
    assert got == expected, diff(expected, got)


def test_a_consumer_tails_records_produced_after_it_crossed(tiered):
    t = tiered()
    t.start()
    before = len(t.expected())
    proc = subprocess.Popen(confluent_cmd("-b", t.bootstrap, "-t", t.topic, "--start", "beginning", "--follow",
                                          "--count", str(before + 30), "--timeout", "120"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    produce_records(t.kafka, t.topic, t.partitions, 10, int(time.time() * 1000), "live")
    out, err = proc.communicate(timeout=150)
    assert proc.returncode == 0, err[-3000:]
    got = sorted(norm_line(json.loads(x)) for x in out.splitlines() if x.strip())
    now = t.kafka.consume_all(t.topic, isolation="read_uncommitted")
    t.recent = now
    expected = t.expected()
    assert got == expected, diff(expected, got)


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
    assert got == held, diff(held, got)
    log = t.log()
    for p in range(t.partitions):
        assert re.search(rf"{re.escape(t.topic)}-{p}: offsets {t.archived_until[p]}\.\.\d+ are in neither tier", log), log


def _read_with_epochs(bootstrap: str, topic: str, partitions: int, timeout: float = 120) -> dict[tuple, int | None]:
    """{(partition, offset): the batch's leader epoch (None for -1)} of a
    whole-topic read from the beginning through `bootstrap`."""
    import confluent_kafka as ck
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "epochs-" + uuid.uuid4().hex[:6],
                     "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(partitions)])
        out, at_end = {}, set()
        deadline = time.monotonic() + timeout
        while len(at_end) < partitions:
            assert time.monotonic() < deadline, f"read stalled: {len(out)} records, at the end: {at_end}"
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                assert m.error().code() == ck.KafkaError._PARTITION_EOF, m.error()
                at_end.add(m.partition())
                continue
            out[(m.partition(), m.offset())] = m.leader_epoch()
        return out
    finally:
        c.close()


def test_prefer_table_serves_what_both_tiers_hold_from_the_table(tiered):
    import archive_cli
    t = tiered(partitions=2)
    # Archive again: the table now also holds the records the broker still has.
    t.thaw(*archive_cli.archive_args(t.kafka, t.uri, t.table, t.topic))
    expected = t.expected()
    t.start()
    upstream_first = _read_with_epochs(t.bootstrap, t.topic, t.partitions)
    t.stop()
    t.start(topic_options=":prefer=table")
    table_first = _read_with_epochs(t.bootstrap, t.topic, t.partitions)
    assert sorted(upstream_first) == sorted(table_first) == [(r[0], r[1]) for r in expected]
    for (p, off), epoch in upstream_first.items():
        # Default: the upstream serves from its log start, with its epochs.
        assert (epoch is None) == (off < t.bounds[p][0]), (p, off, epoch)
    # prefer=table: every offset the table holds comes from it (epoch -1).
    assert all(epoch is None for epoch in table_first.values()), \
        sorted(k for k, e in table_first.items() if e is not None)[:5]
    got = t.consume(kcat_cmd("-b", t.bootstrap, "-t", t.topic, "--start", "beginning"))
    assert got == expected, diff(expected, got)


def test_cold_suffix_serves_the_table_alone_as_another_topic(tiered):
    """`--cold-suffix .cold`: NAME.cold is the table alone (Iceberg only),
    led by a broker of Thaw's own in Metadata; NAME stays the merged topic.
    Its reads still ask the upstream about NAME first (the probe), and the
    upstream never learns of (or auto-creates) NAME.cold."""
    import confluent_kafka as ck
    t = tiered(partitions=2)
    view = t.topic + ".cold"
    t.start("--cold-suffix", ".cold")
    md = ck.admin.AdminClient({"bootstrap.servers": t.bootstrap}).list_topics(timeout=30)
    assert view in md.topics and t.topic in md.topics, sorted(md.topics)
    # Thaw's own broker: the last port of --broker-ports.
    assert md.brokers[2_000_000_000].port == t.broker_ports + 9, md.brokers
    assert all(p.leader == 2_000_000_000 for p in md.topics[view].partitions.values())
    assert sorted(md.topics[view].partitions) == list(range(t.partitions))
    # A named request too (and the view is no upstream topic).
    one = ck.admin.AdminClient({"bootstrap.servers": t.bootstrap}).list_topics(view, timeout=30)
    assert one.topics[view].error is None and len(one.topics[view].partitions) == t.partitions
    assert view not in t.kafka.admin().list_topics(timeout=30).topics

    history = [r for r in t.expected() if r[1] < t.archived_until[r[0]]]
    got = t.consume(kcat_cmd("-b", t.bootstrap, "-t", view, "--start", "beginning"))
    assert [(r[0], r[1]) for r in got] == [(r[0], r[1]) for r in history]
    assert [r[2:] for r in got] == [r[2:] for r in history]
    # The merged topic is unchanged.
    got = t.consume(kcat_cmd("-b", t.bootstrap, "-t", t.topic, "--start", "beginning"))
    assert got == t.expected(), diff(t.expected(), got)

    c = ck.Consumer({"bootstrap.servers": t.bootstrap, "group.id": "cold-" + uuid.uuid4().hex[:6]})
    try:
        for p in range(t.partitions):
            lo, hi = c.get_watermark_offsets(ck.TopicPartition(view, p), timeout=30)
            assert (lo, hi) == (0, t.archived_until[p]), (p, lo, hi)
        first_ts = min(r["timestamp"] for r in t.history if r["partition"] == 0)
        found = c.offsets_for_times([ck.TopicPartition(view, 0, first_ts)], timeout=30)[0]
        assert found.offset == 0
        late = c.offsets_for_times([ck.TopicPartition(view, 0, int(time.time() * 1000))], timeout=30)[0]
        assert late.offset in (-1, t.archived_until[0]), late  # nothing that new in the table: the end
    finally:
        c.close()
    # A group reading the view: its offsets are committed in the upstream
    # under the base topic's name (the same offsets), and read back as the view's.
    group = f"g-cold-{uuid.uuid4().hex[:6]}"
    got = t.consume(confluent_cmd("-b", t.bootstrap, "-t", view, "--mode", "subscribe", "--group", group, "--commit"))
    assert [(r[0], r[1]) for r in got] == [(r[0], r[1]) for r in history]
    admin = t.kafka.admin()
    fut = admin.list_consumer_group_offsets([ck.ConsumerGroupTopicPartitions(group)])[group]
    committed = {(tp.topic, tp.partition): tp.offset for tp in fut.result(timeout=30).topic_partitions}
    assert committed == {(t.topic, p): t.archived_until[p] for p in range(t.partitions)}, committed
    c = ck.Consumer({"bootstrap.servers": t.bootstrap, "group.id": group})
    try:
        back = c.committed([ck.TopicPartition(view, p) for p in range(t.partitions)], timeout=30)
        assert {(tp.topic, tp.partition): tp.offset for tp in back} == \
            {(view, p): t.archived_until[p] for p in range(t.partitions)}
    finally:
        c.close()
    # Reading at the view's end waits as a broker would, without spinning.
    cpu0 = _cpu_seconds(t.proc.pid)
    tail = subprocess.run(kcat_cmd("-b", t.bootstrap, "-t", view, "--start", "end", "--no-eof-exit", "--count", "1",
                                   "--timeout", "5"), capture_output=True, text=True, timeout=60)
    assert tail.stdout.strip() == "", tail.stdout
    assert _cpu_seconds(t.proc.pid) - cpu0 < 2.0


def _cpu_seconds(pid: int) -> float:
    import os
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
