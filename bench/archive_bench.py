"""Archive benchmark (issue 10), driven by bench/archive_bench.sh: `thaw archive` against Apache Iceberg's Kafka
Connect sink, on the same topic of the same local broker, in the same run.

Phases (each tool gets its own table in its own new SQLite catalog and local warehouse):

  topic       RECORDS records into a PARTITIONS-partition topic (retention.ms=-1), produced once with
              confluent-kafka (librdkafka; not measured). Key "k<id>" (8-10 bytes); value a JSON object of
              VALUE_SIZE bytes: {"id": <id>, "ts": <produce time, ms>, "payload": "<random base64>"}. Every
              value is different, compressible only as base64 of random bytes is (~3/4).
              MB = key + value bytes / 10^6, the same figure for both tools.
  throughput  thaw:    `thaw archive --topic T --catalog sqlite:///... --table bench.thaw --create --warehouse DIR
                        --commit-interval 5s --json` (no --follow: it stops at the end offsets it saw at start).
              connect: a standalone Kafka Connect worker (org.apache.kafka.connect.cli.ConnectStandalone,
                        connect-runtime 4.1.2, JVM -Xms256m -Xmx2g as Kafka's connect-standalone.sh) running
                        org.apache.iceberg.connect.IcebergSinkConnector 1.12.0: JsonConverter without schemas,
                        iceberg.tables.auto-create-enabled=true (columns id long, ts long, payload string),
                        JdbcCatalog on SQLite, iceberg.control.commit.interval-ms=5000, tasks.max=CONNECT_TASKS;
                        pyiceberg polls the table every 200 ms until its total-records is RECORDS, then the
                        worker is stopped (SIGTERM).
              seconds = commit time (timestamp-ms) of the snapshot that completes the table - process start, for
              both: start-up included (the JVM worker's is tens of seconds on a loaded machine; the first
              commit's time is printed). "steady MB/s" = the bytes committed after the first snapshot / the time
              from the first to the last snapshot: the rate with start-up excluded. Peak RSS and CPU (user +
              system) come from the kernel's rusage of each process (wait4), so a signal reaches the tool
              itself, not a wrapper. On a shared machine CPU s per GB is the steadier comparison.
              The sink is used as its users configure it for JSON values: it maps each value's fields to
              columns and keeps no key, headers or raw bytes; Thaw stores the raw key and value bytes with
              partition, offset, timestamp and headers. JSON values give both something to archive.
  freshness   a producer sends RATE records/s (each value carries its produce time) for SECONDS seconds while
              `thaw archive --follow --commit-interval 5s` (resp. the Connect worker, commit interval 5000 ms)
              runs; a poller loads the table through pyiceberg's SqlCatalog every 200 ms and, for each new
              snapshot, reads the data files that snapshot added (listed by pyiceberg from its manifests):
              latency of a record = time the poller first saw it - its produce time. Start-up is excluded:
              primer records are produced first, and the measured producer starts once one of them is
              visible (the time to that is printed); p50/p99/max over the records produced after a further
              WARMUP (5 s).

Prints one JSON line per measurement ("RESULT {...}") and a summary to stdout; progress to stderr.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIB = REPO / ".deps" / "connect" / "lib"
COMMIT_MS = 5000
PRIMER = 10**9  # ids of the freshness runs' primer records


def log(*a):
    print("[archive-bench]", *a, file=sys.stderr, flush=True)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


# ---------------------------------------------------------------------------------------------------- Kafka side
def create_topic(boot: str, topic: str, partitions: int):
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewTopic
    a = AdminClient({"bootstrap.servers": boot})
    for f in a.create_topics([NewTopic(topic, partitions, 1, config={"retention.ms": "-1"})]).values():
        f.result(30)
    c = Consumer({"bootstrap.servers": boot, "group.id": "archive-bench"})
    for _ in range(100):  # wait until every partition has a leader
        md = c.list_topics(topic, timeout=10).topics[topic]
        if md.error is None and len(md.partitions) == partitions and all(
                p.leader >= 0 for p in md.partitions.values()):
            break
        time.sleep(0.1)
    c.close()


def topic_count(boot: str, topic: str) -> int:
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": boot, "group.id": "archive-bench"})
    parts = c.list_topics(topic, timeout=10).topics[topic].partitions
    n = sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in parts)
    c.close()
    return n


def make_value(i: int, size: int, ts_ms: int, rnd: bytes) -> bytes:
    head = b'{"id": %d, "ts": %d, "payload": "' % (i, ts_ms)
    room = size - len(head) - 2
    return head + rnd[:room] + b'"}'


def producer(boot: str, linger_ms: int = 20):
    from confluent_kafka import Producer
    return Producer({"bootstrap.servers": boot, "linger.ms": linger_ms, "batch.size": 1000000,
                     "queue.buffering.max.kbytes": 262144, "message.max.bytes": 104857600,
                     "enable.idempotence": True, "compression.type": "none"})


def produce_topic(boot: str, topic: str, n: int, size: int) -> int:
    """n records of `size`-byte JSON values; returns key + value bytes."""
    p = producer(boot)
    total = 0
    pool = base64.b64encode(os.urandom(3 * 1024 * 1024))  # sliced per record, different start each time
    step = 997
    now_ms = 0
    for i in range(n):
        if i % 1000 == 0:
            now_ms = int(time.time() * 1000)
        off = (i * step) % (len(pool) - size)
        v = make_value(i, size, now_ms, pool[off:off + size])
        k = b"k%d" % i
        while True:
            try:
                p.produce(topic, v, k)
                break
            except BufferError:
                p.poll(0.05)
        total += len(k) + len(v)
        if i % 10000 == 0:
            p.poll(0)
    left = p.flush(120)
    if left:
        raise RuntimeError(f"{left} records not delivered to {topic}")
    return total


def rate_producer(boot: str, topic: str, rate: int, seconds: float, size: int, sent: list):
    """`rate` records/s for `seconds` s, each value carrying its produce time; appends (id, ts_ms) to sent."""
    p = producer(boot, linger_ms=5)
    pool = base64.b64encode(os.urandom(1024 * 1024))
    start = time.time()
    i = 0
    while True:
        now = time.time()
        if now - start >= seconds:
            break
        due = int((now - start) * rate)
        while i < due:
            ts = int(time.time() * 1000)
            off = (i * 997) % (len(pool) - size)
            p.produce(topic, make_value(i, size, ts, pool[off:off + size]), b"k%d" % i)
            sent.append((i, ts))
            i += 1
        p.poll(0)
        time.sleep(0.005)
    p.flush(60)


# ---------------------------------------------------------------------------------------------------- Iceberg side
class TableWatch:
    """Loads `ident` through pyiceberg's SqlCatalog, under the catalog name its row has (Java's JdbcCatalog
    writes "iceberg" by default, pyiceberg "default"); None until the table exists."""

    def __init__(self, catalog_db: Path, warehouse: Path, ident: str):
        self.db, self.wh, self.ident, self.cat = catalog_db, warehouse, ident, None

    def table(self):
        import sqlite3
        if self.cat is None:
            if not self.db.exists():
                return None
            ns, name = self.ident.rsplit(".", 1)
            try:
                with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as c:
                    row = c.execute("SELECT catalog_name FROM iceberg_tables WHERE table_namespace = ? AND "
                                    "table_name = ?", (ns, name)).fetchone()
            except sqlite3.OperationalError:  # not created yet, or locked by a writer for a moment
                return None
            if row is None:
                return None
            from pyiceberg.catalog.sql import SqlCatalog
            self.cat = SqlCatalog(row[0], uri=f"sqlite:///{self.db}", warehouse=f"file://{self.wh}")
        return self.cat.load_table(self.ident)


def summary_get(snap, key):
    s = snap.summary
    try:
        return s[key]
    except (KeyError, TypeError):
        return getattr(s, "additional_properties", {}).get(key)


def added_files(tbl, snap) -> list[str]:
    from pyiceberg.manifest import ManifestEntryStatus
    out = []
    for m in snap.manifests(tbl.io):
        if m.added_snapshot_id != snap.snapshot_id:
            continue
        for e in m.fetch_manifest_entry(tbl.io, discard_deleted=True):
            if e.status == ManifestEntryStatus.ADDED:
                out.append(e.data_file.file_path)
    return out


def ids_and_ts(path: str, kind: str):
    """(id, ts_ms) of every record of a data file written by `kind` (thaw: JSON in the binary value column;
    connect: the id and ts columns)."""
    import pyarrow.parquet as pq
    local = path[len("file://"):] if path.startswith("file://") else path[len("file:"):] if path.startswith(
        "file:") else path  # Java writes file:/abs/path
    if kind == "connect":
        t = pq.read_table(local, columns=["id", "ts"])
        return list(zip(t.column("id").to_pylist(), t.column("ts").to_pylist()))
    out = []
    for v in pq.read_table(local, columns=["value"]).column("value").to_pylist():
        head = v[:64]
        j = head.index(b', "payload"')
        obj = json.loads(head[:j] + b"}")
        out.append((obj["id"], obj["ts"]))
    return out


def poll_freshness(watch: TableWatch, kind: str, stop: threading.Event, seen: dict):
    """Every 200 ms: load the table; for each snapshot not seen yet, read the files it added; seen[id] = time
    (ms) the poller first saw the record."""
    known = set()
    while not stop.is_set():
        t0 = time.time()
        try:
            tbl = watch.table()
        except Exception as e:  # e.g. the SQLite file locked by the writer's commit: try again next time
            log(f"poller: loading the table failed ({e}); retrying")
            tbl = None
        if tbl is not None:
            now_ms = int(time.time() * 1000)
            for snap in tbl.snapshots():
                if snap.snapshot_id in known:
                    continue
                for f in added_files(tbl, snap):
                    for i, _ts in ids_and_ts(f, kind):
                        seen.setdefault(i, now_ms)
                known.add(snap.snapshot_id)
        time.sleep(max(0.0, 0.2 - (time.time() - t0)))


# ---------------------------------------------------------------------------------------------------- tools
class Proc:
    """A child process run directly (signals reach it, not a wrapper); its peak RSS and CPU come from the
    kernel's rusage at exit (wait4)."""

    def __init__(self, cmd, stdout, stderr):
        self.p = subprocess.Popen(cmd, stdout=stdout, stderr=stderr)
        self.rc, self.usage = None, None

    def poll(self):
        if self.rc is None:
            pid, status, ru = os.wait4(self.p.pid, os.WNOHANG)
            if pid:
                self._done(status, ru)
        return self.rc

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.time() + timeout
        while self.poll() is None:
            if deadline is not None and time.time() > deadline:
                raise subprocess.TimeoutExpired(self.p.args, timeout)
            time.sleep(0.05)
        return self.rc

    def _done(self, status, ru):
        self.rc = os.waitstatus_to_exitcode(status)
        self.p.returncode = self.rc
        self.usage = {"peak_rss_mib": ru.ru_maxrss / 1024, "cpu_s": ru.ru_utime + ru.ru_stime}

    def stop(self, timeout: float = 60):
        """SIGTERM, SIGKILL after `timeout` s; returns the exit code."""
        if self.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.wait()
        return self.rc


def run_thaw(args, topic: str, work: Path, follow: bool = False):
    """Starts `thaw archive`; returns (Popen, catalog_db, warehouse, time-file, json-out)."""
    work.mkdir(parents=True, exist_ok=True)
    db, wh = work / "catalog.db", work / "wh"
    wh.mkdir(exist_ok=True)
    # thaw opens an existing catalog database: make an empty one as pyiceberg does (its SqlCatalog tables).
    from pyiceberg.catalog.sql import SqlCatalog
    SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=f"file://{wh}").engine.dispose()
    cmd = [args.thaw, "archive", "--brokers", args.bootstrap, "--topic", topic, "--catalog", f"sqlite:///{db}",
           "--table", "bench.thaw", "--create", "--warehouse", str(wh), "--commit-interval", "5s", "--json"]
    if follow:
        cmd.append("--follow")
    log("$ " + " ".join(cmd))
    out, err = work / "thaw.out", work / "thaw.err"
    p = Proc(cmd, open(out, "wb"), open(err, "wb"))
    return p, db, wh, out, err, cmd


def connect_configs(args, topic: str, work: Path, db: Path, wh: Path, tasks: int, name: str):
    port = free_port()
    worker = work / "worker.properties"
    worker.write_text(f"""bootstrap.servers={args.bootstrap}
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.storage.file.filename={work / 'connect.offsets'}
offset.flush.interval.ms=10000
listeners=http://127.0.0.1:{port}
plugin.discovery=only_scan
""")
    sink = work / "iceberg-sink.properties"
    sink.write_text(f"""name=iceberg-sink-{name}
connector.class=org.apache.iceberg.connect.IcebergSinkConnector
tasks.max={tasks}
topics={topic}
iceberg.tables=bench.connect
iceberg.tables.auto-create-enabled=true
iceberg.control.topic=control-{name}
iceberg.control.commit.interval-ms={COMMIT_MS}
iceberg.catalog.catalog-impl=org.apache.iceberg.jdbc.JdbcCatalog
iceberg.catalog.uri=jdbc:sqlite:{db}
iceberg.catalog.jdbc.schema-version=V1
iceberg.catalog.warehouse=file://{wh}
iceberg.kafka.bootstrap.servers={args.bootstrap}
consumer.override.auto.offset.reset=earliest
""")
    return worker, sink


def run_connect(args, topic: str, work: Path):
    work.mkdir(parents=True, exist_ok=True)
    db, wh = work / "catalog.db", work / "wh"
    wh.mkdir(exist_ok=True)
    # A new connector name (its consumer group) and control topic every time: nothing carried over.
    name = f"{work.name}-{os.getpid()}-{int(time.time())}"
    create_topic(args.bootstrap, f"control-{name}", 1)
    worker, sink = connect_configs(args, topic, work, db, wh, args.connect_tasks, name)
    log4j = work / "log4j2.properties"
    log4j.write_text(f"""status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {work / 'connect.log'}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
""")
    java = ["java", "-Xms256m", "-Xmx2g", "-XX:+UseG1GC", f"-Dlog4j2.configurationFile={log4j}",
            "-cp", f"{LIB}/*", "org.apache.kafka.connect.cli.ConnectStandalone", str(worker), str(sink)]
    log("$ " + " ".join(java))
    p = Proc(java, open(work / "connect.out", "wb"), subprocess.STDOUT)
    return p, db, wh, java


def connect_log_tail(work: Path) -> str:
    f = work / "connect.log"
    return "\n".join(f.read_text(errors="replace").splitlines()[-40:]) if f.exists() else "(no log)"


# ---------------------------------------------------------------------------------------------------- phases
def snapshot_timeline(tbl, t0: float, n: int, nbytes: int) -> dict:
    """From the table's snapshots (commit times by the writer's clock, the same machine's as t0):
    seconds from process start until the snapshot holding all n records, the first snapshot with data, and
    the steady rate between the first and the last (start-up excluded)."""
    snaps = sorted((s for s in tbl.snapshots() if int(summary_get(s, "added-records") or 0) > 0),
                   key=lambda s: s.timestamp_ms)
    first, last = snaps[0], snaps[-1]
    out = {"seconds": last.timestamp_ms / 1000 - t0, "first_snapshot_s": first.timestamp_ms / 1000 - t0,
           "snapshots": len(snaps)}
    span = (last.timestamp_ms - first.timestamp_ms) / 1000
    if len(snaps) > 1 and span > 0:
        rest = n - int(summary_get(first, "added-records"))
        out["steady_mb_s"] = nbytes * rest / n / span / 1e6
    return out


def throughput_connect(args, topic, n, nbytes, run) -> dict:
    work = args.work / f"connect-{run}"
    shutil.rmtree(work, ignore_errors=True)
    t0 = time.time()
    p, db, wh, cmd = run_connect(args, topic, work)
    watch = TableWatch(db, wh, "bench.connect")
    try:
        while True:
            if p.poll() is not None:
                raise RuntimeError(f"the Connect worker exited with {p.returncode}:\n{connect_log_tail(work)}")
            got = 0
            tbl = watch.table()
            if tbl is not None and tbl.current_snapshot() is not None:
                got = int(summary_get(tbl.current_snapshot(), "total-records") or 0)
            if got >= n:
                break
            if time.time() - t0 > args.timeout:
                raise RuntimeError(f"the Connect sink holds {got} of {n} records after {args.timeout} s:\n"
                                   f"{connect_log_tail(work)}")
            time.sleep(0.2)
        polled = time.time() - t0
    finally:
        p.stop()
    if got != n:
        raise RuntimeError(f"the Connect sink's table holds {got} records, expected {n}")
    return {"phase": "throughput", "tool": "connect", "run": run, "records": n, "bytes": nbytes,
            "polled_s": polled, **snapshot_timeline(tbl, t0, n, nbytes), "cmd": " ".join(cmd), **p.usage}


def throughput_thaw(args, topic, n, nbytes, run) -> dict:
    work = args.work / f"thaw-{run}"
    shutil.rmtree(work, ignore_errors=True)
    t0 = time.time()
    p, db, wh, out, err, cmd = run_thaw(args, topic, work)
    rc = p.wait()
    exited = time.time() - t0
    if rc != 0:
        raise RuntimeError(f"thaw archive exited with {rc}: {err.read_text()[-3000:]}")
    tbl = TableWatch(db, wh, "bench.thaw").table()
    got = int(summary_get(tbl.current_snapshot(), "total-records"))
    if got != n:
        raise RuntimeError(f"thaw's table holds {got} records, expected {n}")
    j = json.loads(out.read_text().strip().splitlines()[-1])
    return {"phase": "throughput", "tool": "thaw", "run": run, "records": n, "bytes": nbytes, "exit_s": exited,
            **snapshot_timeline(tbl, t0, n, nbytes), "thaw_json": j, "cmd": " ".join(cmd), **p.usage}


def freshness(args, tool: str) -> dict:
    topic = f"fresh-{tool}"
    create_topic(args.bootstrap, topic, args.partitions)
    work = args.work / f"fresh-{tool}"
    shutil.rmtree(work, ignore_errors=True)
    if tool == "thaw":
        p, db, wh, out, err, cmd = run_thaw(args, topic, work, follow=True)
        ident = "bench.thaw"
    else:
        p, db, wh, cmd = run_connect(args, topic, work)
        ident = "bench.connect"
    stop_ev, sent, seen = threading.Event(), [], {}
    watch = TableWatch(db, wh, ident)
    poller = threading.Thread(target=poll_freshness, args=(watch, tool, stop_ev, seen), daemon=True)
    poller.start()
    try:
        # Start-up excluded: primer records (ids from 10^9) until the first of them is visible, then the
        # measured producer.
        t0 = time.time()
        pr = producer(args.bootstrap, linger_ms=5)
        for k in range(args.partitions * 4):
            pr.produce(topic, make_value(PRIMER + k, 200, int(time.time() * 1000), b"x" * 200), b"primer")
        pr.flush(30)
        while not any(i >= PRIMER for i in list(seen)):
            if p.poll() is not None:
                raise RuntimeError(f"{tool} exited with {p.returncode} before its first commit")
            if time.time() - t0 > args.timeout:
                raise RuntimeError(f"{tool}: nothing visible after {args.timeout} s")
            time.sleep(0.2)
        ready_s = time.time() - t0
        log(f"{tool}: first records visible {ready_s:.1f} s after start; producing {args.rate} records/s")
        rate_producer(args.bootstrap, topic, args.rate, args.seconds, args.value_size, sent)
        deadline = time.time() + 120
        while any(i not in seen for i, _ in sent[-100:]) and time.time() < deadline:
            if p.poll() is not None:
                raise RuntimeError(f"{tool} exited with {p.returncode} during the freshness run")
            time.sleep(0.2)
        time.sleep(1)
    finally:
        stop_ev.set()
        poller.join()
        p.stop()
    t_start = sent[0][1] if sent else 0
    lat = sorted(seen[i] - ts for i, ts in sent if i in seen and ts - t_start >= args.warmup * 1000)
    missing = sum(1 for i, _ in sent if i not in seen)

    def pct(q):
        return lat[min(len(lat) - 1, int(q * len(lat)))] / 1000 if lat else None
    return {"phase": "freshness", "tool": tool, "records": len(sent), "ready_s": ready_s, "measured": len(lat),
            "missing": missing, "rate": args.rate, "seconds": args.seconds, "p50_s": pct(0.5), "p99_s": pct(0.99),
            "max_s": lat[-1] / 1000 if lat else None, "cmd": " ".join(cmd), **p.usage}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thaw", required=True)
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--value-size", type=int, default=1024)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--connect-tasks", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rate", type=int, default=1000, help="freshness: records/s")
    ap.add_argument("--seconds", type=float, default=60, help="freshness: producing time")
    ap.add_argument("--warmup", type=float, default=5, help="freshness: seconds not measured at the start")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--tools", default="thaw,connect")
    ap.add_argument("--phases", default="throughput,freshness")
    args = ap.parse_args()
    tools = args.tools.split(",")
    phases = args.phases.split(",")
    args.work.mkdir(parents=True, exist_ok=True)
    results = []

    def emit(r):
        results.append(r)
        print("RESULT " + json.dumps(r), flush=True)

    if "throughput" in phases:
        topic = "archive-src"
        log(f"producing {args.records:,} records x {args.value_size} B into {topic} ({args.partitions} partitions)")
        t0 = time.time()
        try:
            create_topic(args.bootstrap, topic, args.partitions)
            nbytes = produce_topic(args.bootstrap, topic, args.records, args.value_size)
            (args.work / "topic-bytes").write_text(str(nbytes))
        except Exception as e:  # a broker kept from an earlier run (by hand): reuse its topic
            if "TOPIC_ALREADY_EXISTS" not in str(e) or not (args.work / "topic-bytes").exists():
                raise
            nbytes = int((args.work / "topic-bytes").read_text())
            log(f"reusing the existing topic {topic}")
        got = topic_count(args.bootstrap, topic)
        if got != args.records:
            raise RuntimeError(f"topic {topic} holds {got} records, expected {args.records}")
        log(f"produced {nbytes / 1e6:.0f} MB in {time.time() - t0:.1f} s")
        for run in range(1, args.runs + 1):
            for tool in tools:
                log(f"throughput run {run}/{args.runs}: {tool}")
                f = throughput_thaw if tool == "thaw" else throughput_connect
                emit(f(args, topic, args.records, nbytes, run))
    if "freshness" in phases:
        for tool in tools:
            log(f"freshness: {tool}, {args.rate} records/s for {args.seconds:.0f} s")
            emit(freshness(args, tool))
    summarize(args, results)


def summarize(args, results):
    def median(rs):
        return sorted(rs, key=lambda r: r["seconds"])[len(rs) // 2]
    tp = {t: median([r for r in results if r["phase"] == "throughput" and r["tool"] == t])
          for t in ("thaw", "connect") if any(r["phase"] == "throughput" and r["tool"] == t for r in results)}
    if tp:
        any_r = next(iter(tp.values()))
        print(f"archive {any_r['records']:,} records x {args.value_size} B ({any_r['bytes'] / 1e6:.0f} MB of keys + "
              f"values, {args.partitions} partitions) from a local single-node broker, commit interval 5 s")
        labels = {"thaw": "thaw archive", "connect": f"Iceberg Kafka Connect sink ({args.connect_tasks} tasks)"}
        print(f"  {'':38}{'MB/s':>8} {'records/s':>11} {'seconds':>8} {'peak RSS':>10} {'CPU s':>7} {'CPU s/GB':>8}"
              f"  {'1st commit':>10} {'steady MB/s':>11}")
        for t, r in tp.items():
            steady = f"{r['steady_mb_s']:11.1f}" if r.get("steady_mb_s") else f"{'-':>11}"
            print(f"  {labels[t]:38}{r['bytes'] / r['seconds'] / 1e6:8.1f} {r['records'] / r['seconds']:11,.0f} "
                  f"{r['seconds']:8.1f} {r['peak_rss_mib']:6.0f} MiB {r['cpu_s']:7.1f} "
                  f"{r['cpu_s'] / (r['bytes'] / 1e9):8.1f}  {r['first_snapshot_s']:9.1f}s {steady}   "
                  f"{r['snapshots']} snapshots")
        if len(tp) == 2:
            th, co = tp["thaw"], tp["connect"]
            print(f"  thaw / connect: {co['seconds'] / th['seconds']:.2f}x MB/s   (target >= 3x)"
                  + (f"; steady (first to last commit, start-up excluded) "
                     f"{th['steady_mb_s'] / co['steady_mb_s']:.2f}x" if th.get("steady_mb_s") and co.get(
                         "steady_mb_s") else ""))
            print(f"  CPU per GB: connect / thaw {co['cpu_s'] / th['cpu_s']:.2f}x (user + system seconds of each "
                  f"process; less sensitive than wall time to the other load on the machine)")
        if "thaw" in tp:
            print(f"  thaw peak RSS {tp['thaw']['peak_rss_mib']:.0f} MiB   (target <= 1024 MiB)")
        if args.runs > 1:
            print(f"  (medians of {args.runs} interleaved runs; all runs: " + ", ".join(
                f"{t} {[round(r['seconds'], 1) for r in results if r['phase'] == 'throughput' and r['tool'] == t]} s"
                for t in tp) + ")")
    for r in results:
        if r["phase"] != "freshness":
            continue
        name = "thaw archive --follow" if r["tool"] == "thaw" else "Iceberg Kafka Connect sink"
        if r["p50_s"] is None:
            print(f"freshness {name}: no record visible ({r['records']} produced)")
            continue
        print(f"freshness {name}: {r['rate']} records/s for {r['seconds']:.0f} s, commit interval 5 s: "
              f"p50 {r['p50_s']:.2f} s, p99 {r['p99_s']:.2f} s, max {r['max_s']:.2f} s over {r['measured']:,} "
              f"records (first {args.warmup:.0f} s excluded; {r['missing']} never seen; first commit visible "
              f"{r['ready_s']:.1f} s after start)"
              + ("   (target p99 <= 10 s)" if r["tool"] == "thaw" else ""))


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:
        log(f"FAILED: {e}")
        sys.exit(1)
