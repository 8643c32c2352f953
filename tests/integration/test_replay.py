"""`thaw replay` against a real Apache Kafka broker (KRaft, from Maven Central
jars), read back with confluent-kafka (librdkafka), kafka-python-free.

The reference for what must arrive is `thaw inspect --records`, which
test_inspect.py checks record-for-record against pyiceberg and Iceberg Java:
per source partition, the target holds exactly those records, in offset
order, byte-identical (key, value, headers with order/duplicates/nulls,
timestamp as CreateTime), followed by the link headers.

The tests that take `table_env` also run with the tables behind Iceberg's REST
catalog in an S3-compatible store ("rest-s3", lakehouse.py)."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import time
import uuid

import pyarrow as pa
import pytest

from fixtures import json_bytes
from test_inspect import CASES, src

LINK = ("thaw.source.table", "thaw.source.topic", "thaw.source.partition", "thaw.source.offset",
        "thaw.source.snapshot")


def inspect_records(thaw, warehouse, name, *extra):
    _, _, args = CASES[name]
    p = thaw.ok("inspect", *src(warehouse, name), *args, "--records", "--format", "json", *extra)
    out = []
    for line in p.stdout.decode().splitlines():
        r = json.loads(line)
        out.append({"partition": r["partition"], "offset": r["offset"], "timestamp": r["timestamp"],
                    "key": json_bytes(r, "key"), "value": json_bytes(r, "value"),
                    "headers": [(h["key"], json_bytes(h, "value", "encoding")) for h in r["headers"]]})
    return out


def topic_name(prefix="t"):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def replay(thaw, warehouse, name, kafka, topic, *extra):
    _, _, args = CASES.get(name, ("", {}, []))
    return thaw("replay", *src(warehouse, name), *args, "--brokers", kafka.bootstrap, "--topic", topic, "--quiet",
                *extra, timeout=300)


def split_link(headers):
    own = [h for h in headers if not h[0].startswith("thaw.source.")]
    link = dict(h for h in headers if h[0].startswith("thaw.source."))
    return own, link


def assert_replayed(got, want, table, snapshot=None, same_partition=True):
    assert len(got) == len(want), f"{len(got)} records in the topic, want {len(want)}"
    by_src = {}
    for g in got:
        own, link = split_link(g["headers"])
        assert link["thaw.source.table"] == table.encode()
        by_src[(int(link["thaw.source.partition"]), int(link["thaw.source.offset"]))] = (g, own, link)
    for w in want:
        g, own, link = by_src[(w["partition"], w["offset"])]
        if same_partition:
            assert g["partition"] == w["partition"]
        assert g["key"] == w["key"], (w["partition"], w["offset"])
        assert g["value"] == w["value"], (w["partition"], w["offset"])
        assert own == w["headers"], (w["partition"], w["offset"])
        assert g["timestamp_type"] == "CreateTime"
        if w["timestamp"] >= 0:
            assert g["timestamp"] == w["timestamp"]
        if snapshot is not None:
            assert link["thaw.source.snapshot"] == str(snapshot).encode()
    # Per target partition, source offsets ascend (order kept).
    last = {}
    for g in got:
        _, link = split_link(g["headers"])
        so = int(link["thaw.source.offset"])
        assert so > last.get(g["partition"], -1)
        last[g["partition"]] = so


REPLAY_LAYOUTS = ["ns.canonical_v2", "ns.canonical_snappy_unpartitioned", "ns.canonical_cow_delete",
                  "ns.canonical_evolved", "ns.redpanda", "ns.redpanda_v1", "ns.bufstream", "ns.aiven", "ns.automq",
                  "ns.connect_flat", "ns.connect_nested", "ns.plain"]
# Behind the REST catalog in S3 (lakehouse.py), a representative few: every layout is read there by
# test_inspect already; these add the replay path (1 MiB values, copy-on-write deletes, a foreign
# layout, a Kafka Connect table).
REST_REPLAY_LAYOUTS = ["ns.canonical_v2", "ns.canonical_cow_delete", "ns.redpanda", "ns.connect_flat"]


@pytest.mark.parametrize("table_env,name", [("local", n) for n in REPLAY_LAYOUTS] +
                         [("rest-s3", n) for n in REST_REPLAY_LAYOUTS], indirect=["table_env"])
def test_replay_each_layout_byte_for_byte(thaw, table_env, kafka, name):
    topic = topic_name()
    p = replay(thaw, table_env, name, kafka, topic, "--create-topic", "--json")
    assert p.returncode == 0, p.stderr.decode()
    summary = json.loads(p.stdout)
    want = inspect_records(thaw, table_env, name)
    assert summary["records"] == len(want)
    got = kafka.consume_all(topic)
    assert_replayed(got, want, name, snapshot=table_env.table(name).current_snapshot().snapshot_id)


def test_ranges_by_offset_partition_and_time(thaw, table_env, kafka):
    name = "ns.canonical_v2"
    all_recs = inspect_records(thaw, table_env, name)
    p1 = [r for r in all_recs if r["partition"] == 1]
    lo, hi = p1[2]["offset"], p1[-3]["offset"]
    topic = topic_name()
    kafka.create_topic(topic, 3)
    p = replay(thaw, table_env, name, kafka, topic, "--partitions", "1", "--from-offset", str(lo), "--to-offset", str(hi))
    assert p.returncode == 0, p.stderr.decode()
    assert_replayed(kafka.consume_all(topic), [r for r in p1 if lo <= r["offset"] < hi], name)
    ts = sorted(r["timestamp"] for r in all_recs)
    t0 = ts[len(ts) // 3]
    topic = topic_name()
    p = replay(thaw, table_env, name, kafka, topic, "--create-topic", "--from-time", str(t0))
    assert p.returncode == 0, p.stderr.decode()
    assert_replayed(kafka.consume_all(topic), [r for r in all_recs if r["timestamp"] >= t0], name)


def test_exclusions_and_link_headers_off(thaw, warehouse, kafka, tmp_path):
    name = "ns.canonical_v2"
    all_recs = inspect_records(thaw, warehouse, name)
    bad = [all_recs[3], all_recs[7]]
    f = tmp_path / "poison.txt"
    f.write_text("# known poison pills\n" + "".join(f"{r['partition']}:{r['offset']}\n" for r in bad))
    topic = topic_name()
    p = replay(thaw, warehouse, name, kafka, topic, "--create-topic", "--exclude-offsets", str(f),
               "--link-headers=false")
    assert p.returncode == 0, p.stderr.decode()
    got = kafka.consume_all(topic)
    want = [r for r in all_recs if r not in bad]
    assert len(got) == len(want)
    assert all(not h[0].startswith("thaw.source.") for g in got for h in g["headers"])
    for p_ in {r["partition"] for r in want}:
        assert [(g["key"], g["value"], g["headers"]) for g in got if g["partition"] == p_] == \
               [(w["key"], w["value"], w["headers"]) for w in want if w["partition"] == p_]


def test_deletes_in_iceberg_are_not_replayed(thaw, kafka, tmp_path_factory):
    from test_java_deletes import RUN
    wh = tmp_path_factory.mktemp("java_replay")
    subprocess.run([str(RUN), "write", str(wh)], check=True, capture_output=True, timeout=300)
    for table in ("ns.pos_deletes", "ns.eq_deletes", "ns.dv_deletes"):
        oracle = subprocess.run([str(RUN), "oracle", str(wh / "java_catalog.db"), str(wh), table], check=True,
                                capture_output=True, timeout=300)
        want = [json.loads(l) for l in oracle.stdout.decode().splitlines()]
        topic = topic_name()
        p = thaw("replay", "--catalog", f"sqlite:///{wh}/java_catalog.db", "--table", table, "--brokers",
                 kafka.bootstrap, "--topic", topic, "--create-topic", "--quiet")
        assert p.returncode == 0, p.stderr.decode()
        got = kafka.consume_all(topic)
        assert len(got) == len(want), table
        b = lambda v: None if v is None else base64.b64decode(v)
        for g, w in zip(sorted(got, key=lambda g: (g["partition"], g["offset"])), want):
            assert (g["partition"], g["key"], g["value"]) == (w["partition"], b(w["key"]), b(w["value"]))
            assert split_link(g["headers"])[1]["thaw.source.offset"] == str(w["offset"]).encode()


def test_partitioner_key_matches_java_client(thaw, warehouse, kafka):
    """`--partitioner key` puts each key where the Java client's default
    partitioner would: librdkafka's murmur2_random partitioner is the same
    hash, so produce the same keys with it and compare."""
    from kafka_broker import _ck
    name = "ns.canonical_v2"
    topic, ref = topic_name(), topic_name("ref")
    kafka.create_topic(topic, 7)
    kafka.create_topic(ref, 7)
    p = replay(thaw, warehouse, name, kafka, topic, "--partitioner", "key")
    assert p.returncode == 0, p.stderr.decode()
    got = kafka.consume_all(topic)
    prod = _ck().Producer({"bootstrap.servers": kafka.bootstrap, "partitioner": "murmur2_random"})
    keys = sorted({g["key"] for g in got if g["key"] is not None})
    for k in keys:
        prod.produce(ref, key=k, value=b"x")
    prod.flush(30)
    want = {r["key"]: r["partition"] for r in kafka.consume_all(ref)}
    assert keys
    for g in got:
        if g["key"] is not None:
            assert g["partition"] == want[g["key"]], g["key"]


@pytest.mark.parametrize("compression", ["lz4", "zstd"])
def test_compressed_and_wider_target_topics(thaw, warehouse, kafka, compression):
    name = "ns.canonical_v2"
    topic = topic_name()
    kafka.create_topic(topic, 5, {"compression.type": compression})
    p = replay(thaw, warehouse, name, kafka, topic, "-X", f"compression.type={compression}")
    assert p.returncode == 0, p.stderr.decode()
    assert_replayed(kafka.consume_all(topic), inspect_records(thaw, warehouse, name), name)


def test_fewer_target_partitions_is_refused_with_the_fix(thaw, warehouse, kafka):
    topic = topic_name()
    kafka.create_topic(topic, 2)
    p = replay(thaw, warehouse, "ns.canonical_v2", kafka, topic)
    err = p.stderr.decode()
    assert p.returncode != 0
    assert f"topic '{topic}' has 2 partitions but the source has partition 2" in err
    assert "--partitioner key" in err and "--create-topic" in err
    assert kafka.consume_all(topic) == []


def test_missing_topic_suggests_create_topic(thaw, warehouse, kafka):
    p = replay(thaw, warehouse, "ns.canonical_v2", kafka, "no-such-topic")
    assert p.returncode != 0
    assert "topic 'no-such-topic' does not exist" in p.stderr.decode()
    assert "--create-topic" in p.stderr.decode()


def test_unreachable_brokers(thaw, warehouse):
    p = thaw("replay", *src(warehouse, "ns.canonical_v2"), "--brokers", "127.0.0.1:1", "--topic", "x", "--quiet",
             "-X", "socket.connection.setup.timeout.ms=1000", timeout=120)
    assert p.returncode != 0
    assert "cannot reach Kafka brokers '127.0.0.1:1'" in p.stderr.decode()


def test_record_larger_than_broker_accepts(thaw, warehouse, kafka):
    topic = topic_name()
    kafka.create_topic(topic, 3, {"max.message.bytes": 100000})
    p = replay(thaw, warehouse, "ns.canonical_v2", kafka, topic)
    err = p.stderr.decode()
    assert p.returncode != 0
    assert "is larger than the broker accepts" in err and "max.message.bytes" in err
    assert "source partition" in err and "offset" in err


def test_unknown_table_and_snapshot(thaw, warehouse, kafka):
    p = thaw("replay", "--catalog", warehouse.uri, "--table", "ns.nope", "--brokers", kafka.bootstrap, "--topic", "x")
    assert p.returncode != 0 and "table 'ns.nope' not found" in p.stderr.decode()
    p = replay(thaw, warehouse, "ns.canonical_v2", kafka, "x", "--snapshot", "42")
    assert p.returncode != 0 and "snapshot 42 does not exist" in p.stderr.decode()


def test_dry_run_prints_the_plan(thaw, warehouse, kafka):
    p = replay(thaw, warehouse, "ns.canonical_v2", kafka, "never-created", "--dry-run", "--partitions", "0")
    assert p.returncode == 0, p.stderr.decode()
    out = p.stdout.decode()
    assert "partitions  0" in out and "data files planned" in out and "never-created" in out


# ---------------------------------------------------------------------------
# resumable jobs, kill -9 at several points


def slow_replay(thaw, warehouse, name, kafka, topic, job, *extra):
    _, _, args = CASES[name]
    return subprocess.Popen([str(thaw.binary), "replay", *src(warehouse, name), *args, "--brokers", kafka.bootstrap,
                             "--topic", topic, "--job", job, "--quiet", "--checkpoint-every", "7", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize("exactly_once", [False, True], ids=["at-least-once", "exactly-once"])
@pytest.mark.parametrize("kill_after", [0.6, 1.5, 3.0])
@pytest.mark.parametrize("attempt", [1, 2])
def test_kill_9_and_resume(thaw, warehouse, kafka, exactly_once, kill_after, attempt):
    name = "ns.canonical_v2"
    want = inspect_records(thaw, warehouse, name)
    topic, job = topic_name(), f"job-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, 3)
    mode = ["--exactly-once"] if exactly_once else []
    # ~1.2 MB at 0.5 MB/s: a few seconds, so the kill lands mid-run.
    proc = slow_replay(thaw, warehouse, name, kafka, topic, job, "--rate", "0.5", *mode)
    time.sleep(kill_after)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    p = subprocess.run([str(thaw.binary), "replay", *src(warehouse, name), "--brokers", kafka.bootstrap, "--topic",
                        topic, "--job", job, "--quiet", "--checkpoint-every", "7", *mode],
                       capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode()
    got = kafka.consume_all(topic, "read_committed")
    seen = [(int(split_link(g["headers"])[1]["thaw.source.partition"]),
             int(split_link(g["headers"])[1]["thaw.source.offset"])) for g in got]
    wanted = [(w["partition"], w["offset"]) for w in want]
    assert set(seen) == set(wanted), "records lost"
    if exactly_once:
        assert len(seen) == len(wanted), f"{len(seen) - len(wanted)} duplicates under --exactly-once"
        assert_replayed(got, want, name)
    # The job is complete: a rerun does nothing, --status says so.
    again = subprocess.run([str(thaw.binary), "replay", *src(warehouse, name), "--brokers", kafka.bootstrap,
                            "--topic", topic, "--job", job, "--quiet", *mode], capture_output=True, timeout=120)
    assert again.returncode == 0 and b"already complete" in again.stdout
    st = thaw.ok("replay", "--brokers", kafka.bootstrap, "--job", job, "--status", "--json")
    state = json.loads(st.stdout)
    assert state["complete"] is True and state["topic"] == topic
    assert state["next_offsets"] == {str(p_): max(o for q, o in wanted if q == p_) + 1 for p_ in {q for q, _ in wanted}}


def test_job_with_other_settings_is_refused(thaw, warehouse, kafka):
    topic, job = topic_name(), f"job-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, 3)
    p = replay(thaw, warehouse, "ns.canonical_v2", kafka, topic, "--job", job, "--partitions", "0")
    assert p.returncode == 0, p.stderr.decode()
    p = replay(thaw, warehouse, "ns.canonical_v2", kafka, topic, "--job", job, "--partitions", "1")
    assert p.returncode != 0 and f"job '{job}' was started as" in p.stderr.decode()


# ---------------------------------------------------------------------------
# --follow: appends made by pyiceberg while the replay runs


def test_follow_picks_up_appends(thaw, kafka, tmp_path):
    import fixtures
    from pyiceberg.expressions import EqualTo
    wh = str(tmp_path / "wh")
    table = fixtures.build_small_canonical(wh, "ns.live")
    uri = fixtures.catalog_uri(wh)
    topic, job = topic_name(), f"follow-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, 2)
    proc = subprocess.Popen([str(thaw.binary), "replay", "--catalog", uri, "--table", "ns.live", "--brokers",
                             kafka.bootstrap, "--topic", topic, "--job", job, "--follow", "--poll-interval", "300ms",
                             "--quiet", "--exactly-once"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        def wait_for(n, timeout=60):
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                try:
                    got = kafka.consume_all(topic)
                except Exception:  # leadership settling right after topic creation
                    time.sleep(0.3)
                    continue
                if len(got) >= n:
                    return got
                time.sleep(0.3)
            return kafka.consume_all(topic)

        base = len(wait_for(24))
        assert base == 24
        # Two appends while it runs: new offsets in both partitions.
        for batch in range(2):
            rows = [fixtures.canonical_row(fixtures.rec(p, 5000 + 10 * batch + i, 1_700_000_000_000 + i,
                                                        f"k{i}".encode(), f"new-{batch}-{p}-{i}".encode(),
                                                        [("h", b"1"), ("h", None)]))
                    for p in (0, 1) for i in range(5)]
            fixtures.append_rows(table, rows)
            table = table.refresh()
        got = wait_for(44)
        if len(got) != 44:
            proc.send_signal(signal.SIGTERM)
            o, e = proc.communicate(timeout=60)
            raise AssertionError(f"got {len(got)} records; replay stderr: {e.decode()[-2000:]}")
        new = sorted((g["partition"], g["value"]) for g in got if g["value"] and g["value"].startswith(b"new-"))
        assert len(new) == 20 and len(set(new)) == 20
        new_p0 = [g for g in got if g["partition"] == 0 and g["value"] and g["value"].startswith(b"new-")]
        assert [split_link(g["headers"])[1]["thaw.source.offset"] for g in new_p0] == \
               [str(o).encode() for o in list(range(5000, 5005)) + list(range(5010, 5015))]
        assert all(split_link(g["headers"])[0] == [("h", b"1"), ("h", None)] for g in new_p0)
        # A copy-on-write delete is an overwrite snapshot: what it rewrote below the position is not sent again.
        table.delete(delete_filter=EqualTo("kafka_offset", 5000))
        time.sleep(2)
        assert len(kafka.consume_all(topic)) == 44
        # An upsert-style overwrite (issue 20: its new offsets were skipped): partition 1's rows rewritten, with
        # two new offsets past the position; only those two are replayed.
        table = table.refresh()
        old_p1 = [r for r in table.scan(row_filter=EqualTo("kafka_partition", 1)).to_arrow().to_pylist()]
        upserted = [dict(r, value=b"rewritten") for r in old_p1] + [
            fixtures.canonical_row(fixtures.rec(1, 6000 + i, 1_700_000_000_000 + i, b"k", f"upsert-{i}".encode()))
            for i in range(2)]
        # One `overwrite` snapshot, as MERGE and upsert sinks commit (pyiceberg's own overwrite() commits a
        # delete and then an append): partition 1's files replaced by one holding them rewritten plus the new rows.
        from pyiceberg.io.pyarrow import _dataframe_to_data_files
        old_files = [t.file for t in table.scan(row_filter=EqualTo("kafka_partition", 1)).plan_files()]
        new_files = list(_dataframe_to_data_files(table.metadata, pa.Table.from_pylist(
            upserted, schema=table.schema().as_arrow()), table.io))
        with table.transaction() as tx:
            with tx.update_snapshot().overwrite() as ow:
                for f in old_files:
                    ow.delete_data_file(f)
                for f in new_files:
                    ow.append_data_file(f)
        assert table.refresh().current_snapshot().summary.operation.value == "overwrite"
        got = wait_for(46)
        assert len(got) == 46, len(got)
        assert sorted(g["value"] for g in got if (g["value"] or b"").startswith(b"upsert-")) == [b"upsert-0",
                                                                                                 b"upsert-1"]
        assert not any(g["value"] == b"rewritten" for g in got)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()
    assert b"(overwrite): its records past the job's position are replayed" in err, err.decode()[-3000:]


# ---------------------------------------------------------------------------
# --where


def test_where_on_kafka_fields_and_table_columns(thaw, warehouse, kafka):
    name = "ns.canonical_v2"
    all_recs = inspect_records(thaw, warehouse, name)
    p1 = [r for r in all_recs if r["partition"] == 1]
    lo = p1[3]["offset"]
    topic = topic_name()
    kafka.create_topic(topic, 3)
    expr = f"partition = 1 and offset >= {lo} and (key is null or not key starts with 'k-1')"
    p = replay(thaw, warehouse, name, kafka, topic, "--where", expr, "--json")
    assert p.returncode == 0, p.stderr.decode()
    want = [r for r in p1 if r["offset"] >= lo and (r["key"] is None or not r["key"].startswith(b"k-1"))]
    assert json.loads(p.stdout)["records"] == len(want)
    assert_replayed(kafka.consume_all(topic), want, name)
    # A table column of a Kafka Connect table (the record's own columns).
    name = "ns.connect_flat"
    all_recs = inspect_records(thaw, warehouse, name)
    want = [r for r in all_recs if json.loads(r["value"])["id"] >= 1010]
    assert 0 < len(want) < len(all_recs)
    topic = topic_name()
    p = replay(thaw, warehouse, name, kafka, topic, "--create-topic", "--where", "id >= 1010")
    assert p.returncode == 0, p.stderr.decode()
    got = kafka.consume_all(topic)
    assert sorted(g["value"] for g in got) == sorted(w["value"] for w in want)


def test_where_errors_point_at_the_problem(thaw, warehouse, kafka):
    p = replay(thaw, warehouse, "ns.canonical_v2", kafka, "x", "--where", "offset > )")
    assert p.returncode != 0
    assert "--where: unexpected ')' at column 10" in p.stderr.decode()
    p = replay(thaw, warehouse, "ns.canonical_v2", kafka, "x", "--where", "colour = 'red'")
    assert p.returncode != 0
    err = p.stderr.decode()
    assert "unknown column 'colour'" in err and "kafka_offset" in err


def test_config_file_with_flag_overrides(thaw, warehouse, kafka, tmp_path):
    cfg = tmp_path / "replay.toml"
    cfg.write_text(f'''# replay settings
catalog = "{warehouse.uri}"
table = "ns.canonical_v2"
brokers = "{kafka.bootstrap}"
topic = "from-config"
partitions = "1"
dry-run = true
X = ["linger.ms=5", "acks=all"]
''')
    p = thaw("replay", "--config", str(cfg))
    assert p.returncode == 0, p.stderr.decode()
    out = p.stdout.decode()
    assert "topic from-config" in out and "partitions  1" in out
    p = thaw("replay", "--config", str(cfg), "--topic", "from-flag", "--partitions", "2")
    assert p.returncode == 0, p.stderr.decode()
    assert "topic from-flag" in p.stdout.decode() and "partitions  2" in p.stdout.decode()
    bad = tmp_path / "bad.toml"
    bad.write_text("brokers localhost\n")
    p = thaw("replay", "--config", str(bad))
    assert p.returncode == 2 and f"--config {bad} line 1 column" in p.stderr.decode(), p.stderr.decode()
