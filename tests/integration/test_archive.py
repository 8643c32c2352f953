"""`thaw archive` against a real Apache Kafka broker (KRaft) into a local
SQLite-catalog warehouse. The table is read back with `thaw inspect
--records` and with pyiceberg; both must equal what a read_committed consumer
of the topic sees, offset for offset (keys, null keys and values, headers with
duplicate keys and null values, timestamps).

Heavier scenarios (DuckDB / Iceberg Java readers, kill -9 trials, round trips
through replay and serve) are in the archive scenario tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import uuid

import pytest

import fixtures


def topic_name(prefix="arch"):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def produce(kafka, topic, n, start=0, partitions=3):
    """n records per partition: keys (some null, some empty), values (some
    null, some empty), headers with duplicate keys and null values;
    timestamps given. Returns nothing; read back with consume_all."""
    p = kafka.producer()
    for i in range(start, start + n):
        for part in range(partitions):
            key = None if i % 7 == 3 else (b"" if i % 11 == 5 else f"k-{part}-{i}".encode())
            value = None if i % 13 == 4 else (b"" if i % 17 == 6 else (f"v-{part}-{i}-" * (i % 5 + 1)).encode())
            headers = []
            if i % 3 == 0:
                headers = [("h", b"1"), ("h", b"2"), ("nul", None), ("", b"")]
            elif i % 3 == 1:
                headers = [("trace", os.urandom(4))]
            p.produce(topic, key=key, value=value, partition=part, headers=headers,
                      timestamp=1_767_225_600_000 + i * 1000 + part)
    assert p.flush(30) == 0


def archive(thaw, kafka, uri, table, topic, *extra, timeout=180):
    return thaw("archive", "--brokers", kafka.bootstrap, "--topic", topic, "--catalog", uri, "--table", table,
                *extra, timeout=timeout)


def start_follow(thaw, kafka, uri, table, topic, wh, *extra):
    """`thaw archive --create --follow` in the background (stdout and stderr piped)."""
    return subprocess.Popen([str(thaw.binary), "archive", "--brokers", kafka.bootstrap, "--topic", topic, "--catalog",
                             uri, "--table", table, "--create", "--warehouse", wh, "--follow", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def inspect_records(thaw, uri, table):
    p = thaw.ok("inspect", "--catalog", uri, "--table", table, "--records", "--format", "json")
    out = []
    b = fixtures.json_bytes
    for line in p.stdout.decode().splitlines():
        r = json.loads(line)
        out.append({"partition": r["partition"], "offset": r["offset"], "timestamp": r["timestamp"],
                    "key": b(r, "key"), "value": b(r, "value"),
                    "headers": [(h["key"], b(h, "value", "encoding")) for h in r["headers"]]})
    out.sort(key=lambda r: (r["partition"], r["offset"]))
    return out


def topic_view(records):
    return [{"partition": r["partition"], "offset": r["offset"], "timestamp": r["timestamp"], "key": r["key"],
             "value": r["value"], "headers": [(k, v) for k, v in r["headers"]]} for r in records]


def pyiceberg_records(warehouse_dir, table):
    t = fixtures.open_catalog(warehouse_dir).load_table(table)
    rows = t.scan().to_arrow().to_pylist()
    out = []
    for r in rows:
        assert r["kafka_timestamp_type"] == 0
        out.append({"partition": r["kafka_partition"], "offset": r["kafka_offset"],
                    "timestamp": int(r["kafka_timestamp"].timestamp() * 1000 + 0.5) if r["kafka_timestamp"] else None,
                    "key": r["key"], "value": r["value"],
                    "headers": [(h["key"], h["value"]) for h in (r["headers"] or [])]})
    out.sort(key=lambda r: (r["partition"], r["offset"]))
    return out


def assert_table_equals_topic(thaw, kafka, wh, uri, table, topic):
    want = topic_view(kafka.consume_all(topic))
    got = inspect_records(thaw, uri, table)
    assert [(r["partition"], r["offset"]) for r in got] == [(r["partition"], r["offset"]) for r in want]
    assert got == want
    assert pyiceberg_records(wh, table) == want
    return want


def assert_every_engine_reads(thaw, uri, wh, table, want):
    """Thaw, pyiceberg and DuckDB each read exactly `want` (sorted by partition and offset) from `table`;
    returns the table as pyiceberg loads it."""
    import iceberg_readers
    assert inspect_records(thaw, uri, table) == want
    assert pyiceberg_records(wh, table) == want
    t = fixtures.open_catalog(wh).load_table(table)
    duck = iceberg_readers.read_duckdb(t.metadata_location)
    assert sorted((r["partition"], r["offset"]) for r in duck) == [(r["partition"], r["offset"]) for r in want]
    return t


@pytest.fixture
def wh(tmp_path):
    """A warehouse directory with an (empty) pyiceberg SQLite catalog database."""
    d = str(tmp_path / "wh")
    os.makedirs(d)
    fixtures.open_catalog(d)  # pyiceberg creates the catalog's tables
    return d


def test_archive_creates_table_equal_to_topic_then_resumes(thaw, kafka, wh):
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 40)
    uri = fixtures.catalog_uri(wh)
    p = archive(thaw, kafka, uri, "ns.arch", topic, "--create", "--warehouse", wh, "--json")
    assert p.returncode == 0, p.stderr.decode()
    s = json.loads(p.stdout)
    assert s["records"] == 120 and s["commits"] == 1 and s["data_files"] == 3 and not s["interrupted"]
    assert s["next_offsets"] == {topic: {"0": 40, "1": 40, "2": 40}}
    want = assert_table_equals_topic(thaw, kafka, wh, uri, "ns.arch", topic)
    assert len(want) == 120

    t = fixtures.open_catalog(wh).load_table("ns.arch")
    assert t.properties["thaw.layout"] == "thaw/1"
    assert t.properties["thaw.source.topic"] == topic
    assert t.location().rstrip("/").endswith("ns.db/arch")
    assert [f.name for f in t.spec().fields] == ["kafka_partition"]
    snap = t.current_snapshot()
    assert snap.summary["total-records"] == "120"
    assert json.loads(snap.summary["thaw.archive.next-offsets"]) == {topic: {"0": 40, "1": 40, "2": 40}}

    # Nothing new: no commit.
    p = archive(thaw, kafka, uri, "ns.arch", topic, "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["commits"] == 0
    assert fixtures.open_catalog(wh).load_table("ns.arch").current_snapshot().snapshot_id == snap.snapshot_id

    # More records: only those are archived, none twice.
    produce(kafka, topic, 25, start=40)
    p = archive(thaw, kafka, uri, "ns.arch", topic, "--json")
    assert p.returncode == 0, p.stderr.decode()
    s = json.loads(p.stdout)
    assert s["records"] == 75 and s["commits"] == 1
    assert s["next_offsets"] == {topic: {"0": 65, "1": 65, "2": 65}}
    want = assert_table_equals_topic(thaw, kafka, wh, uri, "ns.arch", topic)
    assert len(want) == 195
    t = fixtures.open_catalog(wh).load_table("ns.arch")
    assert t.current_snapshot().parent_snapshot_id == snap.snapshot_id
    assert t.current_snapshot().summary["total-records"] == "195"


def test_small_target_files_and_partitions_subset(thaw, kafka, wh):
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 30)
    uri = fixtures.catalog_uri(wh)
    p = archive(thaw, kafka, uri, "ns.sub", topic, "--create", "--warehouse", wh, "--partitions", "0,2", "--json")
    assert p.returncode == 0, p.stderr.decode()
    s = json.loads(p.stdout)
    assert s["records"] == 60
    assert s["next_offsets"] == {topic: {"0": 30, "2": 30}}
    got = inspect_records(thaw, uri, "ns.sub")
    want = [r for r in topic_view(kafka.consume_all(topic)) if r["partition"] in (0, 2)]
    assert got == want


def test_from_offset_latest_then_resume_keeps_records_produced_between_runs(thaw, kafka, wh):
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 10)
    uri = fixtures.catalog_uri(wh)
    p = archive(thaw, kafka, uri, "ns.latest", topic, "--create", "--warehouse", wh, "--from-offset", "latest",
                "--json")
    assert p.returncode == 0, p.stderr.decode()
    s = json.loads(p.stdout)
    # Nothing archived, but where archiving starts is committed.
    assert s["records"] == 0 and s["commits"] == 1
    assert s["next_offsets"] == {topic: {"0": 10, "1": 10, "2": 10}}
    produce(kafka, topic, 5, start=10)
    p = archive(thaw, kafka, uri, "ns.latest", topic, "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["records"] == 15
    got = inspect_records(thaw, uri, "ns.latest")
    assert got == [r for r in topic_view(kafka.consume_all(topic)) if r["offset"] >= 10]


def wait_for_line(stream, needle, timeout=60):
    """Reads `stream` (a pipe) in a thread until a line contains needle."""
    lines = []
    found = threading.Event()

    def pump():
        for raw in iter(stream.readline, b""):
            lines.append(raw.decode("utf-8", "replace"))
            if needle in lines[-1]:
                found.set()

    th = threading.Thread(target=pump, daemon=True)
    th.start()
    assert found.wait(timeout), f"no line with {needle!r}: {''.join(lines)[-3000:]}"
    return lines, th


def test_sigint_during_follow_commits_buffered_records_and_exits_0(thaw, kafka, wh):
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 20)
    uri = fixtures.catalog_uri(wh)
    proc = start_follow(thaw, kafka, uri, "ns.follow", topic, wh, "--commit-interval", "1h", "--json")
    try:
        lines, th = wait_for_line(proc.stderr, "archiving topic")
        produce(kafka, topic, 10, start=20)
        want = topic_view(kafka.consume_all(topic))
        time.sleep(4)  # read by the archiver; nothing committed (1 h interval)
        assert fixtures.open_catalog(wh).load_table("ns.follow").current_snapshot() is None
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGINT, "".join(lines)
    s = json.loads(out)
    assert s["interrupted"] is True and s["records"] == 90 and s["commits"] == 1
    assert inspect_records(thaw, uri, "ns.follow") == want


def test_follow_commits_at_each_interval(thaw, kafka, wh):
    topic = topic_name()
    kafka.create_topic(topic, 3)
    uri = fixtures.catalog_uri(wh)
    proc = start_follow(thaw, kafka, uri, "ns.live", topic, wh, "--commit-interval", "500ms", "--json")
    try:
        lines, th = wait_for_line(proc.stderr, "archiving topic")
        for round in range(3):
            produce(kafka, topic, 5, start=round * 5)
            want = topic_view(kafka.consume_all(topic))
            deadline = time.monotonic() + 30
            while True:
                t = fixtures.open_catalog(wh).load_table("ns.live")
                s = t.current_snapshot()
                if s and s.summary.get("total-records") == str(len(want)):
                    break
                assert time.monotonic() < deadline, f"round {round}: table at {s and s.summary}"
                time.sleep(0.2)
            assert pyiceberg_records(wh, "ns.live") == want
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, "".join(lines)
    assert json.loads(out)["commits"] >= 3


def errline(p):
    return p.stderr.decode().strip().splitlines()[-1]


def test_missing_topic_is_an_error_and_creates_nothing(thaw, kafka, wh):
    uri = fixtures.catalog_uri(wh)
    missing = topic_name("missing")
    p = archive(thaw, kafka, uri, "ns.none", missing, "--create", "--warehouse", wh, "--timeout", "10s")
    assert p.returncode == 1, p.stderr.decode()
    line = errline(p)
    assert line.startswith("thaw archive: error: ") and missing in line, line
    cat = fixtures.open_catalog(wh)
    assert [t for ns in cat.list_namespaces() for t in cat.list_tables(ns)] == []


def test_table_missing_without_create(thaw, kafka, wh):
    topic = topic_name()
    kafka.create_topic(topic, 1)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace("ns")
    p = archive(thaw, kafka, fixtures.catalog_uri(wh), "ns.absent", topic)
    assert p.returncode == 1, p.stderr.decode()
    line = errline(p)
    assert "ns.absent" in line and "--create" in line, line
    assert cat.list_tables("ns") == []


def test_create_makes_a_missing_sqlite_catalog_database(thaw, kafka, tmp_path):
    # As pyiceberg's SqlCatalog does: the first write creates the file and the
    # JDBC tables. A read of a database that does not exist says so.
    d = str(tmp_path / "fresh")
    os.makedirs(d)
    uri = fixtures.catalog_uri(d)
    missing = thaw("inspect", "--catalog", uri, "--table", "ns.t")
    assert missing.returncode != 0
    assert "does not exist" in missing.stderr.decode(), missing.stderr.decode()
    assert not os.path.exists(os.path.join(d, "catalog.db"))
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 5)
    p = archive(thaw, kafka, uri, "ns.fresh", topic, "--create", "--warehouse", d)
    assert p.returncode == 0, p.stderr.decode()
    assert_table_equals_topic(thaw, kafka, d, uri, "ns.fresh", topic)


def test_foreign_layout_table_is_refused(thaw, kafka, wh):
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 3)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace(fixtures.NS)
    fixtures.build_redpanda(cat, wh)
    name = f"{fixtures.NS}.redpanda"
    before = cat.load_table(name).metadata_location
    p = archive(thaw, kafka, fixtures.catalog_uri(wh), name, topic, "--create")
    assert p.returncode != 0, p.stderr.decode()
    line = errline(p)
    assert line.startswith("thaw archive: error: ") and "'redpanda' layout" in line, line
    assert fixtures.open_catalog(wh).load_table(name).metadata_location == before


def test_thaw_layout_table_written_by_another_tool_is_refused(thaw, kafka, tmp_path):
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 3)
    # Canonical columns and this very topic, but written by pyiceberg: no archive offsets.
    d = str(tmp_path / "other")
    t = fixtures.build_small_canonical(d, "ns.other", **{"thaw.source.topic": topic})
    uri = fixtures.catalog_uri(d)
    p = archive(thaw, kafka, uri, "ns.other", topic)
    assert p.returncode != 0, p.stderr.decode()
    line = errline(p)
    assert "written by another tool" in line and "thaw.archive.next-offsets" in line, line
    assert fixtures.open_catalog(d).load_table("ns.other").metadata_location == t.metadata_location
    # Another topic than the table's: said so.
    other = topic_name()
    kafka.create_topic(other, 1)
    p = archive(thaw, kafka, uri, "ns.other", other)
    assert p.returncode != 0 and f"archives topic '{topic}'" in errline(p), errline(p)


def test_unwritable_warehouse_is_a_clear_error(thaw, kafka, wh, tmp_path):
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 3)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    p = archive(thaw, kafka, fixtures.catalog_uri(wh), "ns.blocked", topic, "--create", "--warehouse",
                str(blocker / "wh"))
    assert p.returncode == 1, p.stderr.decode()
    line = errline(p)
    assert "ns.blocked" in line and str(blocker) in line, line
    cat = fixtures.open_catalog(wh)
    tables = cat.list_tables("ns") if ("ns",) in cat.list_namespaces() else []
    assert tables == []


def test_two_archivers_on_one_table_one_fails_each_offset_once(thaw, kafka, wh):
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 10)
    uri = fixtures.catalog_uri(wh)
    p = archive(thaw, kafka, uri, "ns.two", topic, "--create", "--warehouse", wh)
    assert p.returncode == 0, p.stderr.decode()
    cmd = [str(thaw.binary), "archive", "--brokers", kafka.bootstrap, "--topic", topic, "--catalog", uri, "--table",
           "ns.two", "--follow", "--commit-interval", "300ms", "--json"]
    stop = threading.Event()

    def producer():
        i = 10
        while not stop.is_set():
            produce(kafka, topic, 2, start=i)
            i += 2
            time.sleep(0.05)

    th = threading.Thread(target=producer, daemon=True)
    th.start()
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    try:
        deadline = time.monotonic() + 60
        while all(pr.poll() is None for pr in procs):
            assert time.monotonic() < deadline, "neither archiver failed"
            time.sleep(0.2)
        stop.set()
        th.join()
        failed = [pr for pr in procs if pr.poll() is not None]
        assert len(failed) >= 1
        for pr in procs:
            if pr.poll() is None:
                pr.send_signal(signal.SIGINT)
        results = [pr.communicate(timeout=60) for pr in procs]
    finally:
        for pr in procs:
            if pr.poll() is None:
                pr.kill()
    codes = [pr.returncode for pr in procs]
    errors = [r[1].decode() for r, c in zip(results, codes) if c == 1]
    # One stopped by the SIGINT (exit 130), the other by the conflict (exit 1).
    assert sorted(codes) == [1, 128 + signal.SIGINT] and len(errors) == 1, (codes, errors)
    assert "another writer" in errors[0] and "run one archiver per table" in errors[0], errors[0]
    # A last run catches up; the table holds every offset exactly once.
    p = archive(thaw, kafka, uri, "ns.two", topic)
    assert p.returncode == 0, p.stderr.decode()
    assert_table_equals_topic(thaw, kafka, wh, uri, "ns.two", topic)


def test_usage_errors_exit_2(thaw, kafka, wh):
    uri = fixtures.catalog_uri(wh)
    for extra, needle in [(["--commit-interval", "soon"], "--commit-interval"),
                          (["--target-file-size", "12 parsecs"], "--target-file-size"),
                          (["--from-offset", "middle"], "middle"),
                          (["--layout", "columnar"], "--layout"),
                          (["--format-version", "4"], "--format-version"),
                          (["--warehouse", wh], "--create")]:
        p = archive(thaw, kafka, uri, "ns.t", "some-topic", *extra)
        assert p.returncode == 2, (extra, p.stderr.decode())
        assert needle in errline(p), (extra, errline(p))


def test_huge_values_roll_files_in_a_v3_table(thaw, kafka, wh):
    topic = topic_name()
    kafka.create_topic(topic, 2, config={"max.message.bytes": str(11 << 20)})
    p = kafka.producer(message_max_bytes=12 << 20)
    p.produce(topic, key=b"huge", value=os.urandom(10 << 20), partition=0, headers=[("h", b"x")])
    for i in range(24):
        p.produce(topic, key=f"k{i}".encode(), value=os.urandom(300 << 10), partition=i % 2)
    assert p.flush(60) == 0
    uri = fixtures.catalog_uri(wh)
    p = archive(thaw, kafka, uri, "ns.big", topic, "--create", "--warehouse", wh, "--format-version", "3",
                "--target-file-size", "1MiB", "--buffer-size", "64MiB", "--json")
    assert p.returncode == 0, p.stderr.decode()
    s = json.loads(p.stdout)
    assert s["records"] == 25 and s["commits"] == 1
    assert s["data_files"] >= 4, s  # rolled at about 1 MiB
    t = fixtures.open_catalog(wh).load_table("ns.big")
    assert t.format_version == 3
    assert t.metadata.next_row_id == 25
    assert_table_equals_topic(thaw, kafka, wh, uri, "ns.big", topic)


def test_several_topics_into_one_table_with_a_topic_column(thaw, kafka, wh):
    a, b = topic_name("a"), topic_name("b")
    kafka.create_topic(a, 2)
    kafka.create_topic(b, 3)
    produce(kafka, a, 6, partitions=2)
    produce(kafka, b, 4, partitions=3)
    uri = fixtures.catalog_uri(wh)
    p = archive(thaw, kafka, uri, "ns.multi", f"{a},{b}", "--create", "--warehouse", wh, "--json")
    assert p.returncode == 0, p.stderr.decode()
    s = json.loads(p.stdout)
    assert s["records"] == 24
    assert s["next_offsets"] == {a: {"0": 6, "1": 6}, b: {"0": 4, "1": 4, "2": 4}}
    t = fixtures.open_catalog(wh).load_table("ns.multi")
    assert [f.name for f in t.spec().fields] == ["kafka_partition", "kafka_topic"]
    assert "thaw.source.topic" not in t.properties
    rows = t.scan().to_arrow().to_pylist()
    got = sorted((r["kafka_topic"], r["kafka_partition"], r["kafka_offset"], r["key"], r["value"]) for r in rows)
    want = sorted((topic, r["partition"], r["offset"], r["key"], r["value"])
                  for topic in (a, b) for r in kafka.consume_all(topic))
    assert got == want
    # The same table takes one of its topics alone; a table of one topic refuses two.
    produce(kafka, a, 2, start=6, partitions=2)
    p = archive(thaw, kafka, uri, "ns.multi", a, "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["next_offsets"] == {a: {"0": 8, "1": 8}, b: {"0": 4, "1": 4, "2": 4}}
    single = topic_name()
    kafka.create_topic(single, 1)
    p = archive(thaw, kafka, uri, "ns.single", single, "--create", "--warehouse", wh)
    assert p.returncode == 0, p.stderr.decode()
    p = archive(thaw, kafka, uri, "ns.single", f"{single},{a}")
    assert p.returncode == 2 and "kafka_topic" in errline(p), errline(p)


def test_settings_from_a_config_file(thaw, kafka, wh, tmp_path):
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 5)
    cfg = tmp_path / "archive.toml"
    cfg.write_text(f'catalog = "{fixtures.catalog_uri(wh)}"\nbrokers = "{kafka.bootstrap}"\n'
                   f'[archive]\ntopic = ["{topic}"]\ntable = "ns.cfg"\ncreate = true\nwarehouse = "{wh}"\n'
                   f'commit-interval = "2s"\ntarget-file-size = "64MiB"\npartitions = "1"\n')
    p = thaw("archive", "--config", str(cfg), "--json")
    assert p.returncode == 0, p.stderr.decode()
    s = json.loads(p.stdout)
    assert s["table"] == "ns.cfg" and s["records"] == 5 and s["next_offsets"] == {topic: {"1": 5}}


def test_archive_through_the_rest_catalog_into_s3(thaw, kafka, rest_catalog):
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 15)
    name = f"arch_{uuid.uuid4().hex[:8]}.t"
    args = ["--catalog", rest_catalog.uri]
    for k, v in rest_catalog.client_props().items():
        args += ["--catalog-property", f"{k}={v}"]

    def run(*extra):
        p = thaw("archive", "--brokers", kafka.bootstrap, "--topic", topic, *args, "--table", name,
                 "--json", *extra, timeout=180)
        assert p.returncode == 0, p.stderr.decode()
        return json.loads(p.stdout)

    s = run("--create")  # the server picks the location (its warehouse in the store)
    assert s["records"] == 45 and s["commits"] == 1
    produce(kafka, topic, 5, start=15)
    s = run()
    assert s["records"] == 15 and s["next_offsets"] == {topic: {"0": 20, "1": 20, "2": 20}}
    t = rest_catalog.pyiceberg().load_table(name)
    assert t.location().startswith("s3://")
    rows = t.scan().to_arrow().to_pylist()
    got = sorted((r["kafka_partition"], r["kafka_offset"], r["key"], r["value"],
                  [(h["key"], h["value"]) for h in (r["headers"] or [])]) for r in rows)
    want = [(r["partition"], r["offset"], r["key"], r["value"], list(r["headers"])) for r in kafka.consume_all(topic)]
    assert got == want


def test_lost_commit_response_is_settled_by_reloading(thaw, kafka, rest_catalog):
    """The REST commit reaches the server but its response is lost (connection reset): the outcome is
    unknown, archive reloads the table, finds its snapshot on main and counts it committed -- no second
    commit, each offset once. When the server never acts (503 on every commit), archive stops with a clear
    error and the table is unchanged."""
    from fault_proxy import FaultProxy
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 6)
    ns = f"arch_{uuid.uuid4().hex[:8]}"
    name = f"{ns}.lost"
    commit_path = f"/tables/lost"
    proxy = FaultProxy(rest_catalog.uri, fault_rate=1.0, faults=("reset",), seed=3,
                       fault_filter=lambda method, path: method == "POST" and path.split("?")[0].endswith(commit_path))
    proxy.start()
    try:
        args = ["--catalog", proxy.url]
        for k, v in rest_catalog.client_props().items():
            args += ["--catalog-property", f"{k}={v}"]

        def run(*extra):
            return thaw("archive", "--brokers", kafka.bootstrap, "--topic", topic, *args, "--table", name,
                        "--json", *extra, timeout=240)

        p = run("--create")
        assert p.returncode == 0, p.stderr.decode()
        s = json.loads(p.stdout)
        assert s["commits"] == 1 and s["records"] == 18
        assert proxy.stats()["faults"].get("reset", 0) >= 1
        t = rest_catalog.pyiceberg().load_table(name)
        assert len(t.metadata.snapshots) == 1 and t.current_snapshot().snapshot_id == s["snapshot_id"]

        produce(kafka, topic, 2, start=6)
        proxy.faults = ("503",)
        p = run()
        assert p.returncode == 1, p.stderr.decode()
        line = errline(p)
        assert "commit state unknown" in line and "rerun" in line, line
        t = rest_catalog.pyiceberg().load_table(name)
        assert len(t.metadata.snapshots) == 1

        proxy.fault_rate = 0.0
        p = run()
        assert p.returncode == 0, p.stderr.decode()
        assert json.loads(p.stdout)["records"] == 6
        rows = rest_catalog.pyiceberg().load_table(name).scan().to_arrow().to_pylist()
        got = sorted((r["kafka_partition"], r["kafka_offset"]) for r in rows)
        assert got == [(r["partition"], r["offset"]) for r in kafka.consume_all(topic)]
    finally:
        proxy.stop()


def test_commit_conflict_with_another_writer_is_reapplied(thaw, kafka, wh):
    """Another writer (pyiceberg setting a property) moves the table between two archive commits: the next
    commit conflicts, archive reloads, sees its offsets untouched, re-applies on the new state (the property
    stays) and goes on."""
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 5)
    uri = fixtures.catalog_uri(wh)
    proc = start_follow(thaw, kafka, uri, "ns.conflict", topic, wh, "--commit-interval", "300ms", "--json")

    def wait_total(n):
        deadline = time.monotonic() + 30
        while True:
            s = fixtures.open_catalog(wh).load_table("ns.conflict").current_snapshot()
            if s and s.summary.get("total-records") == str(n):
                return
            assert time.monotonic() < deadline, s and s.summary
            time.sleep(0.1)

    try:
        lines, th = wait_for_line(proc.stderr, "archiving topic")
        wait_total(15)
        t = fixtures.open_catalog(wh).load_table("ns.conflict")
        with t.transaction() as tx:
            tx.set_properties({"owner": "someone-else"})
        produce(kafka, topic, 3, start=5)
        wait_total(24)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGINT, "".join(lines)
    s = json.loads(out)
    assert s["conflicts_retried"] >= 1, s
    t = fixtures.open_catalog(wh).load_table("ns.conflict")
    assert t.properties["owner"] == "someone-else"
    assert inspect_records(thaw, uri, "ns.conflict") == topic_view(kafka.consume_all(topic))


def test_group_offsets_are_committed_for_monitoring(thaw, kafka, wh):
    from confluent_kafka import ConsumerGroupTopicPartitions
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 7)
    group = f"g-{uuid.uuid4().hex[:8]}"
    p = archive(thaw, kafka, fixtures.catalog_uri(wh), "ns.grp", topic, "--create", "--warehouse", wh,
                "--group", group)
    assert p.returncode == 0, p.stderr.decode()
    fs = kafka.admin().list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
    res = fs[group].result(timeout=30)
    assert {tp.partition: tp.offset for tp in res.topic_partitions if tp.topic == topic} == {0: 7, 1: 7, 2: 7}


def test_follow_from_latest_commits_its_start_before_any_record(thaw, kafka, wh):
    """A first --follow run from `latest` commits where it starts at the first interval, even with no record:
    after a kill -9, the next run resumes there and loses nothing produced in between."""
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 4)
    uri = fixtures.catalog_uri(wh)
    proc = start_follow(thaw, kafka, uri, "ns.start", topic, wh, "--from-offset", "latest", "--commit-interval", "500ms")
    try:
        deadline = time.monotonic() + 30
        while True:
            t = fixtures.open_catalog(wh).load_table("ns.start") if fixtures.open_catalog(wh).table_exists(
                "ns.start") else None
            s = t and t.current_snapshot()
            if s:
                break
            assert time.monotonic() < deadline and proc.poll() is None, proc.poll()
            time.sleep(0.1)
        assert json.loads(s.summary["thaw.archive.next-offsets"]) == {topic: {"0": 4, "1": 4, "2": 4}}
        assert s.summary["total-records"] == "0"
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    produce(kafka, topic, 3, start=4)
    p = archive(thaw, kafka, uri, "ns.start", topic, "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["records"] == 9
    assert inspect_records(thaw, uri, "ns.start") == [r for r in topic_view(kafka.consume_all(topic))
                                                       if r["offset"] >= 4]


def test_follow_from_latest_records_its_start_before_consuming(thaw, kafka, wh):
    """Issue 20: the start offsets of `--from-offset latest` were committed only at the first interval; a kill -9
    before it made the rerun start at a later `latest`, and what was produced in between was never archived."""
    topic = topic_name()
    kafka.create_topic(topic, 2)
    produce(kafka, topic, 5, partitions=2)
    uri = fixtures.catalog_uri(wh)
    proc = start_follow(thaw, kafka, uri, "ns.window", topic, wh, "--from-offset", "latest", "--commit-interval", "1h")
    try:
        lines, th = wait_for_line(proc.stderr, "archiving topic")
        produce(kafka, topic, 7, start=5, partitions=2)  # read by the archiver, not committed (1 h interval)
        time.sleep(3)
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    s = fixtures.open_catalog(wh).load_table("ns.window").current_snapshot()
    assert s is not None, "".join(lines)
    assert json.loads(s.summary["thaw.archive.next-offsets"]) == {topic: {"0": 5, "1": 5}}
    produce(kafka, topic, 3, start=12, partitions=2)
    p = archive(thaw, kafka, uri, "ns.window", topic, "--from-offset", "latest", "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["records"] == 20
    assert inspect_records(thaw, uri, "ns.window") == [r for r in topic_view(kafka.consume_all(topic))
                                                        if r["offset"] >= 5]


def test_follow_archives_partitions_added_while_it_runs(thaw, kafka, wh):
    """Issue 20: a third partition added under `archive --follow` was never archived (its records are lost for
    good once retention deletes them). New partitions are found within the check interval (5 s) and archived
    from their earliest offset, even when the run started from `latest`."""
    topic = topic_name()
    kafka.create_topic(topic, 2)
    produce(kafka, topic, 3, partitions=2)
    uri = fixtures.catalog_uri(wh)
    proc = start_follow(thaw, kafka, uri, "ns.grow", topic, wh, "--from-offset", "latest", "--commit-interval", "1s")
    try:
        lines, th = wait_for_line(proc.stderr, "archiving topic")
        kafka.add_partitions(topic, 3)
        produce(kafka, topic, 10, start=3, partitions=3)  # 10 to partition 2, 10 more to partitions 0 and 1
        want = sorted((r for r in topic_view(kafka.consume_all(topic)) if r["partition"] == 2 or r["offset"] >= 3),
                      key=lambda r: (r["partition"], r["offset"]))
        assert len(want) == 30
        deadline = time.monotonic() + 40
        while True:
            s = fixtures.open_catalog(wh).load_table("ns.grow").current_snapshot()
            if s and s.summary.get("total-records") == "30":
                break
            assert time.monotonic() < deadline and proc.poll() is None, (s and s.summary, "".join(lines)[-3000:])
            time.sleep(0.3)
        assert json.loads(s.summary["thaw.archive.next-offsets"]) == {topic: {"0": 13, "1": 13, "2": 10}}
        assert inspect_records(thaw, uri, "ns.grow") == want
        assert any(f"topic '{topic}' partition 2 appeared while following: archiving it from its earliest offset 0"
                   in line for line in lines), "".join(lines)[-3000:]
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM


def test_resumes_after_another_engine_compacted_and_expired_every_archive_snapshot(thaw, kafka, wh):
    """Issue 20: a table archived by Thaw, then rewritten by another engine (pyiceberg's overwrite: a snapshot
    without thaw.archive.next-offsets) and its older snapshots expired, could not be resumed. Archive now falls
    back to what the data proves (one past each partition's greatest offset in the live files' bounds), never to
    --from-offset."""
    import datetime
    topic = topic_name()
    kafka.create_topic(topic, 3)
    produce(kafka, topic, 10)
    uri = fixtures.catalog_uri(wh)
    p = archive(thaw, kafka, uri, "ns.foreign", topic, "--create", "--warehouse", wh)
    assert p.returncode == 0, p.stderr.decode()
    cat = fixtures.open_catalog(wh)
    t = cat.load_table("ns.foreign")
    assert t.properties.get("thaw.archive.ordered-files") == "true"
    # Another engine's maintenance: every row rewritten, then every older snapshot expired.
    rows = t.scan().to_arrow().sort_by([("kafka_partition", "ascending"), ("kafka_offset", "ascending")])
    t.overwrite(rows)
    t = cat.load_table("ns.foreign")
    t.maintenance.expire_snapshots().older_than(datetime.datetime.now(datetime.timezone.utc)).commit()
    t = cat.load_table("ns.foreign")
    assert len(t.metadata.snapshots) == 1 and t.current_snapshot().summary.get("thaw.archive.next-offsets") is None
    produce(kafka, topic, 4, start=10)
    p = archive(thaw, kafka, uri, "ns.foreign", topic, "--from-offset", "earliest", "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["records"] == 12  # the 4 new records of each partition, none again
    assert "resuming from the offsets its data files hold" in p.stderr.decode()
    assert inspect_records(thaw, uri, "ns.foreign") == sorted(topic_view(kafka.consume_all(topic)),
                                                                key=lambda r: (r["partition"], r["offset"]))
    # Without the property (a table archive did not create) it stays an error that says what to do.
    t = cat.load_table("ns.foreign")
    rows = t.scan().to_arrow()
    with t.transaction() as tx:
        tx.remove_properties("thaw.archive.ordered-files")
    t = cat.load_table("ns.foreign")
    t.overwrite(rows)
    t = cat.load_table("ns.foreign")
    t.maintenance.expire_snapshots().older_than(datetime.datetime.now(datetime.timezone.utc)).commit()
    p = archive(thaw, kafka, uri, "ns.foreign", topic)
    assert p.returncode == 2, p.stderr.decode()
    assert "set the table property thaw.archive.ordered-files=true" in errline(p), errline(p)


def test_resumes_after_iceberg_java_compacted_and_expired_every_archive_snapshot(thaw, kafka, wh):
    """Issue 20, with the commits Spark's rewrite_data_files and expire_snapshots make (Iceberg Java's RewriteFiles,
    a `replace` snapshot without thaw.archive.next-offsets, then ExpireSnapshots down to it): the rerun resumes
    from what the data files prove, archives only the new records, and every engine reads each record once."""
    from pathlib import Path
    java_run = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "java" / "run.sh"
    topic = topic_name()
    kafka.create_topic(topic, 3)
    uri = fixtures.catalog_uri(wh)
    for start in (0, 5):  # two archive snapshots: two data files a partition
        produce(kafka, topic, 5, start=start)
        p = archive(thaw, kafka, uri, "ns.javamaint", topic, "--create", "--warehouse", wh)
        assert p.returncode == 0, p.stderr.decode()
    db = os.path.join(os.path.abspath(wh), "catalog.db")
    j = subprocess.run([str(java_run), "follow", "maintain", db, "default", os.path.abspath(wh), "ns.javamaint"],
                       capture_output=True, timeout=300)
    assert j.returncode == 0, j.stderr.decode()
    t = fixtures.open_catalog(wh).load_table("ns.javamaint")
    assert t.current_snapshot().summary.operation.value == "replace", t.current_snapshot().summary
    assert len(t.metadata.snapshots) == 1 and t.current_snapshot().summary.get("thaw.archive.next-offsets") is None
    assert len(t.inspect.files()) == 3  # one file a partition, written by Iceberg Java
    produce(kafka, topic, 4, start=10)
    p = archive(thaw, kafka, uri, "ns.javamaint", topic, "--from-offset", "earliest", "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["records"] == 12  # the 4 new records of each partition, none again
    assert "resuming from the offsets its data files hold" in p.stderr.decode()
    want = sorted(topic_view(kafka.consume_all(topic)), key=lambda r: (r["partition"], r["offset"]))
    assert len(want) == 3 * 14
    t = assert_every_engine_reads(thaw, uri, wh, "ns.javamaint", want)


def archived_with_properties(thaw, kafka, wh, name, properties):
    """A 2-partition topic with 2 records a partition, archived into a new table that then gets `properties`;
    returns (topic, catalog uri, table)."""
    topic = topic_name()
    kafka.create_topic(topic, 2)
    uri = fixtures.catalog_uri(wh)
    produce(kafka, topic, 2, partitions=2)
    p = archive(thaw, kafka, uri, name, topic, "--create", "--warehouse", wh)
    assert p.returncode == 0, p.stderr.decode()
    t = fixtures.open_catalog(wh).load_table(name)
    with t.transaction() as tx:
        tx.set_properties(properties)
    return topic, uri, t


def archive_two_more(thaw, kafka, uri, name, topic, round_):
    """Round `round_` of 2 more records a partition, archived by one run (one commit)."""
    produce(kafka, topic, 2, start=2 + 2 * round_, partitions=2)
    p = archive(thaw, kafka, uri, name, topic)
    assert p.returncode == 0, p.stderr.decode()


def test_metadata_files_dropped_from_the_log_are_deleted_when_the_table_says_so(thaw, kafka, wh):
    """Issue 20: write.metadata.delete-after-commit.enabled was ignored, so a table committed every few seconds
    kept every metadata.json it ever had. With it, the files that fall out of the metadata-log
    (write.metadata.previous-versions-max) are deleted after each commit, as Iceberg Java's catalogs do."""
    topic, uri, t = archived_with_properties(thaw, kafka, wh, "ns.meta", {
        "write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "2"})
    meta_dir = os.path.join(t.location().removeprefix("file://"), "metadata")
    for i in range(5):
        archive_two_more(thaw, kafka, uri, "ns.meta", topic, i)
    t = fixtures.open_catalog(wh).load_table("ns.meta")
    on_disk = sorted(f for f in os.listdir(meta_dir) if f.endswith(".metadata.json"))
    logged = {os.path.basename(e.metadata_file) for e in t.metadata.metadata_log}
    current = os.path.basename(t.metadata_location)
    assert len(logged) == 2 and set(on_disk) == logged | {current}, (on_disk, logged, current)
    assert len(inspect_records(thaw, uri, "ns.meta")) == 2 * 12
    assert len(pyiceberg_records(wh, "ns.meta")) == 2 * 12


def test_commits_merge_manifests_as_a_merge_append_does(thaw, kafka, wh):
    """Issue 20: every commit added one manifest, carried forward forever. With commit.manifest.min-count-to-merge
    (Iceberg's default 100; 3 here) the parent's small manifests are merged, as Iceberg Java's merge append does,
    and every engine still reads every record."""
    topic, uri, t = archived_with_properties(thaw, kafka, wh, "ns.merge", {"commit.manifest.min-count-to-merge": "3"})
    counts = []
    for i in range(8):
        archive_two_more(thaw, kafka, uri, "ns.merge", topic, i)
        snap = fixtures.open_catalog(wh).load_table("ns.merge").current_snapshot()
        counts.append(len(snap.manifests(t.io)))
    assert max(counts) <= 3 and counts[-1] < 8, counts
    want = sorted(topic_view(kafka.consume_all(topic)), key=lambda r: (r["partition"], r["offset"]))
    assert len(want) == 2 * 18
    t = assert_every_engine_reads(thaw, uri, wh, "ns.merge", want)
    # The table's summary still counts every live file and record.
    assert t.current_snapshot().summary["total-records"] == str(len(want))
    # Resuming reads the offsets through merged manifests too: nothing archived again.
    p = archive(thaw, kafka, uri, "ns.merge", topic, "--json")
    assert json.loads(p.stdout)["records"] == 0


def test_follow_merges_manifests_beside_the_commits(thaw, kafka, wh):
    """Issue 20: merging on the commit path made every hundredth commit seconds long. Under --follow the merge
    runs beside the archive and a later commit takes the merged manifests: the manifest count stays bounded,
    snapshots list the merged manifests (EXISTING entries), no merged file is left behind that no snapshot
    lists, and every engine reads every record once."""
    topic, uri, t = archived_with_properties(thaw, kafka, wh, "ns.bgmerge", {"commit.manifest.min-count-to-merge": "3"})
    proc = start_follow(thaw, kafka, uri, "ns.bgmerge", topic, wh, "--commit-interval", "300ms", "--json")
    counts, existing = [], 0
    try:
        for i in range(12):
            produce(kafka, topic, 2, start=2 + 2 * i, partitions=2)
            time.sleep(0.5)
            snap = fixtures.open_catalog(wh).load_table("ns.bgmerge").current_snapshot()
            manifests = snap.manifests(t.io)
            counts.append(len(manifests))
            existing = max(existing, sum(m.existing_files_count or 0 for m in manifests))
        want = sorted(topic_view(kafka.consume_all(topic)), key=lambda r: (r["partition"], r["offset"]))
        deadline = time.monotonic() + 30
        while fixtures.open_catalog(wh).load_table("ns.bgmerge").current_snapshot().summary["total-records"] != \
                str(len(want)):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()
    assert existing > 0, f"no snapshot listed a merged manifest: {counts}"
    assert json.loads(out)["manifest_merges"] >= 1, counts
    # min-count 3: a merge starts when a commit finds 3 and is taken by a later commit.
    assert max(counts) <= 6, counts
    t = fixtures.open_catalog(wh).load_table("ns.bgmerge")
    listed = set()
    for snap in t.snapshots():
        listed.update(m.manifest_path.removeprefix("file://") for m in snap.manifests(t.io))
        listed.add(snap.manifest_list.removeprefix("file://"))
    meta_dir = os.path.join(t.location().removeprefix("file://"), "metadata")
    on_disk = {os.path.join(meta_dir, f) for f in os.listdir(meta_dir) if f.endswith(".avro")}
    assert on_disk <= listed, sorted(on_disk - listed)
    assert len(want) == 2 * 26
    assert_every_engine_reads(thaw, uri, wh, "ns.bgmerge", want)
    assert t.current_snapshot().summary["total-records"] == str(len(want))


def test_compression_level_comes_from_the_table_property(thaw, kafka, wh):
    """Iceberg's write.parquet.compression-level sets archive's zstd level (default 3, Iceberg Java's): the same
    records take fewer bytes at level 19 than at level 1; a value that is not a zstd level is refused, naming the
    property, before anything is written."""
    topic = topic_name()
    kafka.create_topic(topic, 2)
    uri = fixtures.catalog_uri(wh)
    words = [f"word{i}" for i in range(300)]
    sizes = {}
    for level in ("1", "19", "fast"):
        table = f"ns.level_{level}"
        # An empty first run creates the table (and commits the start offsets); the property is set before data.
        p = archive(thaw, kafka, uri, table, topic, "--create", "--warehouse", wh, "--partitions", "0")
        assert p.returncode == 0, p.stderr.decode()
        with fixtures.open_catalog(wh).load_table(table).transaction() as tx:
            tx.set_properties({"write.parquet.compression-level": level})
    p = kafka.producer()
    for i in range(3000):
        value = " ".join(words[(i * 7 + j * 13) % len(words)] for j in range(40)).encode()
        p.produce(topic, key=f"k{i}".encode(), value=value, partition=0)
    assert p.flush(30) == 0
    for level in ("1", "19"):
        p = archive(thaw, kafka, uri, f"ns.level_{level}", topic, "--partitions", "0", "--json")
        assert p.returncode == 0, p.stderr.decode()
        assert json.loads(p.stdout)["records"] == 3000
        t = fixtures.open_catalog(wh).load_table(f"ns.level_{level}")
        sizes[level] = int(t.current_snapshot().summary["added-files-size"])
        assert len(pyiceberg_records(wh, f"ns.level_{level}")) == 3000
    assert sizes["19"] < sizes["1"], sizes
    p = archive(thaw, kafka, uri, "ns.level_fast", topic, "--partitions", "0")
    assert p.returncode != 0
    line = errline(p)
    assert "write.parquet.compression-level" in line and "'fast'" in line and "ns.level_fast" in line, line
    snap = fixtures.open_catalog(wh).load_table("ns.level_fast").current_snapshot()
    assert snap is None or snap.summary.get("total-records", "0") == "0"


def test_off_a_terminal_archive_says_what_each_commit_did(thaw, kafka, wh):
    """Issue 24: off a terminal (containers, CI, 2>log) archive printed nothing until it ended."""
    import re
    topic = topic_name()
    kafka.create_topic(topic, 2)
    produce(kafka, topic, 30, partitions=2)
    uri = fixtures.catalog_uri(wh)
    p = archive(thaw, kafka, uri, "ns.told", topic, "--create", "--warehouse", wh, "--json")
    assert p.returncode == 0, p.stderr.decode()
    err = p.stderr.decode()
    snapshot = json.loads(p.stdout)["snapshot_id"]
    m = re.search(r"^thaw archive: info: commit 1: snapshot (\d+), 60 records in 2 data files \(([\d.]+) MB of Parquet\); "
                  r"next offsets (.*); [\d.]+ ms", err, re.M)
    assert m and int(m.group(1)) == snapshot, err
    assert f"{topic} 0:30 1:30" in m.group(3) or ("0:30" in m.group(3) and "1:30" in m.group(3)), err
    produce(kafka, topic, 5, start=30, partitions=2)
    quiet = archive(thaw, kafka, uri, "ns.told", topic, "-q")
    assert quiet.returncode == 0 and "commit" not in quiet.stderr.decode(), quiet.stderr.decode()
