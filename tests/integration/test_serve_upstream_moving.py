"""`thaw serve --upstream` while the boundary between the tiers moves
(issue 21), and read_committed readers of transactional history.

The boundary moves as it does in production: `thaw archive --follow`
commits snapshots every second while a producer keeps writing, and the
broker's log start follows the archive (DeleteRecords up to what the
archive committed, as a tiered retention policy does), so segments vanish
between Thaw's answer and a consumer's next fetch. A slow reader starting
at offset 0 must still see every record exactly once, at its offset.
"""

from __future__ import annotations

import functools
import threading
import time
import uuid

import archive_cli
from upstream_harness import diff, norm_broker, tiered  # noqa: F401 (tiered is a fixture)


def _msg_dict(m) -> dict:
    return {"partition": m.partition(), "offset": m.offset(), "timestamp": m.timestamp()[1], "key": m.key(),
            "value": m.value(), "headers": list(m.headers() or [])}


def test_the_boundary_moves_under_a_slow_reader(tiered):
    import confluent_kafka as ck

    t = tiered(partitions=2)
    kafka = t.kafka
    produced: list[dict] = []
    errors: list[str] = []
    stop = threading.Event()

    def on_delivery(headers, err, msg):
        if err is not None:
            errors.append(str(err))
        else:
            # A delivery report carries no headers: the ones produced.
            produced.append(_msg_dict(msg) | {"headers": headers})

    def produce():
        prod = kafka.producer(compression_type="zstd", linger_ms=5)
        n = 0
        while not stop.is_set():
            for p in range(t.partitions):
                headers = [("n", str(n).encode())]
                prod.produce(t.topic, key=f"m{n % 17}".encode(), value=f"moving-{p}-{n}".encode() * (1 + n % 5),
                             partition=p, timestamp=int(time.time() * 1000), headers=headers,
                             on_delivery=functools.partial(on_delivery, headers))
            n += 1
            prod.poll(0)
            time.sleep(0.01)
        assert prod.flush(30) == 0

    # The archive follows the topic; the broker forgets what it committed.
    archive = archive_cli.start_archive(
        t.thaw_bin, archive_cli.archive_args(kafka, t.uri, t.table, t.topic, "--follow", "--commit-interval", "1s"),
        t.tmp / "archive.log")
    log_starts: list[dict[int, int]] = []

    def follow_archive():
        admin = kafka.admin()
        while not stop.is_set():
            time.sleep(1.0)
            try:
                committed = archive_cli.committed_next_offsets(t.uri, t.table, t.topic)
            except archive_cli.CatalogMidTransaction:
                continue
            targets = [ck.TopicPartition(t.topic, p, off) for p, off in committed.items()
                       if off > (log_starts[-1].get(p, 0) if log_starts else 0)]
            if not targets:
                continue
            for f in admin.delete_records(targets, request_timeout=30).values():
                f.result(timeout=30)
            log_starts.append({tp.partition: tp.offset for tp in targets} |
                              {p: o for p, o in (log_starts[-1].items() if log_starts else ()) if p not in
                               {tp.partition for tp in targets}})

    t.start()
    threads = [threading.Thread(target=produce), threading.Thread(target=follow_archive)]
    for th in threads:
        th.start()
    got: list[dict] = []
    tiers: dict[int, list[str]] = {p: [] for p in range(t.partitions)}
    try:
        # A slow reader from offset 0: small fetches and a pause per record,
        # so that the boundary passes it several times.
        c = ck.Consumer({"bootstrap.servers": t.bootstrap, "group.id": "moving-" + uuid.uuid4().hex[:6],
                         "enable.auto.commit": False, "fetch.max.bytes": 4096, "message.max.bytes": 4096, "max.partition.fetch.bytes": 2048,
                         # No prefetching far ahead: the fetch position stays near the reader's.
                         "queued.min.messages": 1, "queued.max.messages.kbytes": 1, "fetch.queue.backoff.ms": 5,
                         "fetch.wait.max.ms": 100})
        c.assign([ck.TopicPartition(t.topic, p, ck.OFFSET_BEGINNING) for p in range(t.partitions)])
        deadline = time.monotonic() + 240
        # Fast until the reader is in the upstream's data on every partition,
        # then slower than the producer for 25 s (the boundary overtakes it),
        # then production stops and it reads to the end.
        slow_since = stopped_at = None
        while True:
            assert time.monotonic() < deadline, f"read stalled at {len(got)} records\n{t.log()[-3000:]}"
            if slow_since is None and all(seq and seq[-1] == "upstream" for seq in tiers.values()):
                slow_since = time.monotonic()
            if stopped_at is None and slow_since is not None and time.monotonic() > slow_since + 25:
                stop.set()
                for th in threads:
                    th.join(60)
                stopped_at = time.monotonic()
            m = c.poll(0.2)
            if m is None:
                if stopped_at is not None:
                    ends = {}
                    for r in produced:
                        ends[r["partition"]] = max(ends.get(r["partition"], 0), r["offset"] + 1)
                    pos = {tp.partition: tp.offset for tp in c.position(
                        [ck.TopicPartition(t.topic, p) for p in range(t.partitions)])}
                    if all(pos.get(p, -1) >= ends.get(p, 0) for p in range(t.partitions)):
                        break
                continue
            assert not m.error(), m.error()
            got.append(_msg_dict(m))
            tier = "table" if m.leader_epoch() is None else "upstream"
            if not tiers[m.partition()] or tiers[m.partition()][-1] != tier:
                tiers[m.partition()].append(tier)
            if slow_since is not None and stopped_at is None:
                time.sleep(0.02)
        c.close()
    finally:
        stop.set()
        for th in threads:
            th.join(60)
        archive.terminate()
        archive.wait(30)

    assert not errors, errors
    # The boundary really moved while the reader read: several deletions,
    # the last far above where the reader started.
    assert len(log_starts) >= 4, log_starts
    first = t.bounds
    assert all(log_starts[-1][p] > first[p][0] for p in range(t.partitions)), (first, log_starts[-1])
    expected_by_key = {(r[0], r[1]): r for r in t.expected()}
    for r in produced:
        expected_by_key[(r["partition"], r["offset"])] = norm_broker(r)
    expected = [expected_by_key[k] for k in sorted(expected_by_key)]
    normalized = [norm_broker(r) for r in got]
    assert len(normalized) == len(set(normalized)), "a record was read twice"
    assert sorted(normalized) == expected, diff(expected, sorted(normalized))
    # In order per partition.
    for p in range(t.partitions):
        offs = [r["offset"] for r in got if r["partition"] == p]
        assert offs == sorted(offs), p
    # On each partition the reader was in the upstream's data when the
    # boundary overtook it, and went on from the table, then back.
    assert all(seq[:4] == ["table", "upstream", "table", "upstream"] for seq in tiers.values()), tiers


def test_read_committed_reads_transactional_history_from_the_table(tiered):
    """Aborted transactions and commit markers in the archived history: a
    read_committed reader through Thaw sees exactly the committed records,
    below the boundary (from the table) and above it (the upstream's answer
    as is)."""
    import confluent_kafka as ck

    t = tiered(partitions=2, truncate="delete_records")
    kafka = t.kafka

    def transactions(tag: str, count: int):
        tx = kafka.producer(transactional_id=f"tx-{uuid.uuid4().hex[:8]}", compression_type="zstd", linger_ms=5)
        tx.init_transactions(30)
        for i in range(count):
            tx.begin_transaction()
            for j in range(6):
                tx.produce(t.topic, key=f"{tag}{i}".encode(), value=f"{tag}-{i}-{j}".encode(), partition=j % 2)
            if i % 3 == 1:
                tx.flush(30)
                tx.abort_transaction(30)
            else:
                tx.commit_transaction(30)

    transactions("cold", 9)
    committed_before = kafka.consume_all(t.topic, isolation="read_committed")
    ends = kafka.offsets(t.topic, "read_uncommitted")
    t.thaw(*archive_cli.archive_args(kafka, t.uri, t.table, t.topic))
    # The broker forgets all of it.
    fs = kafka.admin().delete_records([ck.TopicPartition(t.topic, p, ends[p][1]) for p in range(t.partitions)],
                                      request_timeout=30)
    for f in fs.values():
        f.result(timeout=30)
    transactions("hot", 6)
    committed_after = kafka.consume_all(t.topic, isolation="read_committed")
    hot_aborted = any(b"hot-1-" in (r["value"] or b"") for r in kafka.consume_all(t.topic, "read_uncommitted"))
    assert hot_aborted, "the upstream holds no aborted transaction to skip"

    expected_map = {(r[0], r[1]): r for r in t.expected()}
    # t.expected() holds read_uncommitted history of the plain records; the
    # transactional ones come from the read_committed reads.
    for r in committed_before + committed_after:
        expected_map[(r["partition"], r["offset"])] = norm_broker(r)
    expected = [expected_map[k] for k in sorted(expected_map)]

    t.start()
    c = ck.Consumer({"bootstrap.servers": t.bootstrap, "group.id": "rc-" + uuid.uuid4().hex[:6],
                     "enable.auto.commit": False, "isolation.level": "read_committed",
                     "enable.partition.eof": True})
    c.assign([ck.TopicPartition(t.topic, p, ck.OFFSET_BEGINNING) for p in range(t.partitions)])
    got, at_end = [], set()
    deadline = time.monotonic() + 120
    while len(at_end) < t.partitions:
        assert time.monotonic() < deadline, f"read stalled at {len(got)}\n{t.log()[-3000:]}"
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            assert m.error().code() == ck.KafkaError._PARTITION_EOF, m.error()
            at_end.add(m.partition())
            continue
        got.append(norm_broker(_msg_dict(m)))
    c.close()
    assert sorted(got) == expected, diff(expected, sorted(got))
    import base64
    values = [base64.b64decode(r[4]) for r in got if r[4] is not None]
    for tag in ("cold", "hot"):
        assert any(v.startswith(f"{tag}-0-".encode()) for v in values), tag
        assert not any(v.startswith(f"{tag}-1-".encode()) for v in values), f"{tag}: an aborted record was read"
