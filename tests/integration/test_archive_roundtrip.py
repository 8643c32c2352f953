"""Round trips through `thaw archive` on a real broker:

* Kafka -> archive -> `thaw replay` into a new topic: record for record the
  original (partition, key, value, headers in order with duplicates and
  nulls, timestamp), the original offset in the thaw.source.offset link
  header, per-partition order kept.
* Kafka -> archive -> `thaw serve` -> a read_committed consumer: offset for
  offset the original records (gaps of aborted transactions and markers
  included), timestamp types included.
* `archive --follow` keeps up with a producer: every record's produce ->
  visible latency (visible = the committed snapshot's thaw.archive.next-offsets
  passed its offset) is measured and printed; SIGTERM exits 143 and the table
  then equals the topic.
"""

from __future__ import annotations

import json
import signal
import statistics
import threading
import time
import uuid

import pytest

import archive_topics
import iceberg_readers as readers
from archive_cli import archive_args, committed_next_offsets, new_catalog, start_archive
from kafka_broker import KafkaBroker
from serve_harness import Topic, thaw_serve  # noqa: F401  (fixture)


@pytest.fixture(scope="module")
def rich_archived(kafka, thaw, tmp_path_factory):
    wh = str(tmp_path_factory.mktemp("archive_roundtrip"))
    uri = new_catalog(wh)
    topic = archive_topics.make_rich_topic(kafka)
    want = kafka.consume_all(topic)
    p = thaw(*archive_args(kafka, uri, "ns.rich", topic, "--target-file-size", "1MiB"), timeout=300)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    return uri, "ns.rich", topic, want


def test_archive_then_replay_equals_original(kafka, thaw, rich_archived):
    uri, table, topic, want = rich_archived
    target = archive_topics.topic_name("replayed")
    p = thaw("replay", "--catalog", uri, "--table", table, "--brokers", kafka.bootstrap, "--topic", target,
             "--create-topic", "--quiet", "--json", timeout=300)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    assert json.loads(p.stdout)["records"] == len(want)
    assert sorted(kafka.partitions(target)) == sorted(kafka.partitions(topic))
    got = kafka.consume_all(target)
    assert len(got) == len(want), f"{len(got)} records replayed, {len(want)} in the original topic"
    by_source = {}
    last_source = {}
    for g in got:
        own = [h for h in g["headers"] if not h[0].startswith("thaw.source.")]
        link = {k: v for k, v in g["headers"] if k.startswith("thaw.source.")}
        assert link["thaw.source.table"] == table.encode()
        assert link["thaw.source.topic"] == topic.encode()
        src = (int(link["thaw.source.partition"]), int(link["thaw.source.offset"]))
        assert src not in by_source, f"source record {src} replayed twice"
        # Per target partition the source offsets ascend: order kept.
        assert src[1] > last_source.get(g["partition"], -1), (g["partition"], src)
        last_source[g["partition"]] = src[1]
        by_source[src] = {**g, "headers": own}
    for w in want:
        g = by_source.get((w["partition"], w["offset"]))
        assert g is not None, f"partition {w['partition']} offset {w['offset']} was not replayed"
        for f in ("partition", "key", "value", "headers", "timestamp", "timestamp_type"):
            assert g[f] == w[f], (f"partition {w['partition']} offset {w['offset']}: {f} {g[f]!r:.200} "
                                  f"!= original {w[f]!r:.200}")


def test_archive_then_serve_equals_original_offset_for_offset(kafka, thaw_serve, rich_archived):  # noqa: F811
    uri, table, topic, want = rich_archived
    with thaw_serve(uri, [Topic(topic, table, "thaw")], topic_args=True) as (bootstrap, _proc):
        got = KafkaBroker(bootstrap).consume_all(topic, settle=0)
    readers.assert_same_records(got, want, f"a consumer of `thaw serve` ({topic}={table})")


def test_follow_keeps_up_with_a_producer(kafka, thaw_bin, tmp_path):
    wh = tmp_path / "wh"
    wh.mkdir()
    uri = new_catalog(str(wh))
    topic = archive_topics.topic_name("follow")
    kafka.create_topic(topic, 3)
    err = tmp_path / "archive.stderr"
    proc = start_archive(thaw_bin, archive_args(kafka, uri, "ns.follow", topic, "--follow", "--commit-interval", "1s",
                                                "--json"), err)
    produced: list = []
    visible: dict[tuple[int, int], float] = {}
    stop = threading.Event()

    def watch():
        # Poll the catalog: a record is visible once the current snapshot's next offset passed it.
        seen = {}
        while not stop.is_set():
            try:
                nxt = committed_next_offsets(uri, "ns.follow", topic)
            except (OSError, ValueError):
                nxt = {}  # a metadata file being replaced under us: try again
            now = time.monotonic()
            for p, o in nxt.items():
                if o > seen.get(p, 0):
                    for off in range(seen.get(p, 0), o):
                        visible.setdefault((p, off), now)
                    seen[p] = o
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        archive_topics.produce_steady(kafka, topic, rate=200, seconds=5, out=produced)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all((p, o) in visible for p, o, _ in produced):
            assert proc.poll() is None, f"archive --follow exited {proc.returncode}:\n{err.read_text()[-3000:]}"
            time.sleep(0.1)
        stop.set()
        watcher.join(5)
        missing = [(p, o) for p, o, _ in produced if (p, o) not in visible]
        assert not missing, f"{len(missing)} of {len(produced)} records not visible 30 s after the producer " \
                            f"stopped, e.g. {missing[:5]}\n{err.read_text()[-3000:]}"
        lat = sorted(visible[(p, o)] - t for p, o, t in produced)
        p50, p99 = statistics.median(lat), lat[int(0.99 * (len(lat) - 1))]
        print(f"\narchive --follow --commit-interval 1s, {len(produced)} records at 200/s over 5 s: "
              f"produce -> visible latency p50 {p50:.2f} s, p99 {p99:.2f} s, max {lat[-1]:.2f} s")
        assert p99 <= 5.0, f"produce -> visible p99 {p99:.2f} s with a 1 s commit interval (p50 {p50:.2f} s)"
    finally:
        stop.set()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=30)
        except Exception:
            proc.kill()
            proc.wait()
            raise
    assert proc.returncode == 128 + signal.SIGTERM, f"archive --follow exited {proc.returncode} after SIGTERM:\n{err.read_text()[-3000:]}"
    s = json.loads(out)
    assert s["interrupted"] is True
    want = kafka.consume_all(topic)
    assert s["records"] == len(want) == len(produced)
    readers.assert_same_records(readers.read_pyiceberg(uri, "ns.follow"), want, "pyiceberg after archive --follow")
