"""`thaw replay --follow` against real writers and a real Kafka broker.

Every append a writer commits while a replay follows the table must arrive
exactly once, in offset order per partition, whatever the writer did to the
table's manifests in between: pyiceberg and Iceberg Java merge manifests (the
earlier appends' entries become EXISTING), Iceberg Java compacts files (a
`replace` snapshot removes the appended files). Commits are made while the
follower is stopped (SIGSTOP), so they all land between two of its polls;
Java commits of one pause run in one JVM (`then`) to keep the pause short.
The target topic is read back with read_committed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pytest

import fixtures

REPO = Path(__file__).resolve().parents[2]
JAVA_RUN = REPO / "tests" / "fixtures" / "java" / "run.sh"
MERGE_PROPS = {"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "2"}


def link(rec: dict) -> dict:
    return {k: v for k, v in rec["headers"] if k.startswith("thaw.source.")}


class Follower:
    """A running `thaw replay --follow --exactly-once` job into a fresh topic."""

    def __init__(self, thaw, kafka, table_args: list[str], partitions: int = 2, *extra: str):
        self.kafka = kafka
        self.topic = f"follow-{uuid.uuid4().hex[:10]}"
        self.job = f"job-{uuid.uuid4().hex[:8]}"
        # The records carry old CreateTimes: keep them from time-based retention.
        kafka.create_topic(self.topic, partitions, config={"retention.ms": "-1"})
        self.proc = subprocess.Popen(
            [str(thaw.binary), "replay", *table_args, "--brokers", kafka.bootstrap, "--topic", self.topic,
             "--job", self.job, "--follow", "--poll-interval", "300ms", "--quiet", "--exactly-once", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.err = b""

    def records(self) -> list[dict]:
        for _ in range(20):
            try:
                return self.kafka.consume_all(self.topic)
            except Exception:  # leadership settling right after topic creation
                time.sleep(0.3)
        return self.kafka.consume_all(self.topic)

    def wait_for(self, n: int, timeout: float = 90) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.records()
            if len(got) >= n:
                return got
            if self.proc.poll() is not None:
                break
            time.sleep(0.3)
        got = self.records()
        if len(got) < n:
            uncommitted = self.kafka.consume_all(self.topic, "read_uncommitted")
            ends = self.kafka.offsets(self.topic), self.kafka.offsets(self.topic, "read_uncommitted")
            self.stop()
            seen = sorted((int(link(g)["thaw.source.partition"]), int(link(g)["thaw.source.offset"])) for g in got)
            raise AssertionError(f"{len(got)} records in the topic, want {n} (read_uncommitted: {len(uncommitted)}; "
                                 f"offsets committed/uncommitted {ends}; source offsets {seen}); replay exit "
                                 f"{self.proc.returncode}, stderr: {self.err.decode()[-2000:]}")
        return got

    @contextmanager
    def paused(self):
        """No poll happens inside: every commit made here is seen by one poll."""
        self.proc.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            self.proc.send_signal(signal.SIGCONT)

    def settle(self, n: int) -> list[dict]:
        """Waits for n records, then a few more polls: no more may arrive."""
        self.wait_for(n)
        time.sleep(1.5)
        return self.records()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGTERM)
        _, self.err = self.proc.communicate(timeout=60)
        return self.proc.returncode


@pytest.fixture
def followers():
    started: list[Follower] = []
    yield started
    for f in started:
        if f.proc.poll() is None:
            f.stop()


def assert_each_once_in_order(got: list[dict], want: dict[int, list[tuple[int, bytes]]]):
    """`want`: source partition -> [(offset, value)] in offset order. Per target
    partition (= source partition), the records are exactly those, in that order."""
    by_part: dict[int, list[tuple[int, bytes]]] = {}
    for g in got:  # consume_all sorts by (partition, offset)
        lk = link(g)
        src = int(lk["thaw.source.partition"])
        assert g["partition"] == src
        by_part.setdefault(src, []).append((int(lk["thaw.source.offset"]), g["value"]))
    for p in sorted(set(by_part) | set(want)):
        offs = [o for o, _ in by_part.get(p, [])]
        lost = sorted(set(o for o, _ in want.get(p, [])) - set(offs))
        twice = sorted(o for o in set(offs) if offs.count(o) > 1)
        assert not lost and not twice, f"partition {p}: lost offsets {lost}, replayed twice {twice} (got {offs})"
        assert by_part.get(p, []) == want.get(p, []), f"partition {p}: order or values differ"


# ---------------------------------------------------------------------------
# pyiceberg


def py_rows(partition: int, lo: int, hi: int, tag: str = "v") -> list[dict]:
    return [fixtures.canonical_row(fixtures.rec(partition, o, fixtures.BASE_TS_MS + o, f"k{o}".encode(),
                                                f"{tag}-{partition}-{o}".encode(), [("h", b"1")]))
            for o in range(lo, hi)]


def py_table(tmp_path, name: str, props: dict[str, str]):
    wh = str(tmp_path / "wh")
    os.makedirs(wh, exist_ok=True)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists("ns")
    t = fixtures.create(cat, wh, name, fixtures.canonical_schema(), spec=fixtures.CANONICAL_SPEC,
                        properties=dict(fixtures.thaw_props(name), **props))
    return t, ["--catalog", fixtures.catalog_uri(wh), "--table", name]


def existing_entries(table) -> int:
    """Data files the current snapshot lists as EXISTING (carried over by a merge)."""
    snap = table.current_snapshot()
    return sum(m.existing_files_count or 0 for m in snap.manifests(table.io) if m.content == 0)


def test_pyiceberg_merged_manifests_several_appends_in_one_poll(thaw, kafka, tmp_path, followers):
    t, args = py_table(tmp_path, "ns.merged", MERGE_PROPS)
    fixtures.append_rows(t, py_rows(0, 0, 5) + py_rows(1, 0, 5))
    f = Follower(thaw, kafka, args)
    followers.append(f)
    f.wait_for(10)
    with f.paused():
        for b in range(1, 6):  # five appends, each merging the manifests before it
            t = t.refresh()
            fixtures.append_rows(t, py_rows(0, 5 * b, 5 * b + 5) + py_rows(1, 5 * b, 5 * b + 5))
        t = t.refresh()
        assert existing_entries(t) >= 4, "pyiceberg did not merge manifests: the test tests nothing"
    got = f.settle(60)
    want = {p: [(o, f"v-{p}-{o}".encode()) for o in range(30)] for p in (0, 1)}
    assert_each_once_in_order(got, want)
    # A later single append still follows, after merged ones.
    fixtures.append_rows(t.refresh(), py_rows(1, 30, 33))
    got = f.settle(63)
    want[1] += [(o, f"v-1-{o}".encode()) for o in range(30, 33)]
    assert_each_once_in_order(got, want)
    assert f.stop() == 128 + signal.SIGTERM, f.err.decode()


def test_follows_the_selected_branch_not_main(thaw, kafka, tmp_path, followers):
    t, args = py_table(tmp_path, "ns.branched", {})
    fixtures.append_rows(t, py_rows(0, 0, 5))
    t = t.refresh()
    t.manage_snapshots().create_branch(t.current_snapshot().snapshot_id, "mybranch").commit()
    f = Follower(thaw, kafka, args + ["--ref", "mybranch"], 1)
    followers.append(f)
    f.wait_for(5)
    with f.paused():
        t = t.refresh()
        t.append(pa.Table.from_pylist(py_rows(0, 5, 10, "branch"), schema=arrow_schema(t)), branch="mybranch")
        t = t.refresh()
        fixtures.append_rows(t, py_rows(0, 5, 12, "main"))
    got = f.settle(10)
    want = {0: [(o, f"v-0-{o}".encode()) for o in range(5)] + [(o, f"branch-0-{o}".encode()) for o in range(5, 10)]}
    assert_each_once_in_order(got, want)
    snaps = {int(link(g)["thaw.source.snapshot"]) for g in got[5:]}
    assert snaps == {t.refresh().metadata.refs["mybranch"].snapshot_id}
    assert f.stop() == 128 + signal.SIGTERM, f.err.decode()


def arrow_schema(table):
    from pyiceberg.io.pyarrow import schema_to_pyarrow
    return schema_to_pyarrow(table.schema())


def test_expired_append_snapshot_stops_with_a_clear_error(thaw, kafka, tmp_path, followers):
    t, args = py_table(tmp_path, "ns.expired", {})
    fixtures.append_rows(t, py_rows(0, 0, 3))
    last = t.refresh().current_snapshot().snapshot_id
    f = Follower(thaw, kafka, args, 1)
    followers.append(f)
    f.wait_for(3)
    with f.paused():
        t = t.refresh()
        fixtures.append_rows(t, py_rows(0, 3, 6))
        lost = t.refresh().current_snapshot().snapshot_id
        t = t.refresh()
        fixtures.append_rows(t, py_rows(0, 6, 9))
        t = t.refresh()
        t.maintenance.expire_snapshots().by_id(lost).commit()
        assert t.refresh().metadata.snapshot_by_id(lost) is None
    f.proc.wait(timeout=60)
    _, err = f.proc.communicate(timeout=60)
    assert f.proc.returncode == 1, err.decode()
    assert b"cannot continue without loss" in err and str(last).encode() in err, err.decode()
    # Nothing after the gap was replayed either.
    assert len(f.records()) == 3


def test_expired_last_replayed_snapshot_is_no_gap(thaw, kafka, tmp_path, followers):
    # Expiring the snapshot a follower last replayed loses nothing when its
    # child is still there (pyiceberg clears the child's parent link). That
    # takes dropping the follower's thaw-replay tag first, which the job sets
    # again where it moves next.
    t, args = py_table(tmp_path, "ns.expired_last", {})
    fixtures.append_rows(t, py_rows(0, 0, 3))
    last = t.refresh().current_snapshot().snapshot_id
    f = Follower(thaw, kafka, args, 1)
    followers.append(f)
    f.wait_for(3)
    tag = f"thaw-replay/{f.job}"
    deadline = time.monotonic() + 20
    while tag not in t.refresh().metadata.refs and time.monotonic() < deadline:
        time.sleep(0.2)
    assert t.refresh().metadata.refs[tag].snapshot_id == last
    with f.paused():
        fixtures.append_rows(t.refresh(), py_rows(0, 3, 6))
        t = t.refresh()
        # The job's tag keeps the snapshot it replayed last from any engine's expiry ...
        with pytest.raises(ValueError, match="protected"):
            t.maintenance.expire_snapshots().by_id(last).commit()
        # ... and once the tag is dropped (another engine, a job given up), expiring it still loses nothing.
        t.manage_snapshots().remove_tag(tag).commit()
        t = t.refresh()
        t.maintenance.expire_snapshots().by_id(last).commit()
        assert t.refresh().current_snapshot().parent_snapshot_id is None
    got = f.settle(6)
    assert_each_once_in_order(got, {0: [(o, f"v-0-{o}".encode()) for o in range(6)]})
    fixtures.append_rows(t.refresh(), py_rows(0, 6, 8))
    got = f.settle(8)
    assert_each_once_in_order(got, {0: [(o, f"v-0-{o}".encode()) for o in range(8)]})
    assert f.stop() == 128 + signal.SIGTERM, f.err.decode()


def test_metadata_with_follow_is_refused(thaw, kafka, tmp_path):
    t, _ = py_table(tmp_path, "ns.static", {})
    fixtures.append_rows(t, py_rows(0, 0, 2))
    p = thaw("replay", "--metadata", t.refresh().metadata_location.removeprefix("file://"), "--brokers",
             kafka.bootstrap, "--topic", "never-created", "--follow", timeout=30)
    assert p.returncode == 2, p.stderr.decode()
    assert b"--follow with --metadata" in p.stderr and b"--catalog" in p.stderr, p.stderr.decode()


def test_follow_refuses_a_pinned_snapshot_or_a_tag(thaw, kafka, tmp_path):
    t, args = py_table(tmp_path, "ns.pinned", {})
    fixtures.append_rows(t, py_rows(0, 0, 2))
    t = t.refresh()
    snap = t.current_snapshot().snapshot_id
    t.manage_snapshots().create_tag(snap, "v1").commit()
    for extra, words in [(["--snapshot", str(snap)], b"--snapshot/--as-of pin one snapshot"),
                         (["--ref", "v1"], b"is a tag")]:
        p = thaw("replay", *args, *extra, "--brokers", kafka.bootstrap, "--topic", "never-created", "--follow",
                 timeout=30)
        assert p.returncode == 2 and words in p.stderr, (extra, p.stderr.decode())


# ---------------------------------------------------------------------------
# Iceberg Java


def java(*args: str) -> list[dict]:
    p = subprocess.run([str(JAVA_RUN), "follow", *args], capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    return [json.loads(line) for line in p.stdout.decode().splitlines() if line.strip()]


def java_table(tmp_path, name: str):
    wh = tmp_path / "java_wh"
    java("create", str(wh), name)
    return str(wh), ["--catalog", f"sqlite:///{wh}/java_catalog.db", "--table", f"ns.{name}"]


def java_want(ranges: dict[int, range]) -> dict[int, list[tuple[int, bytes | None]]]:
    # WriteDeleteFixtures.record: value v-P-O, null when O % 11 == 10.
    return {p: [(o, None if o % 11 == 10 else f"v-{p}-{o}".encode()) for o in r] for p, r in ranges.items()}


def test_java_merge_appends(thaw, kafka, tmp_path, followers):
    wh, args = java_table(tmp_path, "merged")
    java("append", wh, "merged", "0:0-5", "1:0-5")
    f = Follower(thaw, kafka, args)
    followers.append(f)
    f.wait_for(10)
    with f.paused():
        commits = java("append", wh, "merged", "0:5-10", "1:5-10", "0:10-15", "1:10-15", "0:15-20")
        assert all(c["operation"] == "append" for c in commits)
        assert commits[-1]["existing_files"] >= 4 and commits[-1]["data_manifests"] == 1, commits
    got = f.settle(35)
    assert_each_once_in_order(got, java_want({0: range(20), 1: range(15)}))
    assert f.stop() == 128 + signal.SIGTERM, f.err.decode()


def test_java_compaction_between_polls(thaw, kafka, tmp_path, followers):
    wh, args = java_table(tmp_path, "compacted")
    java("append", wh, "compacted", "0:0-5", "1:0-5")
    f = Follower(thaw, kafka, args)
    followers.append(f)
    f.wait_for(10)
    with f.paused():
        # Two appends, then a replace of every file (replayed or not) by one
        # file per partition: the appended files are gone from the snapshot.
        *_, c = java("append", wh, "compacted", "0:5-10", "1:5-12", "then", "compact")
        assert c["operation"] == "replace" and c["added_files"] == 2 and c["existing_files"] == 0, c
    got = f.settle(22)
    assert_each_once_in_order(got, java_want({0: range(10), 1: range(12)}))
    # After the compaction, appends still follow; the compacted file is never re-emitted.
    java("append", wh, "compacted", "0:10-13")
    got = f.settle(25)
    assert_each_once_in_order(got, java_want({0: range(13), 1: range(12)}))
    err = f.stop()
    assert err == 128 + signal.SIGTERM, f.err.decode()


def test_java_delete_then_compaction_between_polls(thaw, kafka, tmp_path, followers):
    # An append, a position delete of two of its rows, then a compaction that
    # applies the delete and drops the delete file, all between two polls: the
    # deleted rows stay unsent although the head snapshot has no delete file.
    wh, args = java_table(tmp_path, "deleted")
    java("append", wh, "deleted", "0:0-5")
    f = Follower(thaw, kafka, args, 1)
    followers.append(f)
    f.wait_for(5)
    with f.paused():
        _, d, c = java("append", wh, "deleted", "0:5-15", "then", "delete", "0:7", "0:12", "then", "compact")
        assert d["operation"] == "delete" and c["operation"] == "replace", (d, c)
        head = json.loads(thaw.ok("inspect", *args, "--json").stdout)
        assert head["delete_files"] == 0 and head["records"] == 13, head
    got = f.settle(13)
    assert_each_once_in_order(got, java_want({0: [o for o in range(15) if o not in (7, 12)]}))
    assert f.stop() == 128 + signal.SIGTERM, f.err.decode()


def test_a_rollback_stops_follow_with_an_error_not_bad_usage(thaw, kafka, tmp_path, followers):
    """Issue 24: a rollback seen by --follow exited 2, the code for a mistyped command line."""
    t, args = py_table(tmp_path, "ns.rolled", {})
    fixtures.append_rows(t, py_rows(0, 0, 2))
    first = t.refresh().current_snapshot().snapshot_id
    fixtures.append_rows(t.refresh(), py_rows(0, 2, 4))
    f = Follower(thaw, kafka, args)
    followers.append(f)
    f.settle(4)
    with f.paused():
        t.refresh().manage_snapshots().rollback_to_snapshot(first).commit()
        fixtures.append_rows(t.refresh(), py_rows(0, 2, 3, tag="w"))  # history goes on from the rolled-back state
    _, err = f.proc.communicate(timeout=60)
    assert f.proc.returncode == 1, err.decode()
    assert b"is no longer an ancestor" in err and b"start a new --job" in err, err.decode()


def test_from_offset_latest_replays_only_what_is_appended(thaw, kafka, tmp_path, followers):
    """`--follow --from-offset latest` (kcat's -o end): each partition starts at its end when the job starts;
    a partition the table does not hold yet starts at its beginning. A rerun resumes from the job's checkpoint,
    not from the ends of that later moment."""
    t, args = py_table(tmp_path, "ns.latest", {})
    fixtures.append_rows(t, py_rows(0, 0, 5) + py_rows(1, 0, 3))
    f = Follower(thaw, kafka, args + ["--from-offset", "latest"], 3)
    followers.append(f)
    time.sleep(3)  # the job started at the ends: nothing is sent
    assert f.records() == []
    fixtures.append_rows(t.refresh(), py_rows(0, 5, 8) + py_rows(2, 0, 2))
    got = f.settle(5)
    want = {0: [(o, f"v-0-{o}".encode()) for o in range(5, 8)], 2: [(o, f"v-2-{o}".encode()) for o in range(2)]}
    assert_each_once_in_order(got, want)
    assert f.stop() == 128 + signal.SIGTERM, f.err.decode()
    # Appended while it was stopped, then the same command again: the job goes on from its checkpoint.
    fixtures.append_rows(t.refresh(), py_rows(1, 3, 4))
    again = Follower.__new__(Follower)
    again.kafka, again.topic, again.job, again.err = kafka, f.topic, f.job, b""
    again.proc = subprocess.Popen(f.proc.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    followers.append(again)
    got = again.settle(6)
    want[1] = [(3, b"v-1-3")]
    assert_each_once_in_order(got, want)
    assert again.stop() == 128 + signal.SIGTERM, again.err.decode()


def test_from_offset_latest_is_exact_in_files_of_several_partitions(thaw, kafka, tmp_path, followers):
    """An unpartitioned table: one file holds partition 0 up to offset 4 and partition 1 up to offset 99, so its
    statistics bound partition 0 by 99. `latest` must start partition 0 at 5 (its offsets are read), not at 100,
    or the records appended at 5..7 would never be replayed."""
    wh = str(tmp_path / "wh")
    os.makedirs(wh, exist_ok=True)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists("ns")
    t = fixtures.create(cat, wh, "ns.mixed", fixtures.canonical_schema(), properties=fixtures.thaw_props("ns.mixed"))
    args = ["--catalog", fixtures.catalog_uri(wh), "--table", "ns.mixed"]
    fixtures.append_rows(t, py_rows(0, 0, 5) + py_rows(1, 0, 100))
    f = Follower(thaw, kafka, args + ["--from-offset", "latest"], 2)
    followers.append(f)
    time.sleep(3)
    assert f.records() == []
    fixtures.append_rows(t.refresh(), py_rows(0, 5, 8) + py_rows(1, 100, 101))
    got = f.settle(4)
    assert_each_once_in_order(got, {0: [(o, f"v-0-{o}".encode()) for o in range(5, 8)], 1: [(100, b"v-1-100")]})
    assert f.stop() == 128 + signal.SIGTERM, f.err.decode()


def test_from_offset_latest_needs_follow(thaw, tmp_path):
    t, args = py_table(tmp_path, "ns.latest2", {})
    fixtures.append_rows(t, py_rows(0, 0, 5))
    p = thaw("replay", *args, "--brokers", "127.0.0.1:1", "--topic", "x", "--from-offset", "latest", timeout=60)
    assert p.returncode == 2 and b"add --follow" in p.stderr, p.stderr.decode()
