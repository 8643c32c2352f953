"""Replayed history must stay in the target topic: `thaw replay` against a
real broker whose retention checker runs every second
(log.retention.check.interval.ms=1000, fixture `kafka_fast_retention`), so a
topic that would delete months-old records does so within seconds.

* `--create-topic` makes a topic that keeps what it receives (retention.ms=-1,
  retention.bytes=-1): months-old records are all still there after several
  retention checks, while a control topic with the broker's default retention
  (7 days) loses the same kind of records within seconds.
* An existing topic that would delete or rewrite the records is refused before
  anything is produced, with the config and the fix in the message; `--force`
  proceeds with a warning.
* `--timestamps now` replays into a LogAppendTime topic, the original
  timestamp kept in a `thaw.source.timestamp` header.
* A real timestamp of 0 arrives as 0."""

from __future__ import annotations

import json
import time
import uuid

import pytest

import fixtures

DAY_MS = 86_400_000
OLD_PARTITIONS = 3
OLD_PER_PARTITION = 400


def topic_name(prefix="ret"):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def old_tables(tmp_path_factory):
    """ns.old: partitions 0..2 x 400 records whose timestamps are ~4 months
    old (one per minute). ns.epoch: one partition whose records have
    timestamps 0, 1 and a recent one."""
    wh = str(tmp_path_factory.mktemp("retention-wh"))
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists("ns")
    now = int(time.time() * 1000)
    base = now - 120 * DAY_MS
    old = []
    for p in range(OLD_PARTITIONS):
        for i in range(OLD_PER_PARTITION):
            old.append(fixtures.rec(p, i, base + i * 60_000 + p, f"k{p}-{i}".encode(), f"old p{p} o{i}".encode(),
                                    [("h", str(i).encode())]))
    t = fixtures.create(cat, wh, "ns.old", fixtures.canonical_schema(), spec=fixtures.CANONICAL_SPEC,
                        properties=fixtures.thaw_props("history"))
    fixtures.append_rows(t, [fixtures.canonical_row(r) for r in old])
    epoch = [fixtures.rec(0, 0, 0, b"zero", b"epoch"), fixtures.rec(0, 1, 1, b"one", b"epoch+1ms"),
             fixtures.rec(0, 2, now - 60_000, b"recent", b"a minute ago")]
    t = fixtures.create(cat, wh, "ns.epoch", fixtures.canonical_schema(), spec=fixtures.CANONICAL_SPEC,
                        properties=fixtures.thaw_props("epoch"))
    fixtures.append_rows(t, [fixtures.canonical_row(r) for r in epoch])
    return {"uri": fixtures.catalog_uri(wh), "old": old, "epoch": epoch}


def replay(thaw, tables, table, broker, topic, *extra):
    return thaw("replay", "--catalog", tables["uri"], "--table", table, "--brokers", broker.bootstrap,
                "--topic", topic, *extra, timeout=180)


def link(r):
    return {k: v for k, v in r["headers"] if k.startswith("thaw.source.")}


def assert_same_records(got, want, timestamps=True):
    assert len(got) == len(want), f"{len(got)} records in the topic, want {len(want)}"
    by_src = {(int(link(g)["thaw.source.partition"]), int(link(g)["thaw.source.offset"])): g for g in got}
    for w in want:
        g = by_src[(w["partition"], w["offset"])]
        assert g["partition"] == w["partition"]
        assert (g["key"], g["value"]) == (w["key"], w["value"]), (w["partition"], w["offset"])
        assert [h for h in g["headers"] if not h[0].startswith("thaw.")] == w["headers"]
        if timestamps:
            assert (g["timestamp"], g["timestamp_type"]) == (w["timestamp"], "CreateTime"), (w["partition"], w["offset"])


def assert_nothing_produced(broker, topic):
    ends = broker.offsets(topic, "read_uncommitted")
    assert all(hi == 0 for _, hi in ends.values()), f"records were produced into {topic}: {ends}"


def test_created_topic_keeps_months_old_records(thaw, kafka_fast_retention, old_tables):
    k = kafka_fast_retention
    want = old_tables["old"]
    # Control: the same kind of records in a topic with the broker's default
    # retention (7 days) are deleted within seconds on this broker.
    control = topic_name("control")
    k.create_topic(control, OLD_PARTITIONS, config={"retention.ms": str(7 * 86_400_000)})
    prod = k.producer()
    for r in want[::50]:
        prod.produce(control, r["value"], r["key"], partition=r["partition"], timestamp=r["timestamp"])
    assert prod.flush(30) == 0

    topic = topic_name()
    p = replay(thaw, old_tables, "ns.old", k, topic, "--create-topic", "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["records"] == len(want)

    # ~10 s: ten retention checks. Nothing may go.
    per_partition = {p_: (0, OLD_PER_PARTITION) for p_ in range(OLD_PARTITIONS)}
    t_end = time.monotonic() + 10
    while time.monotonic() < t_end:
        now = k.offsets(topic, "read_uncommitted")
        assert now == per_partition, f"the broker deleted replayed records: {{partition: (start, end)}} = {now}"
        time.sleep(1)
    deadline = time.monotonic() + 20
    while True:
        ctl = k.offsets(control, "read_uncommitted")
        if all(lo == hi and hi > 0 for lo, hi in ctl.values()):
            break
        assert time.monotonic() < deadline, (
            f"control topic kept its months-old records ({ctl}): the broker's retention checker is not running "
            f"every second, so this test proves nothing")
        time.sleep(0.5)
    assert k.offsets(topic, "read_uncommitted") == per_partition
    assert_same_records(k.consume_all(topic), want)
    cfg = k.topic_config(topic)
    assert (cfg["retention.ms"], cfg["retention.bytes"]) == ("-1", "-1"), cfg


def test_topic_config_overrides_created_defaults(thaw, kafka_fast_retention, old_tables):
    k = kafka_fast_retention
    topic = topic_name()
    p = replay(thaw, old_tables, "ns.old", k, topic, "--create-topic", "--topic-config", "retention.ms=315360000000",
               "--topic-config", "compression.type=zstd", "--quiet")
    assert p.returncode == 0, p.stderr.decode()
    cfg = k.topic_config(topic)
    assert (cfg["retention.ms"], cfg["retention.bytes"], cfg["compression.type"]) == ("315360000000", "-1", "zstd")


def test_existing_topic_with_short_retention_is_refused(thaw, kafka_fast_retention, old_tables):
    k = kafka_fast_retention
    topic = topic_name()
    k.create_topic(topic, OLD_PARTITIONS, config={"retention.ms": DAY_MS})
    p = replay(thaw, old_tables, "ns.old", k, topic, "--quiet")
    err = p.stderr.decode()
    assert p.returncode != 0, "replayed months-old records into a topic that keeps one day"
    assert "retention.ms" in err and "retention.ms=-1" in err and "--force" in err, err
    assert_nothing_produced(k, topic)


def test_force_replays_into_short_retention_with_a_warning(thaw, kafka_fast_retention, old_tables):
    k = kafka_fast_retention
    topic = topic_name()
    k.create_topic(topic, OLD_PARTITIONS, config={"retention.ms": DAY_MS})
    p = replay(thaw, old_tables, "ns.old", k, topic, "--force", "--json")
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert "warning" in err.lower() and "retention.ms" in err, err
    assert json.loads(p.stdout)["records"] == len(old_tables["old"])
    # What --force warned about happens: the broker deletes them.
    deadline = time.monotonic() + 20
    while not all(lo == hi == OLD_PER_PARTITION for lo, hi in k.offsets(topic, "read_uncommitted").values()):
        assert time.monotonic() < deadline, k.offsets(topic, "read_uncommitted")
        time.sleep(0.5)


def test_log_append_time_topic_is_refused(thaw, kafka_fast_retention, old_tables):
    k = kafka_fast_retention
    topic = topic_name()
    k.create_topic(topic, OLD_PARTITIONS, config={"message.timestamp.type": "LogAppendTime", "retention.ms": -1})
    p = replay(thaw, old_tables, "ns.old", k, topic, "--quiet")
    err = p.stderr.decode()
    assert p.returncode != 0, "replayed into a LogAppendTime topic: every original timestamp would be replaced"
    assert "LogAppendTime" in err and "--timestamps now" in err, err
    assert_nothing_produced(k, topic)


def test_timestamps_now_into_log_append_time_topic(thaw, kafka_fast_retention, old_tables):
    k = kafka_fast_retention
    want = old_tables["old"]
    topic = topic_name()
    k.create_topic(topic, OLD_PARTITIONS, config={"message.timestamp.type": "LogAppendTime", "retention.ms": -1})
    t0 = int(time.time() * 1000)
    p = replay(thaw, old_tables, "ns.old", k, topic, "--timestamps", "now", "--json")
    t1 = int(time.time() * 1000)
    assert p.returncode == 0, p.stderr.decode()
    got = k.consume_all(topic)
    assert_same_records(got, want, timestamps=False)
    orig = {(w["partition"], w["offset"]): w["timestamp"] for w in want}
    for g in got:
        lk = link(g)
        src = (int(lk["thaw.source.partition"]), int(lk["thaw.source.offset"]))
        assert g["timestamp_type"] == "LogAppendTime"
        assert t0 - 1000 <= g["timestamp"] <= t1 + 1000, (src, g["timestamp"], t0, t1)
        assert lk["thaw.source.timestamp"] == str(orig[src]).encode(), src


def test_timestamp_zero_stays_zero(thaw, kafka_fast_retention, old_tables):
    k = kafka_fast_retention
    topic = topic_name()
    p = replay(thaw, old_tables, "ns.epoch", k, topic, "--create-topic", "--quiet")
    assert p.returncode == 0, p.stderr.decode()
    got = k.consume_all(topic)
    assert [(g["timestamp"], g["timestamp_type"]) for g in got] == \
        [(w["timestamp"], "CreateTime") for w in old_tables["epoch"]]
    assert_same_records(got, old_tables["epoch"])
