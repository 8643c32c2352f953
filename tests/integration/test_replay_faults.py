"""`thaw replay --exactly-once` jobs on a real 3-broker KRaft cluster
(scripts/kafka.sh start-cluster: replication factor 3, min.insync.replicas 2)
while the cluster misbehaves: partition leaders moved at the first batch to
each partition, a broker killed with kill -9, a broker hung with SIGSTOP.

Every test ends the same way: the target topic, read back with read_committed,
holds per source partition every offset of the table exactly once and in
order (by the `thaw.source.partition` / `thaw.source.offset` link headers),
and `thaw replay --brokers B --job J --verify` agrees (exit 0).

A job may fail while a broker is down, but only with a non-zero exit and a
message saying it is safe to rerun; the rerun must then complete it."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid

import pytest

import fixtures
from kafka_broker import KafkaBroker

# THAW_TEST_FAULT_TRIALS=N runs each leader-move case N times (a soak run).
TRIALS = int(os.environ.get("THAW_TEST_FAULT_TRIALS", "1"))
PARTITIONS = 4
PER_PARTITION = 20_000
TABLE = "ns.eos_source"


@pytest.fixture(scope="module")
def eos_table(tmp_path_factory):
    """A canonical table: partitions 0..3, offsets 0..19999 each (two appends,
    so two data files per partition), ~100-byte values, timestamps within
    the last hour (well inside any retention)."""
    wh = str(tmp_path_factory.mktemp("eos-wh"))
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists("ns")
    t = fixtures.create(cat, wh, TABLE, fixtures.canonical_schema(), spec=fixtures.CANONICAL_SPEC,
                        properties=fixtures.thaw_props("orders"))
    base = int(time.time() * 1000) - 3_600_000
    half = PER_PARTITION // 2
    for lo, hi in ((0, half), (half, PER_PARTITION)):
        rows = []
        for p in range(PARTITIONS):
            for i in range(lo, hi):
                rows.append(fixtures.canonical_row(fixtures.rec(
                    p, i, base + i, f"key-{p}-{i % 97}".encode(),
                    (f"p{p} o{i} " + "x" * 80).encode(), [("h", f"{p}:{i}".encode())])))
        fixtures.append_rows(t, rows)
    return {"uri": fixtures.catalog_uri(wh), "table": TABLE}


def new_names():
    u = uuid.uuid4().hex[:8]
    return f"eos-{u}", f"eos-job-{u}"


def replay_cmd(thaw, src, cluster, topic, job, *extra):
    return [str(thaw.binary), "replay", "--catalog", src["uri"], "--table", src["table"],
            "--brokers", cluster.bootstrap, "--topic", topic, "--job", job, "--exactly-once", "--json",
            *extra]


def run_until_done(thaw, src, cluster, topic, job, first: subprocess.Popen, *extra, attempts=3):
    """Waits for the first run; while a run fails, its message must say the
    job is safe to rerun, and it is rerun (up to `attempts` runs in all).
    Returns [(exit code, stderr)] of every run."""
    runs = []
    out, err = first.communicate(timeout=300)
    runs.append((first.returncode, err.decode("utf-8", "replace")))
    while runs[-1][0] != 0:
        rc, msg = runs[-1]
        assert "safe to rerun" in msg, f"run {len(runs)} exited {rc} without saying it is safe to rerun:\n{msg}"
        assert len(runs) < attempts, f"{attempts} runs did not complete the job:\n" + "\n".join(m for _, m in runs)
        p = subprocess.run(replay_cmd(thaw, src, cluster, topic, job, *extra), capture_output=True, timeout=300)
        runs.append((p.returncode, p.stderr.decode("utf-8", "replace")))
    return runs


def assert_exactly_once(cluster, topic, job, thaw):
    """Every source offset exactly once and in order, per source partition,
    in the same target partition; and `--verify` agrees."""
    got = cluster.consume_all(topic, "read_committed", timeout=120)
    per = {}
    for r in got:
        link = {k: v for k, v in r["headers"] if k.startswith("thaw.source.")}
        sp, so = int(link["thaw.source.partition"]), int(link["thaw.source.offset"])
        assert r["partition"] == sp, f"source partition {sp} offset {so} landed in partition {r['partition']}"
        assert r["value"].startswith(f"p{sp} o{so} ".encode()), (sp, so, r["value"][:20])
        per.setdefault(sp, []).append(so)
    problems = []
    for p in range(PARTITIONS):
        offs = per.get(p, [])
        seen = set(offs)
        missing = [o for o in range(PER_PARTITION) if o not in seen]
        dups = len(offs) - len(seen)
        disorder = sum(1 for a, b in zip(offs, offs[1:]) if b <= a)
        if missing or dups or disorder:
            problems.append(f"partition {p}: {len(offs)} records, {len(missing)} missing "
                            f"(first {missing[:5]}), {dups} duplicates, {disorder} out of order")
    assert not problems, "target topic is not the table exactly once:\n" + "\n".join(problems)
    assert sorted(per) == list(range(PARTITIONS))

    v = thaw("replay", "--brokers", cluster.bootstrap, "--job", job, "--verify", "--json", timeout=300)
    assert v.returncode == 0, f"--verify exited {v.returncode}:\n{v.stderr.decode()}\n{v.stdout.decode()}"
    j = json.loads(v.stdout.decode().strip().splitlines()[-1])
    j = j.get("verify", j)
    assert j["ok"] is True, j
    assert (j["records"], j["missing"], j["duplicates"], j["out_of_order"]) == (PARTITIONS * PER_PARTITION, 0, 0, 0), j
    assert j["partitions"] == PARTITIONS, j


class LeaderMover(threading.Thread):
    """Moves the leader of every partition of `topic` that has no record yet
    (high watermark 0), round after round, so each partition's first batch
    meets a producer whose metadata names a leader that is no longer one;
    then `after_data` more moves once the partition has data (None: keep
    moving every partition until stopped). Stops when every partition got
    them, on stop(), or after `limit` seconds."""

    def __init__(self, cluster, topic, after_data: int | None = 2, limit=120.0):
        super().__init__(daemon=True)
        self.cluster, self.topic, self.after_data, self.limit = cluster, topic, after_data, limit
        self.moves_before_data = {p: 0 for p in range(PARTITIONS)}
        self.moves_after_data = {p: 0 for p in range(PARTITIONS)}
        self.errors = []
        self._halt = threading.Event()
        self._probe = KafkaBroker(cluster.bootstrap)

    def stop(self):
        self._halt.set()
        self.join(timeout=60)

    def _high_watermarks(self):
        # Its own admin client, renewed after an error: with leaders moving
        # all the time a client's cached leader epochs go stale
        # (FENCED_LEADER_EPOCH) faster than it refreshes them.
        try:
            return {p: hi for p, (_, hi) in self._probe.offsets(self.topic, "read_uncommitted", timeout=5).items()}
        except Exception:
            self._probe = KafkaBroker(self.cluster.bootstrap)
            raise

    def run(self):
        deadline = time.monotonic() + self.limit
        # Wait for the topic (thaw --create-topic makes it).
        while not self._halt.is_set() and time.monotonic() < deadline:
            try:
                if len(self.cluster.leaders(self.topic, timeout=5)) == PARTITIONS:
                    break
            except Exception:
                pass
            time.sleep(0.02)
        while not self._halt.is_set() and time.monotonic() < deadline:
            try:
                hw = self._high_watermarks()
            except Exception as e:  # leadership settling: try again
                self.errors.append(f"offsets: {e}")
                time.sleep(0.1)
                continue
            todo = [p for p in range(PARTITIONS)
                    if hw.get(p, 0) == 0 or self.after_data is None or self.moves_after_data[p] < self.after_data]
            if not todo:
                return
            try:
                self.cluster.move_leaders(self.topic, todo)
            except Exception as e:  # e.g. the ISR shrank for a moment
                self.errors.append(f"move {todo}: {e}")
                time.sleep(0.1)
                continue
            # Counted as "before the first batch" only if the partition is
            # still empty once the move is done.
            try:
                after = self._high_watermarks()
            except Exception as e:
                self.errors.append(f"offsets after move: {e}")
                after = {p: -1 for p in todo}  # unknown: counted as after
            for p in todo:
                if after.get(p, 0) == 0:
                    self.moves_before_data[p] += 1
                else:
                    self.moves_after_data[p] += 1


@pytest.mark.parametrize("precreate,rate,throughout", [
    (False, "3", False),
    (True, "3", False),
    (True, "3", True),
    (True, None, True),
], ids=["create-topic", "existing-topic", "existing-topic-moves-throughout", "full-speed-moves-throughout"])
@pytest.mark.parametrize("trial", range(1, TRIALS + 1))
def test_leader_moves_at_first_batch(thaw, kafka_cluster, eos_table, precreate, rate, throughout, trial):
    """The case that lost data: leaders move just before the first batch to
    each partition (and, in two trials, on and on while the job runs). Small
    batches, and mostly a low rate, so several batches of a partition are in
    flight when its leader moves."""
    topic, job = new_names()
    extra = ["--checkpoint-every", "5000", "-X", "batch.size=16384", "-X", "linger.ms=5"]
    if rate:
        extra += ["--rate", rate]
    if precreate:
        kafka_cluster.create_topic(topic, PARTITIONS, rf=3)
    else:
        extra.append("--create-topic")
    mover = LeaderMover(kafka_cluster, topic, after_data=None if throughout else 2)
    if precreate:
        mover.start()
        while sum(mover.moves_before_data.values()) < PARTITIONS and mover.is_alive():
            time.sleep(0.05)
    at_launch = dict(mover.moves_before_data)
    t0 = time.monotonic()
    proc = subprocess.Popen(replay_cmd(thaw, eos_table, kafka_cluster, topic, job, *extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if not precreate:
        mover.start()
    try:
        out, err = proc.communicate(timeout=300)
    finally:
        mover.stop()
    seconds = time.monotonic() - t0
    err = err.decode("utf-8", "replace")
    print(f"run {seconds:.1f}s; moves before first data {mover.moves_before_data}, after "
          f"{mover.moves_after_data}; mover errors {mover.errors[:3]}; thaw stderr: {err[-600:]}")
    # A leader move is routine: the job must complete on its own.
    assert proc.returncode == 0, f"thaw exited {proc.returncode} after leader moves:\n{err}"
    summary = json.loads(out.decode().strip().splitlines()[-1])
    assert summary["records"] == PARTITIONS * PER_PARTITION, summary
    # The injection happened while the job ran: every partition's leader
    # moved at least once after thaw started. (How many moves landed before
    # a partition's first record is printed above; it varies with timing.)
    moved = {p: mover.moves_before_data[p] + mover.moves_after_data[p] - at_launch[p] for p in range(PARTITIONS)}
    assert all(n >= 1 for n in moved.values()), f"leaders did not move during the job: {moved}"
    assert_exactly_once(kafka_cluster, topic, job, thaw)


def _leader_of_most(cluster, topic):
    leaders = list(cluster.leaders(topic).values())
    return max(set(leaders), key=leaders.count)


def test_broker_kill_9_mid_job(thaw, kafka_cluster, eos_table):
    """kill -9 the broker leading most target partitions while the job runs
    (RF 3, min ISR 2: the cluster can take it). The job completes, or fails
    saying it is safe to rerun and the rerun (with the broker still dead)
    completes it."""
    topic, job = new_names()
    kafka_cluster.create_topic(topic, PARTITIONS, rf=3)
    victim = _leader_of_most(kafka_cluster, topic)
    extra = ["--rate", "1.5", "--checkpoint-every", "5000"]
    proc = subprocess.Popen(replay_cmd(thaw, eos_table, kafka_cluster, topic, job, *extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(4)
    assert proc.poll() is None, "the job ended before the broker was killed: slow it down"
    kafka_cluster.kill_node(victim)
    runs = run_until_done(thaw, eos_table, kafka_cluster, topic, job, proc, *extra)
    print(f"killed node {victim}; runs: {[(rc, m[-300:]) for rc, m in runs]}")
    assert_exactly_once(kafka_cluster, topic, job, thaw)


def test_broker_pause_mid_job(thaw, kafka_cluster, eos_table):
    """SIGSTOP the broker leading most target partitions for 15 s, longer
    than the broker session timeout (6 s on the test cluster: it is fenced
    and its leaderships move) and the client request timeout (set to 8 s),
    then SIGCONT. The job completes, or fails saying it is safe to rerun and
    the rerun completes it."""
    topic, job = new_names()
    kafka_cluster.create_topic(topic, PARTITIONS, rf=3)
    victim = _leader_of_most(kafka_cluster, topic)
    extra = ["--rate", "1.5", "--checkpoint-every", "5000", "-X", "request.timeout.ms=8000"]
    proc = subprocess.Popen(replay_cmd(thaw, eos_table, kafka_cluster, topic, job, *extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(3)
    assert proc.poll() is None, "the job ended before the broker was paused: slow it down"
    kafka_cluster.pause_node(victim)
    try:
        time.sleep(15)
    finally:
        kafka_cluster.resume_node(victim)
    runs = run_until_done(thaw, eos_table, kafka_cluster, topic, job, proc, *extra)
    print(f"paused node {victim} for 15 s; runs: {[(rc, m[-300:]) for rc, m in runs]}")
    assert_exactly_once(kafka_cluster, topic, job, thaw)
