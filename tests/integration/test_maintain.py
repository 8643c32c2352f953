"""`thaw maintain` on a table with many small commits (issue 10).

Tables are canonical-layout v2 tables written by pyiceberg in many small
appends (each append: a contiguous offset range of every partition, one data
file per partition), the shape `thaw archive` with a short commit interval
leaves. Readers: pyiceberg (an independent Iceberg implementation) and
`thaw inspect`.

* --compact: the same records through pyiceberg and thaw, fewer files, every
  new file in offset order and of one partition, the archive offsets carried
  into the replace snapshot, appends work afterwards, a second run has
  nothing to do, --dry-run changes nothing.
* --expire-snapshots-older-than: old snapshots leave the metadata, the files
  only they reached (the compacted-away small files, their manifests and
  manifest lists) leave the disk, a tagged snapshot and its files stay, the
  current snapshot reads the same.
* --remove-orphans: an old unreferenced file is deleted (a data file and a
  stray metadata file), a new one is kept, every referenced file is kept;
  --dry-run lists without deleting.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import sqlite3
import subprocess
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.io.pyarrow import schema_to_pyarrow

import fixtures
import iceberg_readers

TOPIC = "orders"
APPENDS = 10
PARTITIONS = [0, 1, 2]
NEXT_OFFSETS = json.dumps({TOPIC: {"0": 1, "1": 2, "2": 3}})


def build(tmp_path: Path, name: str = "ns.archived", appends: int = APPENDS):
    wh = str(tmp_path / "wh")
    os.makedirs(wh, exist_ok=True)
    return build_in(fixtures.open_catalog(wh), wh, name, appends)


def build_in(cat, wh: str, name: str, appends: int = APPENDS, partitions: list[int] = PARTITIONS):
    cat.create_namespace_if_not_exists(name.split(".")[0])
    t = fixtures.create(cat, wh, name, fixtures.canonical_schema(), spec=fixtures.CANONICAL_SPEC,
                        sort_order=fixtures.CANONICAL_SORT, properties=fixtures.thaw_props(TOPIC))
    records = fixtures.edge_case_records(partitions, 40, seed=10, start_offsets={1: 7, 2: 1000})
    arrow_schema = schema_to_pyarrow(t.schema())
    for k, part in enumerate(fixtures.chunks(records, appends)):
        # What `thaw archive` records in every snapshot: the next offsets and the writer.
        props = {"thaw.archive.next-offsets": NEXT_OFFSETS, "thaw.archive.writer": f"run-{k}"}
        t.append(pa.Table.from_pylist([fixtures.canonical_row(r) for r in part], schema=arrow_schema),
                 snapshot_properties=props)
    return wh, cat, name, fixtures.expected_view(records)


def catalog_args(wh: str) -> list[str]:
    return ["--catalog", fixtures.catalog_uri(wh)]


def pyiceberg_rows(cat, name: str) -> list[dict]:
    rows = cat.load_table(name).scan().to_arrow().to_pylist()
    return sorted(rows, key=lambda r: (r["kafka_partition"], r["kafka_offset"]))


def thaw_record(r: dict) -> dict:
    """A record line of `thaw inspect --records --format json` with its bytes decoded (no topic)."""
    return {
        "partition": r["partition"], "offset": r["offset"], "timestamp": r["timestamp"],
        "timestamp_type": r["timestamp_type"],
        "key": fixtures.json_bytes(r, "key"),
        "value": fixtures.json_bytes(r, "value"),
        "headers": [(h["key"], fixtures.json_bytes(h, "value", "encoding")) for h in r["headers"]],
    }


def thaw_records(thaw, wh: str, name: str) -> list[dict]:
    p = thaw.ok("inspect", *catalog_args(wh), "--table", name, "--records", "--format", "json")
    return [thaw_record(json.loads(line)) for line in p.stdout.decode().splitlines()]


def live_data_files(cat, name: str) -> list[str]:
    return sorted(task.file.file_path for task in cat.load_table(name).scan().plan_files())


def local(path: str) -> str:
    return path.removeprefix("file://").removeprefix("file:")


def maintain(thaw, wh: str, name: str, *args: str) -> dict:
    p = thaw.ok("maintain", *catalog_args(wh), "--table", name, *args, "--json")
    return json.loads(p.stdout)


def test_compact_keeps_every_record_in_offset_order_in_fewer_files(thaw, tmp_path):
    wh, cat, name, want = build(tmp_path)
    before_rows = pyiceberg_rows(cat, name)
    before_files = live_data_files(cat, name)
    assert len(before_files) == APPENDS * len(PARTITIONS)
    assert thaw_records(thaw, wh, name) == want
    parent = cat.load_table(name).current_snapshot()

    # --dry-run: the plan, no change.
    dry = maintain(thaw, wh, name, "--compact", "--dry-run")
    assert dry["compaction"]["files_rewritten"] == len(before_files), dry
    assert dry["compaction"]["files_written"] == len(PARTITIONS), dry
    assert cat.load_table(name).current_snapshot().snapshot_id == parent.snapshot_id
    assert live_data_files(cat, name) == before_files

    out = maintain(thaw, wh, name, "--compact")
    assert out["commits"] == 1, out
    assert out["compaction"]["files_rewritten"] == len(before_files), out
    assert out["compaction"]["files_written"] == len(PARTITIONS), out
    assert out["compaction"]["records_rewritten"] == len(want), out

    t = cat.load_table(name)
    snap = t.current_snapshot()
    assert snap.snapshot_id == out["snapshot_id"] and snap.parent_snapshot_id == parent.snapshot_id
    assert snap.summary.operation.value == "replace"
    summary = snap.summary.additional_properties
    assert summary["thaw.archive.next-offsets"] == NEXT_OFFSETS
    assert summary["thaw.archive.writer"] == f"run-{APPENDS - 1}"
    assert int(summary["total-records"]) == len(want)
    assert int(summary["total-data-files"]) == len(PARTITIONS)

    # The same records through pyiceberg and thaw; fewer files.
    assert pyiceberg_rows(cat, name) == before_rows
    assert thaw_records(thaw, wh, name) == want
    after_files = live_data_files(cat, name)
    assert len(after_files) == len(PARTITIONS)
    assert not set(after_files) & set(before_files)
    # Each new file: one partition, offsets strictly increasing, bounds in the manifest.
    tasks = list(t.scan().plan_files())
    for task in tasks:
        col = pq.read_table(local(task.file.file_path), columns=["kafka_partition", "kafka_offset"])
        parts = set(col.column("kafka_partition").to_pylist())
        offsets = col.column("kafka_offset").to_pylist()
        assert parts == {task.file.partition[0]}
        assert offsets == sorted(set(offsets)), task.file.file_path
        assert task.file.record_count == len(offsets)
        assert task.file.lower_bounds and task.file.upper_bounds
    inspect = json.loads(thaw.ok("inspect", *catalog_args(wh), "--table", name, "--json").stdout)
    assert inspect["data_files"] == len(PARTITIONS) and inspect["records"] == len(want)

    # Nothing left to compact.
    again = maintain(thaw, wh, name, "--compact")
    assert again["compaction"]["files_rewritten"] == 0 and again["commits"] == 0, again
    assert cat.load_table(name).current_snapshot().snapshot_id == snap.snapshot_id

    # Appending after the compaction works (what a resumed archive does) and reads back.
    more = fixtures.edge_case_records([0], 5, seed=11, start_offsets={0: 5000})
    t.append(pa.Table.from_pylist([fixtures.canonical_row(r) for r in more],
                                           schema=schema_to_pyarrow(t.schema())))
    assert thaw_records(thaw, wh, name) == sorted(want + fixtures.expected_view(more),
                                                  key=lambda r: (r["partition"], r["offset"]))


def test_compact_respects_the_target_size(thaw, tmp_path):
    wh, cat, name, want = build(tmp_path)
    before_rows = pyiceberg_rows(cat, name)
    sizes = [task.file.file_size_in_bytes for task in cat.load_table(name).scan().plan_files()]
    # About three small files per new file.
    target = int(max(sizes) * 3.2)
    out = maintain(thaw, wh, name, "--compact", "--target-file-size", str(target))
    assert out["commits"] == 1, out
    files = list(cat.load_table(name).scan().plan_files())
    assert len(PARTITIONS) < len(files) < len(sizes), (len(files), len(sizes))
    assert pyiceberg_rows(cat, name) == before_rows
    assert thaw_records(thaw, wh, name) == want


def test_expire_deletes_only_what_expired_snapshots_reached(thaw, tmp_path):
    wh, cat, name, want = build(tmp_path)
    t = cat.load_table(name)
    first = min(t.metadata.snapshots, key=lambda s: s.sequence_number)
    t.manage_snapshots().create_tag(first.snapshot_id, "first").commit()
    first_files = {local(f.file.file_path) for f in cat.load_table(name).scan(snapshot_id=first.snapshot_id)
                   .plan_files()}
    first_rows = cat.load_table(name).scan(snapshot_id=first.snapshot_id).to_arrow().num_rows
    assert 0 < first_rows < len(want)
    small_files = {local(p) for p in live_data_files(cat, name)}
    maintain(thaw, wh, name, "--compact")
    t = cat.load_table(name)
    old = [s for s in t.metadata.snapshots if s.snapshot_id not in (t.current_snapshot().snapshot_id,
                                                                    first.snapshot_id)]
    old_lists = {local(s.manifest_list) for s in old}
    assert len(old) == APPENDS - 1  # appends 2..10 (the first is tagged; the compaction is current)
    assert all(os.path.exists(p) for p in old_lists | small_files)
    time.sleep(0.05)

    dry = maintain(thaw, wh, name, "--expire-snapshots-older-than", "0s", "--dry-run")
    assert dry["commits"] == 0 and dry["expire"]["snapshots_expired"] == len(old), dry
    assert {local(f) for f in dry["expire"]["files"]} >= old_lists | (small_files - first_files), dry
    assert len(cat.load_table(name).metadata.snapshots) == len(old) + 2
    assert all(os.path.exists(p) for p in old_lists | small_files)

    out = maintain(thaw, wh, name, "--expire-snapshots-older-than", "0s")
    assert out["commits"] == 1, out
    assert sorted(out["expire"]["snapshot_ids"]) == sorted(s.snapshot_id for s in old), out

    t = cat.load_table(name)
    assert {s.snapshot_id for s in t.metadata.snapshots} == {t.current_snapshot().snapshot_id, first.snapshot_id}
    # Gone: the expired snapshots' manifest lists and the small files only they reached.
    assert not any(os.path.exists(p) for p in old_lists)
    assert not any(os.path.exists(p) for p in small_files - first_files)
    # Kept: the tagged snapshot's files (its list, its data) and the current ones.
    assert all(os.path.exists(p) for p in first_files)
    assert os.path.exists(local(first.manifest_list))
    assert cat.load_table(name).scan(snapshot_id=first.snapshot_id).to_arrow().num_rows == first_rows
    assert all(os.path.exists(local(p)) for p in live_data_files(cat, name))
    assert thaw_records(thaw, wh, name) == want
    assert len(pyiceberg_rows(cat, name)) == len(want)

    # Nothing more to expire: the current snapshot and the tag stay.
    again = maintain(thaw, wh, name, "--expire-snapshots-older-than", "0s")
    assert again["commits"] == 0 and again["expire"]["snapshots_expired"] == 0, again


def test_remove_orphans_deletes_old_unreferenced_files_only(thaw, tmp_path):
    wh, cat, name, want = build(tmp_path, appends=3)
    maintain(thaw, wh, name, "--compact")  # leaves its inputs referenced by old snapshots
    t = cat.load_table(name)
    root = Path(local(t.location()))
    ten_days_ago = time.time() - 10 * 86400
    referenced = sorted(str(p) for p in root.rglob("*") if p.is_file())
    for p in referenced:  # every referenced file is old too: only references keep them
        os.utime(p, (ten_days_ago, ten_days_ago))
    old_orphan = root / "data" / "kafka_partition=0" / "00000-0-crashed-writer.parquet"
    old_orphan.write_bytes(b"PAR1 from a crashed writer")
    os.utime(old_orphan, (ten_days_ago, ten_days_ago))
    old_metadata = root / "metadata" / "00099-stray.metadata.json"
    old_metadata.write_text("{}")
    os.utime(old_metadata, (ten_days_ago, ten_days_ago))
    new_orphan = root / "data" / "kafka_partition=1" / "00000-0-in-flight.parquet"
    new_orphan.write_bytes(b"an archiver's file not committed yet")

    dry = maintain(thaw, wh, name, "--remove-orphans", "--dry-run")
    assert sorted(local(f) for f in dry["orphans"]["files"]) == sorted([str(old_orphan), str(old_metadata)]), dry
    assert dry["orphans"]["deleted"] == 0 and old_orphan.exists() and old_metadata.exists()

    out = maintain(thaw, wh, name, "--remove-orphans")
    assert out["orphans"]["deleted"] == 2, out
    assert not old_orphan.exists() and not old_metadata.exists()
    assert new_orphan.exists()
    assert all(os.path.exists(p) for p in referenced)
    assert thaw_records(thaw, wh, name) == want
    assert len(pyiceberg_rows(cat, name)) == len(want)
    # Every snapshot still reads (its files were referenced).
    for s in cat.load_table(name).metadata.snapshots:
        cat.load_table(name).scan(snapshot_id=s.snapshot_id).to_arrow()


def test_compaction_leaves_tables_not_written_by_archive(thaw, tmp_path):
    wh = str(tmp_path / "wh")
    os.makedirs(wh)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists("ns")
    t = fixtures.create(cat, wh, "ns.foreign", fixtures.canonical_schema(), spec=fixtures.CANONICAL_SPEC)
    records = fixtures.edge_case_records([0, 1], 6, seed=3)
    for part in fixtures.chunks(records, 3):
        fixtures.append_rows(t, [fixtures.canonical_row(r) for r in part])
    files = live_data_files(cat, "ns.foreign")
    out = maintain(thaw, wh, "ns.foreign", "--compact")
    assert out["commits"] == 0 and out["compaction"]["files_rewritten"] == 0, out
    assert any("thaw.layout" in n for n in out["notes"]), out
    assert live_data_files(cat, "ns.foreign") == files


def test_usage_errors(thaw, tmp_path):
    wh, cat, name, _ = build(tmp_path, appends=2)
    p = thaw("maintain", *catalog_args(wh), "--table", name)
    assert p.returncode == 2 and b"nothing to do" in p.stderr, p
    p = thaw("maintain", *catalog_args(wh), "--table", name, "--compact", "--target-file-size", "lots")
    assert p.returncode == 2 and b"--target-file-size" in p.stderr, p
    p = thaw("maintain", *catalog_args(wh), "--table", "ns.missing", "--compact")
    assert p.returncode == 1 and b"ns.missing" in p.stderr, p


# --------------------------------------------------------------------------
# A table `thaw archive` wrote in many commits, compacted, then archived on


def produce(kafka, topic: str, n: int, start: int, partitions: int = 3) -> None:
    p = kafka.producer()
    for i in range(start, start + n):
        for part in range(partitions):
            key = None if i % 7 == 3 else f"k-{part}-{i}".encode()
            value = None if i % 13 == 4 else (f"v-{part}-{i}-" * (i % 5 + 1)).encode()
            headers = [("h", b"1"), ("h", None)] if i % 3 == 0 else []
            p.produce(topic, key=key, value=value, partition=part, headers=headers,
                      timestamp=1_767_225_600_000 + i * 1000 + part)
    assert p.flush(30) == 0


def topic_records(kafka, topic: str) -> list[dict]:
    out = [{"partition": r["partition"], "offset": r["offset"], "timestamp": r["timestamp"], "key": r["key"],
            "value": r["value"], "headers": [(k, v) for k, v in r["headers"]]} for r in kafka.consume_all(topic)]
    return sorted(out, key=lambda r: (r["partition"], r["offset"]))


def without_ts_type(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "timestamp_type"} for r in records]


def test_archive_many_commits_compact_then_archive_resumes(thaw, kafka, tmp_path):
    wh = str(tmp_path / "wh")
    os.makedirs(wh)
    uri = fixtures.catalog_uri(wh)
    fixtures.open_catalog(wh).create_namespace_if_not_exists("ns")  # the catalog database (pyiceberg's schema)
    topic = f"maint-{os.urandom(4).hex()}"
    kafka.create_topic(topic, 3)
    name = "ns.archived"
    runs = 6
    for k in range(runs):  # each run archives what is new: one commit of one small file per partition
        produce(kafka, topic, 10, start=10 * k)
        args = ["archive", "--brokers", kafka.bootstrap, "--topic", topic, "--catalog", uri, "--table", name,
                "--quiet"]
        thaw.ok(*args, *(["--create", "--warehouse", wh] if k == 0 else []))
    cat = fixtures.open_catalog(wh)
    t = cat.load_table(name)
    assert len(t.metadata.snapshots) == runs
    assert len(live_data_files(cat, name)) == 3 * runs
    want = topic_records(kafka, topic)
    assert without_ts_type(thaw_records(thaw, wh, name)) == want
    offsets_before = t.current_snapshot().summary.additional_properties["thaw.archive.next-offsets"]

    out = maintain(thaw, wh, name, "--compact", "--expire-snapshots-older-than", "0s")
    assert out["compaction"]["files_rewritten"] == 3 * runs and out["compaction"]["files_written"] == 3, out
    assert out["expire"]["snapshots_expired"] == runs, out  # every archive commit; the compaction is current
    t = cat.load_table(name)
    assert len(live_data_files(cat, name)) == 3
    assert t.current_snapshot().summary.additional_properties["thaw.archive.next-offsets"] == offsets_before
    assert without_ts_type(thaw_records(thaw, wh, name)) == want
    assert len(pyiceberg_rows(cat, name)) == len(want)

    # The archive resumes from the offsets the replace snapshot carried: nothing twice, nothing missing.
    produce(kafka, topic, 10, start=10 * runs)
    thaw.ok("archive", "--brokers", kafka.bootstrap, "--topic", topic, "--catalog", uri, "--table", name, "--quiet")
    want = topic_records(kafka, topic)
    assert without_ts_type(thaw_records(thaw, wh, name)) == want
    assert len(pyiceberg_rows(cat, name)) == len(want) == 3 * 10 * (runs + 1)


def test_compaction_racing_appends_loses_and_duplicates_nothing(thaw, tmp_path):
    """pyiceberg appends new offsets while the compaction runs: whichever commits first, the other reloads
    (the compaction re-checks its inputs and rebuilds its manifests on the new parent); every record is
    there exactly once afterwards and the next offsets are those of the latest append."""
    import threading
    wh, cat, name, want = build(tmp_path, appends=40)
    extra = fixtures.edge_case_records(PARTITIONS, 8, seed=12, start_offsets={0: 10_000, 1: 10_000, 2: 10_000})
    parts = fixtures.chunks(extra, 8)
    done = threading.Event()

    def appender():
        c = fixtures.open_catalog(wh)
        for k, part in enumerate(parts):
            while True:
                t = c.load_table(name)
                try:
                    t.append(pa.Table.from_pylist([fixtures.canonical_row(r) for r in part],
                                                  schema=schema_to_pyarrow(t.schema())),
                             snapshot_properties={"thaw.archive.next-offsets": json.dumps({TOPIC: {"0": k}}),
                                                  "thaw.archive.writer": "racer"})
                    break
                except Exception as e:  # CommitFailedException: the compaction won; reload and retry
                    assert "CommitFailed" in type(e).__name__ or "conflict" in str(e).lower(), e
        done.set()

    th = threading.Thread(target=appender)
    th.start()
    p = thaw("maintain", "--catalog", fixtures.catalog_uri(wh), "--table", name, "--compact", "--json", "--verbose")
    th.join(120)
    assert done.is_set()
    # Either the compaction got in (maybe after conflicts: it reloads and re-applies), or it lost every one of
    # its 5 attempts to the appender and says so, having changed nothing.
    assert p.returncode in (0, 1), p.stderr.decode()
    if p.returncode == 1:
        assert b"lost 5 commit races in a row" in p.stderr and b"nothing changed" in p.stderr, p.stderr.decode()
        out = {"commits": 0}
    else:
        out = json.loads(p.stdout)
    # No manifest of a lost attempt is left behind (they are named <commit-uuid>-a<attempt>-m<n>.avro).
    t = cat.load_table(name)
    referenced = {local(m.manifest_path) for s in t.metadata.snapshots for m in s.manifests(t.io)}
    ours = {str(f) for f in Path(local(t.location()), "metadata").glob("*-a*-m*.avro")}
    assert ours <= referenced, sorted(ours - referenced)
    all_records = sorted(want + fixtures.expected_view(extra), key=lambda r: (r["partition"], r["offset"]))
    assert thaw_records(thaw, wh, name) == all_records
    assert len(pyiceberg_rows(cat, name)) == len(all_records)
    t = cat.load_table(name)
    # The newest snapshot's offsets are the last append's, whether it or the compaction came last.
    assert json.loads(t.current_snapshot().summary.additional_properties["thaw.archive.next-offsets"]) == \
        {TOPIC: {"0": len(parts) - 1}}
    if out["commits"]:
        assert len(live_data_files(cat, name)) < 40 * len(PARTITIONS) + len(parts) * len(PARTITIONS)


# ---------------------------------------------------------------------------
# Deletes, format v3 row lineage, several topics, REST + S3, SIGINT

JAVA_RUN = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "java" / "run.sh"


def row_lineage(metadata_location: str) -> dict[tuple, tuple]:
    """(topic, partition, offset) -> (_row_id, _last_updated_sequence_number) of every row stored in the
    current snapshot's data files (rows a delete file hides included), by the spec's rules: the row's own
    column values, else inherited -- the file's first_row_id (itself inherited from the manifest's) plus
    the row's position, and the file's data sequence number. Manifests are read with DuckDB's read_avro,
    data files with pyarrow: nothing of Thaw's."""
    md = json.load(open(local(metadata_location)))
    snap = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    con = iceberg_readers.duckdb_connect()
    out: dict[tuple, tuple] = {}
    try:
        manifests = con.execute("SELECT manifest_path, content, sequence_number, first_row_id FROM read_avro(?)",
                                [local(snap["manifest-list"])]).fetchall()
        for path, content, seq, first in manifests:
            if content != 0:
                continue
            next_id = first
            entries = con.execute("SELECT status, sequence_number, data_file.file_path, data_file.record_count, "
                                  "data_file.first_row_id FROM read_avro(?)", [local(path)]).fetchall()
            for status, data_seq, file_path, count, first_row_id in entries:
                if first_row_id is None and next_id is not None:
                    first_row_id, next_id = next_id, next_id + count
                if status == 2:  # DELETED
                    continue
                data_seq = seq if data_seq is None else data_seq  # ADDED entries inherit
                t = pq.read_table(local(file_path))
                col = lambda n: t.column(n).to_pylist() if n in t.column_names else [None] * t.num_rows
                for pos, (topic, part, off, rid, lus) in enumerate(zip(
                        col("kafka_topic"), col("kafka_partition"), col("kafka_offset"), col("_row_id"),
                        col("_last_updated_sequence_number"))):
                    assert first_row_id is not None or rid is not None, file_path
                    out[(topic, part, off)] = (rid if rid is not None else first_row_id + pos,
                                               lus if lus is not None else data_seq)
    finally:
        con.close()
    return out


def java_record(r: dict) -> dict:
    """A record line of the Java oracle (bytes as base64) with its bytes decoded, as thaw_record."""
    b = lambda v: None if v is None else base64.b64decode(v, validate=True)  # noqa: E731
    return {**r, "key": b(r["key"]), "value": b(r["value"]),
            "headers": [(h["key"], b(h["value"])) for h in r["headers"]]}


def java_oracle(catalog_db: str, wh: str, tables: list[str]) -> dict[str, list[dict]]:
    """Iceberg Java's own read of the tables (every delete applied), each record as thaw_record gives it."""
    p = subprocess.run([str(JAVA_RUN), "oracle", catalog_db, wh, ",".join(tables)], capture_output=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    out: dict[str, list[dict]] = {}
    current = None
    for line in p.stdout.decode().splitlines():
        if line.startswith("# "):
            current = out.setdefault(line[2:], [])
        elif line.strip():
            current.append(java_record(json.loads(line)))
    return out


def java_metadata_location(catalog_db: str, table: str) -> str:
    con = sqlite3.connect(catalog_db)
    try:
        ns, name = table.split(".")
        return con.execute("SELECT metadata_location FROM iceberg_tables WHERE table_namespace=? AND table_name=?",
                           (ns, name)).fetchone()[0]
    finally:
        con.close()


def test_compact_applies_position_equality_and_dv_deletes_keeping_row_lineage(thaw, tmp_path):
    """Iceberg Java writes canonical tables with a position delete file (v2), equality deletes (v2, and a
    later re-insert they must not hide) and deletion vectors (v3, native row lineage). Compaction rewrites
    the files with the deletes applied and drops the delete files that then name no live file; Thaw and
    Iceberg Java read exactly what they read before, and every v3 row keeps its _row_id and
    _last_updated_sequence_number."""
    wh = tmp_path / "java_wh"
    wh.mkdir()
    p = subprocess.run([str(JAVA_RUN), "write", str(wh)], capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    db = str(wh / "java_catalog.db")
    args = ["--catalog", f"sqlite:///{db}"]
    tables = ["ns.pos_deletes", "ns.eq_deletes", "ns.dv_deletes"]

    def records(table):
        out = thaw.ok("inspect", *args, "--table", table, "--records", "--format", "json").stdout.decode()
        return [json.loads(line) for line in out.splitlines()]

    def stats(table):
        return json.loads(thaw.ok("inspect", *args, "--table", table, "--json").stdout)

    before = {t: records(t) for t in tables}
    before_stats = {t: stats(t) for t in tables}
    lineage_before = row_lineage(java_metadata_location(db, "ns.dv_deletes"))
    outs = {}
    for t in tables:
        out = json.loads(thaw.ok("maintain", *args, "--table", t, "--compact", "--target-file-size", "1MiB",
                                 "--json").stdout)
        assert out["commits"] == 1, (t, out)
        outs[t] = out
    # pos_deletes: both partitions' two files rewritten; the position delete file named only a rewritten
    # file: removed. dv_deletes: the same with two deletion vectors. eq_deletes: partition 0's re-insert
    # overlaps its other files (left alone); partition 1's pair is rewritten, and its equality delete
    # (newer than the pair) still applies to the new file by sequence number: kept, as Java keeps it.
    assert outs["ns.pos_deletes"]["compaction"]["files_rewritten"] == 4, outs
    assert outs["ns.pos_deletes"]["compaction"]["delete_files_removed"] == 1, outs
    assert outs["ns.dv_deletes"]["compaction"]["files_rewritten"] == 4, outs
    assert outs["ns.dv_deletes"]["compaction"]["delete_files_removed"] == 2, outs
    assert outs["ns.eq_deletes"]["compaction"]["files_rewritten"] == 2, outs
    assert outs["ns.eq_deletes"]["compaction"]["delete_files_removed"] == 0, outs
    for t in ("ns.pos_deletes", "ns.dv_deletes"):
        assert outs[t]["compaction"]["records_rewritten"] == 36, outs  # 40 written, 4 deleted
        s = stats(t)
        assert s["data_files"] == 2 < before_stats[t]["data_files"] == 4, s
        assert s["delete_files"] == 0 < before_stats[t]["delete_files"], s

    oracle = java_oracle(db, str(wh), tables)
    for t in tables:
        assert records(t) == before[t], t
        assert oracle[t] == [thaw_record(r) for r in before[t]], t

    # v3: every row still stored has the lineage it had; the rows the DVs deleted are gone.
    lineage_after = row_lineage(java_metadata_location(db, "ns.dv_deletes"))
    live = {(None, r["partition"], r["offset"]) for r in before["ns.dv_deletes"]}
    assert set(lineage_after) == live
    assert {k: lineage_before[k] for k in live} == lineage_after
    # The replace snapshot keeps the spec's sequence-number rules: new files carry their inputs' largest
    # data sequence number, not the replace's.
    for t, inputs_max in (("ns.dv_deletes", 2), ("ns.pos_deletes", 2), ("ns.eq_deletes", 2)):
        md = json.load(open(local(java_metadata_location(db, t))))
        snap = next(x for x in md["snapshots"] if x["snapshot-id"] == md["current-snapshot-id"])
        con = iceberg_readers.duckdb_connect()
        try:
            lists = con.execute("SELECT manifest_path, sequence_number, min_sequence_number FROM read_avro(?) "
                                "WHERE content = 0 AND added_snapshot_id = ? AND added_files_count > 0",
                                [local(snap["manifest-list"]), snap["snapshot-id"]]).fetchall()
            assert len(lists) == 1, (t, lists)
            path, list_seq, min_seq = lists[0]
            assert list_seq == snap["sequence-number"] == md["last-sequence-number"], t
            assert min_seq == inputs_max, t
            entries = con.execute("SELECT status, sequence_number, file_sequence_number FROM read_avro(?)",
                                  [local(path)]).fetchall()
        finally:
            con.close()
        # ADDED, data sequence number written (the inputs' largest), file sequence number inherited.
        assert entries and all(e == (1, inputs_max, None) for e in entries), (t, entries)
    assert {seq for (_, seq) in lineage_after.values()} <= {1, 2}


def test_compact_a_several_topic_v3_table_by_topic_and_partition(thaw, kafka, tmp_path):
    """`thaw archive` writes two topics into one format v3 table (a kafka_topic column and partition
    field), one commit per run: compaction groups by (topic, partition) -- never two topics in a file --
    and pyiceberg reads the same rows, each row keeping its row lineage."""
    wh = str(tmp_path / "wh")
    os.makedirs(wh)
    uri = fixtures.catalog_uri(wh)
    fixtures.open_catalog(wh).create_namespace_if_not_exists("ns")
    a, b = f"ma-{uuid.uuid4().hex[:8]}", f"mb-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(a, 2)
    kafka.create_topic(b, 2)
    name = "ns.multi"
    runs = 3
    for k in range(runs):
        produce(kafka, a, 5, start=5 * k, partitions=2)
        produce(kafka, b, 5, start=5 * k, partitions=2)
        thaw.ok("archive", "--brokers", kafka.bootstrap, "--topic", f"{a},{b}", "--catalog", uri, "--table", name,
                "--quiet", *(["--create", "--warehouse", wh, "--format-version", "3"] if k == 0 else []))
    cat = fixtures.open_catalog(wh)
    t = cat.load_table(name)
    assert t.format_version == 3
    key = lambda r: (r["kafka_topic"], r["kafka_partition"], r["kafka_offset"])
    rows = lambda: sorted(({k: v for k, v in r.items()} for r in cat.load_table(name).scan().to_arrow().to_pylist()),
                          key=key)
    before = rows()
    assert len(before) == 2 * 2 * 5 * runs
    assert len(live_data_files(cat, name)) == 4 * runs
    lineage_before = row_lineage(t.metadata_location)
    assert len(lineage_before) == len(before)
    # archive names the sort order its files are in (the table's order 1: partition, offset).
    assert {task.file.sort_order_id for task in t.scan().plan_files()} == {1}

    out = maintain(thaw, wh, name, "--compact")
    assert out["commits"] == 1 and out["compaction"]["files_rewritten"] == 4 * runs, out
    assert out["compaction"]["files_written"] == 4, out
    t = cat.load_table(name)
    assert rows() == before
    files = live_data_files(cat, name)
    assert len(files) == 4
    for f in files:  # one topic and one partition per file, offsets ascending, the archive's sort order
        col = pq.read_table(local(f), columns=["kafka_topic", "kafka_partition", "kafka_offset"])
        assert len(set(col.column("kafka_topic").to_pylist())) == 1, f
        assert len(set(col.column("kafka_partition").to_pylist())) == 1, f
        offsets = col.column("kafka_offset").to_pylist()
        assert offsets == sorted(set(offsets)) and len(offsets) == 5 * runs, f
    assert {task.file.sort_order_id for task in t.scan().plan_files()} == {1}
    assert row_lineage(t.metadata_location) == lineage_before
    # The new manifest's Avro header has what Iceberg Java's ManifestWriter puts there.
    md = json.load(open(local(t.metadata_location)))
    snap = next(x for x in md["snapshots"] if x["snapshot-id"] == md["current-snapshot-id"])
    con = iceberg_readers.duckdb_connect()
    try:
        added = [m for (m,) in con.execute("SELECT manifest_path FROM read_avro(?) WHERE content = 0 AND "
                                           "added_files_count > 0", [local(snap["manifest-list"])]).fetchall()]
    finally:
        con.close()
    assert added
    h = avro_header(added[0])
    assert h["format-version"] == "3" and h["content"] == "data", h
    assert h["partition-spec-id"] == "0" and h["schema-id"] == str(md["current-schema-id"]), h
    spec = next(x for x in md["partition-specs"] if x["spec-id"] == 0)
    assert json.loads(h["partition-spec"]) == spec["fields"], h
    schema = next(x for x in md["schemas"] if x["schema-id"] == md["current-schema-id"])
    assert json.loads(h["schema"])["fields"] == schema["fields"], h
    assert "avro.schema" in h and "avro.codec" in h


def avro_header(path: str) -> dict[str, str]:
    """The metadata map of an Avro object container file's header (spec: magic, then map<bytes>)."""
    data = open(local(path), "rb").read()
    assert data[:4] == b"Obj\x01", path
    pos = 4

    def varlong():
        nonlocal pos
        n, pos = fixtures.zigzag_varint(data, pos)
        return n

    def blob():
        nonlocal pos
        n = varlong()
        pos += n
        return data[pos - n:pos]

    out = {}
    while (count := varlong()) != 0:
        if count < 0:
            count = -count
            varlong()  # block size in bytes
        for _ in range(count):
            k = blob().decode()
            out[k] = blob().decode()
    return out


def rest_args(rest_catalog) -> list[str]:
    args = ["--catalog", rest_catalog.uri]
    for k, v in rest_catalog.client_props().items():
        args += ["--catalog-property", f"{k}={v}"]
    return args


def test_maintain_through_the_rest_catalog_into_s3(thaw, rest_catalog):
    cat = rest_catalog.pyiceberg()
    name = f"maint_{uuid.uuid4().hex[:8]}.t"
    _, _, _, want = build_in(cat, rest_catalog.warehouse, name, appends=4, partitions=[0, 1])
    before_rows = pyiceberg_rows(cat, name)
    assert len(live_data_files(cat, name)) == 8
    p = thaw.ok("maintain", *rest_args(rest_catalog), "--table", name, "--compact", "--expire-snapshots-older-than",
                "0s", "--json")
    out = json.loads(p.stdout)
    assert out["compaction"]["files_rewritten"] == 8 and out["compaction"]["files_written"] == 2, out
    assert out["expire"]["snapshots_expired"] == 4 and out["commits"] == 2, out
    t = cat.load_table(name)
    assert t.location().startswith("s3://")
    assert len(live_data_files(cat, name)) == 2 and len(t.metadata.snapshots) == 1
    assert pyiceberg_rows(cat, name) == before_rows
    records = [json.loads(line) for line in thaw.ok("inspect", *rest_args(rest_catalog), "--table", name, "--records",
                                                      "--format", "json").stdout.decode().splitlines()]
    assert [(r["partition"], r["offset"]) for r in records] == [(r["partition"], r["offset"]) for r in want]


def test_sigint_before_the_commit_leaves_the_table_as_it_was(thaw, rest_catalog):
    """SIGINT while maintain waits on a slow catalog: compaction stops before its commit, deletes what it
    wrote, and the command exits 130 as archive's second signal does; the table is unchanged and valid."""
    from fault_proxy import FaultProxy
    cat = rest_catalog.pyiceberg()
    name = f"maint_{uuid.uuid4().hex[:8]}.t"
    build_in(cat, rest_catalog.warehouse, name, appends=3, partitions=[0, 1])
    t = cat.load_table(name)
    snapshot = t.current_snapshot().snapshot_id
    before_rows = pyiceberg_rows(cat, name)
    proxy = FaultProxy(rest_catalog.uri, latency_ms=800).start()
    try:
        args = ["--catalog", proxy.url]
        for k, v in rest_catalog.client_props().items():
            args += ["--catalog-property", f"{k}={v}"]
        proc = subprocess.Popen([str(thaw.binary), "maintain", *args, "--table", name, "--compact", "--json"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # The signal lands while the table load waits on the catalog (the command's handler is set by
        # then), before any file is written.
        deadline = time.monotonic() + 30
        while proxy.requests_matching(f"/tables/{name.split('.')[1]}", "GET") == 0 and proc.poll() is None:
            assert time.monotonic() < deadline, "maintain never loaded the table"
            time.sleep(0.02)
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proxy.stop()
    assert proc.returncode == 130, (proc.returncode, stderr.decode())
    assert b"interrupted" in stderr, stderr.decode()
    out = json.loads(stdout)
    assert out["interrupted"] is True and out["commits"] == 0, out
    assert any("interrupted before its commit" in n for n in out["notes"]), out
    t = cat.load_table(name)
    assert t.current_snapshot().snapshot_id == snapshot
    assert pyiceberg_rows(cat, name) == before_rows
    # Nothing half-written left behind: every data file under the table is one the table references.
    store = rest_catalog.store
    prefix = t.location().removeprefix(f"s3://{store.bucket}/")
    stored = {f"s3://{store.bucket}/{k}" for k in store.list_keys(prefix + "/data/")}
    assert stored == set(live_data_files(cat, name))
    # And a run left alone compacts.
    out = json.loads(thaw.ok("maintain", *rest_args(rest_catalog), "--table", name, "--compact", "--json").stdout)
    assert out["commits"] == 1 and out["compaction"]["files_written"] == 2, out
    assert pyiceberg_rows(cat, name) == before_rows


def test_an_orphan_window_under_an_hour_needs_force(thaw, tmp_path):
    """Issue 20: --orphan-older-than 0s was accepted beside a running archiver, whose uncommitted files it deletes."""
    wh, cat, name, want = build(tmp_path, appends=2)
    root = Path(local(cat.load_table(name).location()))
    in_flight = root / "data" / "kafka_partition=0" / "00000-0-in-flight.parquet"
    in_flight.write_bytes(b"an archiver's file not committed yet")
    for window in ("0s", "59m", "3599s"):
        p = thaw("maintain", *catalog_args(wh), "--table", name, "--remove-orphans", "--orphan-older-than", window)
        err = p.stderr.decode()
        assert p.returncode == 2, (window, p.returncode, err)
        assert f"--orphan-older-than {window} is under an hour" in err and "--force" in err, err
        assert in_flight.exists()
    # --dry-run only lists; 1h is the smallest window taken without --force.
    dry = maintain(thaw, wh, name, "--remove-orphans", "--orphan-older-than", "0s", "--dry-run")
    assert str(in_flight) in [local(f) for f in dry["orphans"]["files"]], dry
    assert maintain(thaw, wh, name, "--remove-orphans", "--orphan-older-than", "1h")["orphans"]["deleted"] == 0
    out = maintain(thaw, wh, name, "--remove-orphans", "--orphan-older-than", "0s", "--force")
    assert out["orphans"]["deleted"] >= 1 and not in_flight.exists(), out
    assert thaw_records(thaw, wh, name) == want


def test_rewrite_manifests_merges_one_manifest_per_commit(thaw, tmp_path):
    """Issue 20: nothing rewrote manifests, so a table appended at short intervals read one manifest per commit
    forever. --rewrite-manifests commits a replace snapshot whose data manifests are merged (RewriteManifests);
    no record, offset or total changes, and every engine still reads the table."""
    wh, cat, name, want = build(tmp_path, appends=6)
    maintain(thaw, wh, name, "--compact", "--target-file-size", "1KiB")  # manifests with DELETED entries too
    t = cat.load_table(name)
    before = len(t.current_snapshot().manifests(t.io))
    assert before >= 6
    dry = maintain(thaw, wh, name, "--rewrite-manifests", "--dry-run")
    assert dry["manifests"]["before"] == before and dry["manifests"]["after"] == 1 and dry["commits"] == 0, dry
    out = maintain(thaw, wh, name, "--rewrite-manifests")
    assert out["commits"] == 1 and out["manifests"] == {"before": before, "after": 1}, out
    t = cat.load_table(name)
    s = t.current_snapshot()
    assert s.summary.operation.value == "replace" and len(s.manifests(t.io)) == 1
    assert s.summary.get("thaw.archive.next-offsets") == NEXT_OFFSETS
    parent = t.snapshot_by_id(s.parent_snapshot_id)
    assert s.summary.get("total-records") == parent.summary.get("total-records")
    assert thaw_records(thaw, wh, name) == want
    assert len(pyiceberg_rows(cat, name)) == len(want)
    again = maintain(thaw, wh, name, "--rewrite-manifests")
    assert again["commits"] == 0 and "rewrite-manifests: nothing to merge" in again["notes"], again


def test_expiry_keeps_what_a_following_replay_job_still_needs(thaw, kafka, tmp_path):
    """A replay job tags the snapshot it has replayed up to (thaw-replay/JOB); expiry keeps the snapshots after it
    that a follower still has to read, so the job resumes instead of failing on a gap. A job that completes
    removes its tag."""
    wh = str(tmp_path / "wh")
    name = "ns.live"
    table = fixtures.build_small_canonical(wh, name)
    uri = fixtures.catalog_uri(wh)
    cat = fixtures.open_catalog(wh)
    topic, job = f"maint-follow-{uuid.uuid4().hex[:6]}", f"follower-{uuid.uuid4().hex[:6]}"
    tag = f"thaw-replay/{job}"
    kafka.create_topic(topic, 2)
    follow = [str(thaw.binary), "replay", "--catalog", uri, "--table", name, "--brokers", kafka.bootstrap,
              "--topic", topic, "--job", job, "--follow", "--poll-interval", "300ms", "--quiet"]

    def wait_records(n: int, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        got = 0
        while time.monotonic() < deadline:
            try:
                got = len(kafka.consume_all(topic))
            except Exception:  # leadership settling right after topic creation
                got = 0
            if got >= n:
                return got
            time.sleep(0.3)
        return got

    def stop(proc) -> str:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + signal.SIGTERM, err.decode()[-3000:]
        return err.decode()

    proc = subprocess.Popen(follow, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_records(24) == 24
    finally:
        err = stop(proc)
    replayed_to = cat.load_table(name).current_snapshot().snapshot_id
    refs = cat.load_table(name).metadata.refs
    assert tag in refs and refs[tag].snapshot_id == replayed_to and refs[tag].snapshot_ref_type.value == "tag", (
        refs, err)

    # Three appends the job has not replayed, then an expiry of everything old.
    for k in range(3):
        fixtures.append_rows(table, [fixtures.canonical_row(fixtures.rec(p, 9000 + 10 * k + i, 1_700_000_000_000 + i,
                                                                         b"k", f"late-{k}-{p}-{i}".encode(), []))
                                     for p in (0, 1) for i in range(2)])
        table = table.refresh()
    before = {s.snapshot_id for s in cat.load_table(name).metadata.snapshots}
    out = maintain(thaw, wh, name, "--expire-snapshots-older-than", "0s")
    assert any(f"kept for replay job '{job}'" in n for n in out["notes"]), out
    after = {s.snapshot_id for s in cat.load_table(name).metadata.snapshots}
    newer = [s.snapshot_id for s in table.metadata.snapshots if s.sequence_number >
             table.metadata.snapshot_by_id(replayed_to).sequence_number]
    assert len(newer) == 3 and set(newer) <= after and replayed_to in after, (out, before, after)
    assert after < before, out  # what was before the tag went

    # The job resumes over the kept snapshots: the 12 late records, once.
    proc = subprocess.Popen(follow, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_records(36) == 36
        time.sleep(1.0)
    finally:
        err = stop(proc)
    values = [r["value"] for r in kafka.consume_all(topic)]
    late = [v for v in values if v and v.startswith(b"late-")]
    assert len(values) == 36 and len(late) == 12 and len(set(late)) == 12, err
    assert cat.load_table(name).metadata.refs[tag].snapshot_id == table.current_snapshot().snapshot_id

    # A job that completes needs nothing any more: its tag goes.
    once = f"once-{uuid.uuid4().hex[:6]}"
    thaw.ok("replay", "--catalog", uri, "--table", name, "--brokers", kafka.bootstrap, "--topic", topic + "-once",
            "--create-topic", "--job", once, "--quiet")
    assert f"thaw-replay/{once}" not in cat.load_table(name).metadata.refs
