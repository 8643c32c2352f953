"""Replay you can trust with production history (issue 6), against a real
broker: transactions that end by time and bytes, not only by record count;
timestamps kept exactly (0 included) or replaced on request; the target
topic's configs checked before anything is produced; --verify as the proof
that a restore is whole.

Each test here failed before the change it covers."""

from __future__ import annotations

import json
import os
import time

import fixtures
from test_replay import topic_name

DAY_MS = 86_400_000


def make_table(tmp_path, name, records, appends=1):
    wh = str(tmp_path / "wh")
    os.makedirs(wh, exist_ok=True)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists(name.split(".")[0])
    t = fixtures.create(cat, wh, name, fixtures.canonical_schema(), spec=fixtures.CANONICAL_SPEC,
                        properties=fixtures.thaw_props("src"))
    for part in fixtures.chunks(records, appends):
        fixtures.append_rows(t, [fixtures.canonical_row(r) for r in part])
    return fixtures.catalog_uri(wh)


def run(thaw, uri, name, kafka, topic, *extra, timeout=300):
    return thaw("replay", "--catalog", uri, "--table", name, "--brokers", kafka.bootstrap, "--topic", topic,
                "--quiet", *extra, timeout=timeout)


def test_eos_transactions_commit_by_time_with_big_values_and_a_slow_rate(thaw, kafka, tmp_path):
    # 24 x 1 MiB at 1 MB/s: ~25 s, far past a 6 s transaction timeout. Before,
    # the one transaction of 50,000 records outlived it, the broker aborted
    # it and the job died with "fenced".
    now = int(time.time() * 1000)
    big = os.urandom(1 << 20)
    records = [fixtures.rec(p, o, now - 1000 + o, f"k{o}".encode(), big[o:] + big[:o]) for p in (0, 1)
               for o in range(12)]
    uri = make_table(tmp_path, "ns.big", records)
    topic = topic_name()
    p = run(thaw, uri, "ns.big", kafka, topic, "--create-topic", "--topic-config", "max.message.bytes=4000000",
            "--exactly-once", "--job", topic, "--rate", "1", "-X", "transaction.timeout.ms=6000", "--verify",
            "--json", timeout=240)
    assert p.returncode == 0, p.stderr.decode()
    summary = json.loads(p.stdout)
    assert summary["records"] == 24
    assert summary["verify"]["ok"] and summary["verify"]["records"] == 24, summary["verify"]
    got = kafka.consume_all(topic)
    assert len(got) == 24
    by = {(r["partition"], r["key"]): r for r in got}
    for r in records:
        g = by[(r["partition"], r["key"])]
        assert g["value"] == r["value"] and g["timestamp"] == r["timestamp"]


def test_eos_timeout_error_explains_itself(thaw, kafka, tmp_path):
    # Commits forced far apart (--checkpoint-interval 30) with a 3 s timeout:
    # the broker aborts the transaction; the message says why and that a
    # rerun is safe, and a rerun with sane settings completes exactly once.
    now = int(time.time() * 1000)
    records = [fixtures.rec(0, o, now, b"k", os.urandom(100_000)) for o in range(40)]
    uri = make_table(tmp_path, "ns.slow", records)
    topic = topic_name()
    p = run(thaw, uri, "ns.slow", kafka, topic, "--create-topic", "--exactly-once", "--job", topic, "--rate", "0.2",
            "--checkpoint-interval", "30s", "--checkpoint-bytes", "100000000", "-X", "transaction.timeout.ms=3000",
            timeout=240)
    err = p.stderr.decode()
    assert p.returncode == 1, err
    assert "transaction.timeout.ms (3000 ms)" in err, err
    assert "safe to rerun" in err, err
    p = run(thaw, uri, "ns.slow", kafka, topic, "--create-topic", "--exactly-once", "--job", topic, "--rate", "0.2",
            "--checkpoint-interval", "30s", "--checkpoint-bytes", "100000000", "-X", "transaction.timeout.ms=3000",
            "--checkpoint-every", "5", "--verify")
    assert p.returncode == 0, p.stderr.decode()
    assert "verify: ok: 40 records" in p.stdout.decode()
    assert len(kafka.consume_all(topic)) == 40


def test_timestamp_zero_stays_zero_and_timestamps_now(thaw, kafka, tmp_path):
    now = int(time.time() * 1000)
    records = [fixtures.rec(0, 0, 0, b"epoch", b"v0"), fixtures.rec(0, 1, 1, b"one", b"v1"),
               fixtures.rec(0, 2, now - 400 * DAY_MS, b"old", b"v2")]
    uri = make_table(tmp_path, "ns.epoch", records)
    topic = topic_name()
    p = run(thaw, uri, "ns.epoch", kafka, topic, "--create-topic")
    assert p.returncode == 0, p.stderr.decode()
    got = kafka.consume_all(topic)
    assert [g["timestamp"] for g in got] == [0, 1, now - 400 * DAY_MS]
    assert all(g["timestamp_type"] == "CreateTime" for g in got)

    # --timestamps now: broker-era times, the original in a header.
    topic2 = topic_name()
    t0 = int(time.time() * 1000)
    p = run(thaw, uri, "ns.epoch", kafka, topic2, "--create-topic", "--timestamps", "now")
    assert p.returncode == 0, p.stderr.decode()
    got = kafka.consume_all(topic2)
    assert all(g["timestamp"] >= t0 - 1000 for g in got)
    assert [dict(g["headers"])["thaw.source.timestamp"] for g in got] == [b"0", b"1",
                                                                          str(now - 400 * DAY_MS).encode()]


def old_records(n=30, days=200):
    base = int(time.time() * 1000) - days * DAY_MS
    return [fixtures.rec(p, o, base + o * 1000, f"k{o}".encode(), f"v{p}-{o}".encode()) for p in (0, 1)
            for o in range(n)]


def test_existing_topic_whose_retention_would_delete_history_is_refused(thaw, kafka, tmp_path):
    uri = make_table(tmp_path, "ns.old", old_records())
    topic = topic_name()
    kafka.create_topic(topic, 2, {"retention.ms": str(7 * DAY_MS)})
    p = run(thaw, uri, "ns.old", kafka, topic)
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert f"topic '{topic}' has retention.ms=604800000 (7d)" in err, err
    assert "retention.ms=-1" in err and "--force" in err, err
    assert kafka.consume_all(topic) == []  # nothing produced
    # --force: a warning, and the records go out.
    p = run(thaw, uri, "ns.old", kafka, topic, "--force", "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert "warning (--force)" in p.stderr.decode()
    assert json.loads(p.stdout)["warnings"]
    assert len(kafka.consume_all(topic)) == 60


def test_log_append_time_topic_needs_timestamps_now(thaw, kafka, tmp_path):
    uri = make_table(tmp_path, "ns.lat", old_records(5, days=2))
    topic = topic_name()
    kafka.create_topic(topic, 2, {"message.timestamp.type": "LogAppendTime"})
    p = run(thaw, uri, "ns.lat", kafka, topic)
    assert p.returncode == 2 and "LogAppendTime" in p.stderr.decode(), p.stderr.decode()
    p = run(thaw, uri, "ns.lat", kafka, topic, "--timestamps", "now")
    assert p.returncode == 0, p.stderr.decode()
    got = kafka.consume_all(topic)
    assert len(got) == 10 and all(g["timestamp_type"] == "LogAppendTime" for g in got)
    assert all("thaw.source.timestamp" in dict(g["headers"]) for g in got)


def test_compacted_topic_and_null_keys(thaw, kafka, tmp_path):
    now = int(time.time() * 1000)
    uri = make_table(tmp_path, "ns.nk", [fixtures.rec(0, 0, now, b"k", b"v"), fixtures.rec(0, 1, now, None, b"v")])
    topic = topic_name()
    kafka.create_topic(topic, 1, {"cleanup.policy": "compact"})
    p = run(thaw, uri, "ns.nk", kafka, topic, "--exactly-once")
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert "source partition 0 offset 1 has a null key" in err and "cleanup.policy=compact" in err, err
    assert kafka.consume_all(topic) == []  # the transaction never committed


def test_create_topic_keeps_everything_and_topic_config(thaw, kafka, tmp_path):
    uri = make_table(tmp_path, "ns.keep", old_records(5))
    topic = topic_name()
    p = run(thaw, uri, "ns.keep", kafka, topic, "--create-topic", "--topic-config", "compression.type=zstd")
    assert p.returncode == 0, p.stderr.decode()
    configs = kafka.describe_topic_configs(topic) if hasattr(kafka, "describe_topic_configs") else None
    if configs is None:
        import confluent_kafka.admin as ka
        res = ka.ConfigResource(ka.ResourceType.TOPIC, topic)
        configs = {k: v.value for k, v in kafka.admin().describe_configs([res])[res].result(timeout=30).items()}
    assert configs["retention.ms"] == "-1"
    assert configs["retention.bytes"] == "-1"
    assert configs["compression.type"] == "zstd"
    # --topic-config without --create-topic is a usage error.
    p = run(thaw, uri, "ns.keep", kafka, topic, "--topic-config", "retention.ms=1")
    assert p.returncode == 2 and "--create-topic" in p.stderr.decode()


def test_checkpoint_topic_is_compacted(thaw, kafka, tmp_path):
    uri = make_table(tmp_path, "ns.cp", old_records(3, days=1))
    topic = topic_name()
    cp_topic = topic_name("cp")
    p = run(thaw, uri, "ns.cp", kafka, topic, "--create-topic", "--job", "j", "--checkpoint-topic", cp_topic)
    assert p.returncode == 0, p.stderr.decode()
    import confluent_kafka.admin as ka
    res = ka.ConfigResource(ka.ResourceType.TOPIC, cp_topic)
    configs = {k: v.value for k, v in kafka.admin().describe_configs([res])[res].result(timeout=30).items()}
    assert configs["cleanup.policy"] == "compact"
    assert configs["min.insync.replicas"] == "1"  # one broker: replication factor 1


def test_verify_finds_missing_and_duplicated_records(thaw, kafka, tmp_path):
    recs = old_records(10, days=1)
    uri = make_table(tmp_path, "ns.ver", recs)
    topic = topic_name()
    p = run(thaw, uri, "ns.ver", kafka, topic, "--create-topic", "--job", topic, "--exactly-once", "--verify")
    assert p.returncode == 0, p.stderr.decode()
    assert "verify: ok: 20 records in 2 partitions" in p.stdout.decode()
    # The same command on the finished job only verifies.
    p = run(thaw, uri, "ns.ver", kafka, topic, "--create-topic", "--job", topic, "--exactly-once", "--verify", "--json")
    assert p.returncode == 0, p.stderr.decode()
    s = json.loads(p.stdout)
    assert s["already_complete"] and s["verify"]["ok"] and s["verify"]["expected"] == 20
    # A second, unlinked-job replay of partition 1 offsets 3..4 into the same topic: duplicates.
    p = run(thaw, uri, "ns.ver", kafka, topic, "--partitions", "1", "--from-offset", "3", "--to-offset", "5")
    assert p.returncode == 0, p.stderr.decode()
    p = run(thaw, uri, "ns.ver", kafka, topic, "--create-topic", "--job", topic, "--exactly-once", "--verify", "--json")
    assert p.returncode == 1
    s = json.loads(p.stdout)
    assert s["verify"]["duplicates"] == 2 and not s["verify"]["ok"]
    assert "source partition 1: offset 3 arrived more than once" in p.stderr.decode()
    # Without the table: the checkpoint's count, order and duplicates.
    p = thaw("replay", "--brokers", kafka.bootstrap, "--job", topic, "--verify", "--json")
    assert p.returncode == 1
    assert json.loads(p.stdout)["duplicates"] == 2
    # Missing: the first three records of partition 0 deleted from the topic.
    import confluent_kafka
    tp = confluent_kafka.TopicPartition(topic, 0, 3)
    kafka.admin().delete_records([tp])[tp].result(timeout=30)
    p = run(thaw, uri, "ns.ver", kafka, topic, "--create-topic", "--job", topic, "--exactly-once", "--verify", "--json")
    assert p.returncode == 1
    s = json.loads(p.stdout)
    assert s["verify"]["missing"] == 3 and s["verify"]["duplicates"] == 2, s["verify"]
