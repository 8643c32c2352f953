"""Crash safety of `thaw archive` on a real broker (issue 10: "a kill -9 at
any moment, then a restart, leaves every offset in the table exactly once";
"a second archiver started on the same table cannot corrupt it").

* kill -9 trials: while records keep arriving (400 more before each run),
  archive runs with a 100 ms commit interval (many commits and files per
  run) and is killed with SIGKILL after a random delay (0.05-1.5 s), until
  24 runs were killed (a run that finishes first must exit 0); every other
  run is `--follow` with a producer going at the same time. Checkpoints in
  between and the end check with pyiceberg that the table holds no
  (partition, offset) twice; after the last kill archive runs
  without a kill until it exits 0, and then the table holds every record of
  the topic exactly once: pyiceberg's (partition, offset) list and Thaw's
  view (every field) equal a read_committed consumer's.
  The random delays come from THAW_TEST_SEED (printed) for reruns.
* Two archivers started at once on one table (created by the race, then an
  existing one): each exits 0 or fails with a message naming the conflict;
  the table stays valid (every offset at most once), and a later run
  completes it to exactly the topic.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import threading
import time

import archive_topics
import iceberg_readers as readers
from archive_cli import CatalogMidTransaction, archive_args, committed_next_offsets, new_catalog, start_archive

KILLS = 24        # runs killed with SIGKILL
MAX_RUNS = 60     # runs that finish before their kill do not count
BATCH = 400       # records added before each run to the end (1 KB values)
FAST = ["--commit-interval", "100ms", "--target-file-size", "1MiB"]


def produce_batch(kafka, topic: str, start: int, n: int, value_size: int = 300) -> None:
    errors: list = []
    prod = kafka.producer(compression_type="lz4", linger_ms=5)

    def cb(err, msg):
        if err is not None:
            errors.append(str(err))

    for i in range(start, start + n):
        headers = [("seq", str(i).encode()), ("seq", None)] if i % 4 == 0 else None
        prod.produce(topic, key=None if i % 9 == 0 else f"k{i}".encode(),
                     value=None if i % 13 == 0 else (f"{i:08d}" * (value_size // 8)).encode(),
                     headers=headers, partition=i % 3, timestamp=archive_topics.BASE_TS_MS + i, on_delivery=cb)
        if i % 200 == 0:
            prod.poll(0)
    assert prod.flush(60) == 0 and not errors, errors[:5]


def assert_each_offset_at_most_once(uri: str, table: str, when: str) -> list[tuple[int, int]]:
    offs = readers.pyiceberg_offsets(uri, table)
    dups = sorted({o for o in offs if offs.count(o) > 1}) if len(set(offs)) != len(offs) else []
    assert not dups, f"{when}: {len(offs) - len(set(offs))} rows duplicate (partition, offset) {dups[:10]}"
    return offs


def run_to_completion(thaw, kafka, uri: str, table: str, topic: str, attempts: int = 3) -> dict:
    """Restart without a kill until archive exits 0 (it may have to clean up
    after a killed run; a second attempt is allowed to be needed)."""
    last = None
    for _ in range(attempts):
        p = thaw(*archive_args(kafka, uri, table, topic, "--json"), timeout=300)
        if p.returncode == 0:
            return json.loads(p.stdout)
        last = p
    raise AssertionError(f"archive did not complete in {attempts} runs; last exit {last.returncode}:\n"
                         f"{last.stderr.decode(errors='replace')[-4000:]}")


def assert_table_is_topic(thaw, kafka, uri: str, table: str, topic: str) -> list[dict]:
    want = kafka.consume_all(topic)
    offs = assert_each_offset_at_most_once(uri, table, "after the final run")
    want_ids = [(r["partition"], r["offset"]) for r in want]
    missing = sorted(set(want_ids) - set(offs))
    extra = sorted(set(offs) - set(want_ids))
    assert not missing and not extra, f"table vs topic: missing {missing[:10]} ({len(missing)}), " \
                                      f"not in the topic {extra[:10]} ({len(extra)})"
    readers.assert_same_records(readers.read_thaw(thaw, uri, table), want, "thaw inspect after the final run")
    nxt = committed_next_offsets(uri, table, topic)
    ends = kafka.offsets(topic)
    for p, (lo, hi) in ends.items():
        assert nxt.get(p) == hi, f"partition {p}: committed next offset {nxt.get(p)}, topic end {hi}"
    return want


def kill_point(uri: str, table: str, topic: str, stderr: str) -> str:
    """Where a killed run was: inside a catalog transaction (the SQLite catalog
    has a hot journal), after committing (the table's offsets passed the start
    offsets the run logged), or before its first commit."""
    try:
        after = committed_next_offsets(uri, table, topic)
    except CatalogMidTransaction:
        return "killed inside a catalog transaction"
    m = re.search(r"from offsets ((?:\d+:\d+ ?)+)", stderr)
    if m is None:
        return "killed before its first commit"  # before it logged where it starts
    start = {int(p): int(o) for p, o in (x.split(":") for x in m.group(1).split())}
    return "killed after committing" if any(after.get(p, 0) > o for p, o in start.items()) \
        else "killed before its first commit"


def test_kill_9_at_random_points_then_restart(kafka, thaw, thaw_bin, tmp_path):
    seed = int(os.environ.get("THAW_TEST_SEED", str(random.randrange(1 << 30))))
    print(f"\nTHAW_TEST_SEED={seed}")
    rnd = random.Random(seed)
    wh = tmp_path / "wh"
    wh.mkdir()
    uri, table = new_catalog(str(wh)), "ns.crash"
    topic = archive_topics.topic_name("crash")
    kafka.create_topic(topic, 3)
    produced = 1500
    produce_batch(kafka, topic, 0, produced)
    outcomes = {"killed before its first commit": 0, "killed after committing": 0,
                "killed inside a catalog transaction": 0, "finished": 0}
    killed = 0
    t0 = time.monotonic()
    trial = 0
    while killed < KILLS:
        assert trial < MAX_RUNS, f"only {killed} of {trial} runs were killed: {outcomes}"
        follow = trial % 2 == 1
        stop = threading.Event()
        producer = None
        if follow:
            producer = threading.Thread(target=archive_topics.produce_steady,
                                        kwargs=dict(kafka=kafka, topic=topic, rate=400, seconds=2.0, stop=stop))
            producer.start()
        else:
            produce_batch(kafka, topic, produced, BATCH, value_size=1000)
            produced += BATCH
        args = archive_args(kafka, uri, table, topic, *FAST, *(["--follow"] if follow else []))
        err = tmp_path / f"run{trial}.stderr"
        proc = start_archive(thaw.binary, args, err)
        delay = rnd.uniform(0.05, 1.5)
        try:
            proc.wait(delay)
            # Finished before the kill: only a clean exit is acceptable.
            assert proc.returncode == 0, f"run {trial} ({'follow' if follow else 'to the end'}): archive exited " \
                                         f"{proc.returncode}:\n{err.read_text()[-3000:]}"
            outcomes["finished"] += 1
        except subprocess.TimeoutExpired:
            proc.kill()  # SIGKILL
            proc.wait()
            killed += 1
            outcomes[kill_point(uri, table, topic, err.read_text(errors="replace"))] += 1
        proc.stdout.close()
        if producer is not None:
            stop.set()
            producer.join()
        if trial % 8 == 7:
            assert_each_offset_at_most_once(uri, table, f"after run {trial}")
        trial += 1
    print(f"{trial} runs in {time.monotonic() - t0:.1f} s: {outcomes}")
    # Kills landed both before and after a run's own commits (kill delays 0.05-1.5 s, 100 ms commits).
    assert outcomes["killed after committing"] >= 3 and outcomes["killed before its first commit"] >= 1, outcomes
    s = run_to_completion(thaw, kafka, uri, table, topic)
    assert not s["interrupted"]
    want = assert_table_is_topic(thaw, kafka, uri, table, topic)
    print(f"final run archived {s['records']} more; the table holds {len(want)} records, each once")


CLEAR = re.compile(r"another writer|already exists|conflict|concurrent|run one archiver", re.I)


def race(thaw_bin, kafka, uri: str, table: str, topic: str, tmp_path, tag: str) -> list[tuple[int, str]]:
    errs = [tmp_path / f"{tag}-{i}.stderr" for i in range(2)]
    args = archive_args(kafka, uri, table, topic, *FAST, "--json")
    procs = [start_archive(thaw_bin, args, e) for e in errs]
    out = []
    for proc, e in zip(procs, errs):
        try:
            proc.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise AssertionError(f"{tag}: an archiver did not finish within 180 s:\n{e.read_text()[-2000:]}")
        out.append((proc.returncode, e.read_text(errors="replace")))
    for rc, text in out:
        assert rc in (0, 1), f"{tag}: archiver exited {rc}:\n{text[-3000:]}"
        if rc == 1:
            assert CLEAR.search(text), \
                f"{tag}: an archiver failed without saying it met another writer:\n{text[-3000:]}"
    return out


def test_two_archivers_at_once(kafka, thaw, thaw_bin, tmp_path):
    wh = tmp_path / "wh"
    wh.mkdir()
    uri, table = new_catalog(str(wh)), "ns.race"
    topic = archive_topics.topic_name("race")
    kafka.create_topic(topic, 3)
    produce_batch(kafka, topic, 0, 3000)
    # Round 1: both create the table; round 2: both append to the existing table.
    first = race(thaw_bin, kafka, uri, table, topic, tmp_path, "create")
    assert_each_offset_at_most_once(uri, table, "after two archivers raced to create the table")
    produce_batch(kafka, topic, 3000, 3000)
    second = race(thaw_bin, kafka, uri, table, topic, tmp_path, "existing")
    assert_each_offset_at_most_once(uri, table, "after two archivers raced on the existing table")
    print(f"\nexit codes: create race {[rc for rc, _ in first]}, existing-table race {[rc for rc, _ in second]}")
    for rc, text in first + second:
        if rc == 1:
            print("  " + [line for line in text.splitlines() if CLEAR.search(line)][0][:300])
    run_to_completion(thaw, kafka, uri, table, topic)
    assert_table_is_topic(thaw, kafka, uri, table, topic)


def test_catalog_left_mid_transaction_by_a_killed_writer(thaw, tmp_path):
    """A writer killed inside a SQLite catalog transaction leaves a hot
    journal; the next Thaw process rolls it back (a read-only connection
    could not: every query failed and the catalog looked empty) and reads
    the table as committed."""
    import sys

    import fixtures

    wh = str(tmp_path / "wh")
    fixtures.build_small_canonical(wh, "ns.small")
    db = os.path.join(wh, "catalog.db")
    uri = fixtures.catalog_uri(wh)
    want = readers.read_thaw(thaw, uri, "ns.small")
    # A transaction large enough to spill into the database file, then SIGKILL.
    code = (f"import sqlite3, time\n"
            f"con = sqlite3.connect({db!r}, isolation_level=None)\n"
            "con.execute('PRAGMA cache_size=1')\n"
            "con.execute('BEGIN IMMEDIATE')\n"
            "con.execute(\"UPDATE iceberg_tables SET metadata_location = 'file:///nowhere.metadata.json'\")\n"
            "con.execute('CREATE TABLE junk(x)')\n"
            "for i in range(2000): con.execute('INSERT INTO junk VALUES (?)', ('x' * 500,))\n"
            "print('ready', flush=True)\n"
            "time.sleep(120)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"ready\n"
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    assert os.path.getsize(db + "-journal") > 0, "the killed writer left no journal: the test proves nothing"
    readers.assert_same_records(readers.read_thaw(thaw, uri, "ns.small"), want,
                                "thaw inspect after a catalog writer was killed mid-transaction")
    assert not os.path.exists(db + "-journal") or os.path.getsize(db + "-journal") == 0
