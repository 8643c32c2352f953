"""Tiered proxy benchmark (issue 21), driven by bench/tiered_bench.sh: `thaw serve --upstream` in front of a real
single-node Kafka broker against the same broker reached directly, same run, same clients.

One broker (scripts/kafka.sh), one `thaw serve --upstream BROKER --topic hist=arch.hist --listen 127.0.0.1:P
--broker-ports P+1-P+10` for every phase (broker node N is Thaw's port P+1+N). The binary is a copy taken at the
start of the run (build/bin/thaw is rebuilt by others at times). Phases, in this order:

  history prep  HIST_RECORDS x RECORD_SIZE into topic `hist` (HIST_PARTITIONS partitions, retention.ms=-1) with
                ProducerPerformance (acks=1, not measured); read to the end directly with ConsumerPerformance
                (the baseline: the median of BASELINE_RUNS reads, the broker's first read of a topic being the
                slowest); `thaw archive` (one-shot, no --follow) into arch.hist of a
                new SQLite catalog (pyiceberg's SqlCatalog tables, as tests/integration/archive_cli.py); then
                DeleteRecords (confluent-kafka AdminClient.delete_records) up to DELETE_FRACTION of every
                partition's end: the broker's log start moves there, the history below lives only in Iceberg.
  memory        Thaw's VmRSS right after start, then with CONNECTIONS idle client connections open (each sent an
                ApiVersions v0 request and got its answer, so it is paired with its own upstream connection),
                per-connection bytes = the difference / CONNECTIONS; the connections are closed again.
  passthrough   non-tiered topics of PT_PARTITIONS partitions. Produce: ProducerPerformance, PT_RECORDS x
                RECORD_SIZE, --throughput -1, PRODUCER_PROPS (default acks=1, the tool's defaults otherwise),
                each run into a new topic, direct and through Thaw (order alternating by run). Consume:
                ConsumerPerformance of the topic the first direct run wrote, from the beginning, direct and
                through Thaw. MB/s: the tool's own clock (ProducerPerformance: records/s x RECORD_SIZE;
                ConsumerPerformance: bytes / fetch.time.ms, i.e. the group join excluded), MB = 10^6 bytes.
                CPU: utime + stime of Thaw and of the broker JVM (/proc/PID/stat) before and after each tool
                run, per GB of the payload moved (RECORDS x RECORD_SIZE / 10^9); Thaw's over the broker's
                during the same through-Thaw run. The client JVM's CPU (its rusage, start-up included) is
                printed too: on 2 cores the three processes share the CPU, so what Thaw adds to their sum is
                what the throughput loses.
  latency       one partition; a confluent-kafka producer (its own process, acks=1, linger.ms=0, 5 requests in
                flight at most, as the Java producer) at LAT_RATE records/s for LAT_SECONDS s, each value
                (LAT_SIZE bytes) carrying its produce time (CLOCK_MONOTONIC, ns); a confluent-kafka consumer
                (another process, assigned at the end offset before the producer starts) takes latency = the
                time it got the record - the produce time. The first LAT_WARMUP s are dropped. Direct and
                through Thaw, alternating, LAT_RUNS each.
  history read  ConsumerPerformance of `hist` through Thaw from the beginning (a new group; HIST_RUNS reads,
                the first with Thaw's batch cache empty), the record count checked = HIST_RECORDS; ratio to the
                direct baseline read before the delete. Then (VERIFY=1) a confluent-kafka consumer reads it all
                again through Thaw and checks every partition's offsets are 0..end, each once.

Every measurement also records the share of 1 s samples that saw other work on the machine (pytest, a compiler:
class Activity), printed as "quiet" or "busy N%". PROFILE=FILE records `perf record -g` of Thaw during each
through-Thaw run (FILE.produce, FILE.consume, FILE.history1, ...).

Prints progress ("[tiered-bench] ...", stderr), one JSON line per measurement ("RESULT {...}", stdout) and the
table of figures (stdout).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import re
import socket
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIB = REPO / ".deps" / "kafka" / "lib"
TICK = os.sysconf("SC_CLK_TCK")


def log(*a):
    print("[tiered-bench]", *a, file=sys.stderr, flush=True)


def result(**kw):
    print("RESULT " + json.dumps(kw), flush=True)


# ------------------------------------------------------------------------------------------------ processes
def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    rest = s[s.rindex(")") + 2:].split()
    return (int(rest[11]) + int(rest[12])) / TICK


def status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def free_port_block(n: int) -> int:
    """A port P with P..P+n-1 free, below the ephemeral range (where the many client connections of a run leave
    ports in TIME_WAIT); checked with SO_REUSEADDR, as Thaw binds."""
    import random
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        lo = int(f.read().split()[0])
    top = lo - n if lo > 12000 + n else 65535 - n
    for _ in range(500):
        base = random.randint(10000, top)
        held = []
        try:
            for port in range(base, base + n):
                t = socket.socket()
                t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                t.bind(("127.0.0.1", port))
                held.append(t)
            return base
        except OSError:
            continue
        finally:
            for t in held:
                t.close()
    raise RuntimeError(f"no block of {n} free ports")


class Activity:
    """Samples once a second whether other work runs on the machine (a test run, a compiler: the machine is
    shared), so that every figure says whether it was taken on a quiet machine."""
    PATTERN = re.compile(rb"(?<![-/\w])pytest(?![-\w])|cc1plus|(?<![-\w])ninja(?![-\w])|clang|/ld\b|ld\.lld")

    def __init__(self):
        import threading
        self.samples: list[tuple[float, bool]] = []
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        me = os.getpid()
        while not self._stop.is_set():
            busy = False
            for d in os.listdir("/proc"):
                if not d.isdigit() or int(d) == me:
                    continue
                try:
                    with open(f"/proc/{d}/cmdline", "rb") as f:
                        cmd = f.read()
                except OSError:
                    continue
                if self.PATTERN.search(cmd) and not cmd.startswith((b"pgrep", b"pkill", b"grep")):
                    busy = True
                    self.seen.add(" ".join(cmd.replace(b"\0", b" ").decode(errors="replace").split())[:80])
            self.samples.append((time.monotonic(), busy))
            self._stop.wait(1.0)

    def busy(self, t0: float, t1: float) -> float:
        """The share of the samples in [t0, t1] that saw other work."""
        xs = [b for t, b in self.samples if t0 - 1 <= t <= t1 + 1]
        return sum(xs) / len(xs) if xs else 0.0

    def stop(self):
        self._stop.set()


ACTIVITY: Activity | None = None


def port_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), 0.5).close()
        return True
    except OSError:
        return False


class Bench:
    def __init__(self, a):
        self.a = a
        self.boot = a.bootstrap
        self.kpid = a.kafka_pid
        self.work = Path(a.work)
        self.work.mkdir(parents=True, exist_ok=True)
        self.log4j = Path(a.kafka_dir) / "tools-log4j2.properties"
        self.thaw_proc = None
        self.thaw_boot = None
        from confluent_kafka.admin import AdminClient
        self.admin = AdminClient({"bootstrap.servers": self.boot})

    # ------------------------------------------------------------------------------------------ Kafka side
    def create_topic(self, topic: str, partitions: int):
        from confluent_kafka import Consumer
        from confluent_kafka.admin import NewTopic
        for f in self.admin.create_topics([NewTopic(topic, partitions, 1, config={"retention.ms": "-1"})]).values():
            f.result(30)
        c = Consumer({"bootstrap.servers": self.boot, "group.id": "tiered-bench-meta"})
        try:
            for _ in range(200):
                md = c.list_topics(topic, timeout=10).topics[topic]
                if md.error is None and len(md.partitions) == partitions and \
                        all(p.leader >= 0 for p in md.partitions.values()):
                    return
                time.sleep(0.1)
        finally:
            c.close()
        raise RuntimeError(f"topic {topic}: no leaders")

    def watermarks(self, topic: str, boot: str | None = None) -> dict[int, tuple[int, int]]:
        from confluent_kafka import Consumer, TopicPartition
        c = Consumer({"bootstrap.servers": boot or self.boot, "group.id": "tiered-bench-meta"})
        try:
            n = len(c.list_topics(topic, timeout=10).topics[topic].partitions)
            return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10) for p in range(n)}
        finally:
            c.close()

    def java(self, main: str, args: list[str], timeout: float) -> str:
        cmd = ["java", *os.environ.get("THAW_KAFKA_TOOL_HEAP_OPTS", "-Xmx512m").split(), "-XX:+UseSerialGC",
               f"-Dlog4j2.configurationFile={self.log4j}", "-cp", f"{LIB}/*", main, *args]
        import resource
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        # The client JVM's CPU (the only child reaped meanwhile), JVM start-up included.
        self.last_client_cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if p.returncode != 0:
            raise RuntimeError(f"{main} exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
        return p.stdout

    def pids(self) -> dict[str, int]:
        out = {"broker": self.kpid}
        if self.thaw_proc is not None:
            out["thaw"] = self.thaw_proc.pid
        return out

    def measured(self, fn):
        """Runs fn(); returns (its value, {process: CPU seconds used meanwhile}, wall seconds)."""
        pids = self.pids()
        c0 = {k: cpu_s(p) for k, p in pids.items()}
        t0 = time.monotonic()
        v = fn()
        t1 = time.monotonic()
        if isinstance(v, dict):
            v["busy"] = ACTIVITY.busy(t0, t1) if ACTIVITY else 0.0
        cpu = {k: cpu_s(p) - c0[k] for k, p in pids.items()}
        cpu["client"] = getattr(self, "last_client_cpu", float("nan"))
        return v, cpu, t1 - t0

    def produce_perf(self, topic: str, boot: str, records: int) -> dict:
        props = [f"bootstrap.servers={boot}", *self.a.producer_props.split()]
        out = self.java("org.apache.kafka.tools.ProducerPerformance",
                        ["--topic", topic, "--num-records", str(records), "--record-size", str(self.a.record_size),
                         "--throughput", "-1", "--producer-props", *props], timeout=900)
        line = next((x for x in reversed(out.splitlines()) if re.match(rf"^{records} records sent", x)), None)
        if line is None:
            raise RuntimeError(f"ProducerPerformance: no summary line:\n{out[-2000:]}")
        m = re.search(r"([\d.]+) records/sec .*?, ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, "
                      r"(\d+) ms 95th, (\d+) ms 99th", line)
        rps = float(m.group(1))
        return {"records": records, "bytes": records * self.a.record_size, "seconds": records / rps,
                "mb_s": rps * self.a.record_size / 1e6, "avg_ms": float(m.group(2)), "p50_ms": int(m.group(4)),
                "p99_ms": int(m.group(6))}

    def consume_perf(self, topic: str, boot: str, records: int) -> dict:
        out = self.java("org.apache.kafka.tools.ConsumerPerformance",
                        ["--bootstrap-server", boot, "--topic", topic, "--messages", str(records),
                         "--timeout", str(self.a.consume_timeout_ms),
                         "--group", f"tiered-bench-{topic}-{time.monotonic_ns()}"], timeout=900)
        lines = [x for x in out.splitlines() if x.count(",") >= 9]
        head = [h.strip() for h in lines[0].split(",")]
        vals = [v.strip() for v in lines[-1].split(",")]
        d = dict(zip(head, vals))
        mib = float(d["data.consumed.in.MB"])
        n = int(d["data.consumed.in.nMsg"])
        fetch_s = float(d["fetch.time.ms"]) / 1000
        total_s = fetch_s + float(d["rebalance.time.ms"]) / 1000
        return {"records": n, "bytes": int(mib * 1048576), "seconds": fetch_s, "mb_s": mib * 1048576 / 1e6 / fetch_s,
                "mb_s_with_join": mib * 1048576 / 1e6 / total_s, "join_s": float(d["rebalance.time.ms"]) / 1000}

    # -------------------------------------------------------------------------------------------------- Thaw
    def start_thaw(self, uri: str):
        port = free_port_block(12)
        self.thaw_port = port
        self.thaw_boot = f"127.0.0.1:{port}"
        self.thaw_log = self.work / "serve.log"
        tier = ["--catalog", uri, "--topic", "hist=arch.hist"] if uri else []
        cmd = [self.a.thaw, "serve", "--upstream", self.boot, *tier, "--listen", self.thaw_boot, "--broker-ports", f"{port + 1}-{port + 11}",
               "--state", str(self.work / "serve-state"), *self.a.serve_args.split()]
        log("starting", " ".join(cmd[1:]))
        self.thaw_proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(self.thaw_log, "wb"),
                                          stdin=subprocess.DEVNULL)
        md = self.admin.list_topics(timeout=10)
        node = next(iter(md.brokers))
        deadline = time.monotonic() + 60
        while not (port_open(port) and port_open(port + 1 + node)):
            if self.thaw_proc.poll() is not None:
                raise RuntimeError(f"thaw serve exited {self.thaw_proc.returncode}:\n{self.thaw_log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError("thaw serve: its ports do not open")
            time.sleep(0.1)

    def stop_thaw(self) -> int:
        self.thaw_proc.terminate()
        try:
            return self.thaw_proc.wait(30)
        except subprocess.TimeoutExpired:
            self.thaw_proc.kill()
            return self.thaw_proc.wait()

    def thaw_mem(self) -> dict:
        pid = self.thaw_proc.pid
        return {"rss_kib": status_kib(pid, "VmRSS"), "hwm_kib": status_kib(pid, "VmHWM")}

    # ------------------------------------------------------------------------------------------------ phases
    def history_prep(self) -> dict:
        a = self.a
        self.create_topic("hist", a.hist_partitions)
        log(f"history: producing {a.hist_records:,} x {a.record_size} B into `hist` ({a.hist_partitions} partitions)")
        self.produce_perf("hist", self.boot, a.hist_records)
        wm = self.watermarks("hist")
        n = sum(h for _, h in wm.values())
        assert n == a.hist_records, (n, wm)
        base = []
        for i in range(a.baseline_runs):
            log(f"history: baseline read, direct ({i + 1}/{a.baseline_runs})")
            r, cpu, _ = self.measured(lambda: self.consume_perf("hist", self.boot, a.hist_records))
            r.update(cpu=cpu, run=i + 1)
            result(phase="history", path="direct", **r)
            base.append(r)
        # The archive: a new SQLite catalog made by pyiceberg, then `thaw archive` once.
        sys.path.insert(0, str(REPO / "tests" / "integration"))
        import archive_cli
        wh = self.work / "wh"
        uri = archive_cli.new_catalog(str(wh))
        log("history: thaw archive (one-shot) into arch.hist")
        t0 = time.monotonic()
        p = subprocess.run([a.thaw, "archive", "--brokers", self.boot, "--topic", "hist", "--catalog", uri,
                            "--table", "arch.hist", "--create", "--warehouse", str(wh), "--quiet",
                            *os.environ.get("TIERED_BENCH_ARCHIVE_ARGS", "").split()],
                           capture_output=True, text=True, timeout=1200)
        archive_s = time.monotonic() - t0
        if p.returncode != 0:
            raise RuntimeError(f"thaw archive exited {p.returncode}:\n{p.stderr[-3000:]}")
        nxt = archive_cli.committed_next_offsets(uri, "arch.hist", "hist")
        assert all(nxt.get(q) == wm[q][1] for q in wm), f"archive stopped short: {nxt} vs {wm}"
        from confluent_kafka import TopicPartition
        cut = {q: int(wm[q][1] * a.delete_fraction) for q in wm}
        log(f"history: DeleteRecords up to {a.delete_fraction:.0%} of each partition: {cut}")
        for f in self.admin.delete_records([TopicPartition("hist", q, o) for q, o in cut.items()],
                                           request_timeout=60).values():
            f.result(60)
        after = self.watermarks("hist")
        assert all(after[q][0] == cut[q] for q in cut), f"log start did not move: {after}"
        data = sum(f.stat().st_size for f in wh.rglob("*.parquet"))
        result(phase="archive", seconds=archive_s, records=n, bytes=n * a.record_size, parquet_bytes=data,
               log_start=after)
        self.hist_cut = cut
        return {"uri": uri, "baseline": base, "archive_s": archive_s}

    def memory(self) -> dict:
        a = self.a
        pid = self.thaw_proc.pid
        time.sleep(1.0)
        rss0 = status_kib(pid, "VmRSS")
        socks = []
        req_id = 0
        for i in range(a.connections):
            s = socket.create_connection(("127.0.0.1", self.thaw_port), 10)
            req_id += 1
            cid = b"tiered-bench"
            body = struct.pack(">hhih", 18, 0, req_id, len(cid)) + cid
            s.sendall(struct.pack(">i", len(body)) + body)
            size = struct.unpack(">i", recv_exact(s, 4))[0]
            resp = recv_exact(s, size)
            corr, err = struct.unpack(">ih", resp[:6])
            assert corr == req_id and err == 0, (corr, err)
            socks.append(s)
        time.sleep(1.0)
        rss_n = status_kib(pid, "VmRSS")
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        for s in socks:
            s.close()
        time.sleep(1.0)
        rss_after = status_kib(pid, "VmRSS")
        r = {"connections": a.connections, "rss0_kib": rss0, "rss_n_kib": rss_n, "rss_closed_kib": rss_after,
             "per_conn_bytes": (rss_n - rss0) * 1024 / max(1, a.connections), "thaw_fds": fds}
        result(phase="memory", **r)
        return r

    def profiled(self, what: str, fn):
        """fn() under `perf record -g` of Thaw into PROFILE.WHAT (diagnosis only: perf costs CPU of its own)."""
        if not self.a.profile:
            return fn()
        sampled = os.environ.get("TIERED_BENCH_PERF_ARGS", "-F 999 -g").split()
        prof = subprocess.Popen(["perf", "record", *sampled, "-o", f"{self.a.profile}.{what}", "-p",
                                 str(self.thaw_proc.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            return fn()
        finally:
            prof.send_signal(2)
            prof.wait(60)

    def passthrough(self) -> dict:
        a = self.a
        runs = {"produce": {"direct": [], "thaw": []}, "consume": {"direct": [], "thaw": []}}
        first_direct = None
        for i in range(a.runs):
            order = ["direct", "thaw"] if i % 2 == 0 else ["thaw", "direct"]
            for path in order:
                topic = f"pt-{path}-{i + 1}"
                self.create_topic(topic, a.pt_partitions)
                boot = self.boot if path == "direct" else self.thaw_boot
                log(f"passthrough run {i + 1}/{a.runs}: produce {a.pt_records:,} x {a.record_size} B, {path}")
                r, cpu, wall = self.measured(lambda: self.profiled(
                    "produce", lambda: self.produce_perf(topic, boot, a.pt_records)) if path == "thaw"
                    else self.produce_perf(topic, boot, a.pt_records))
                got = sum(h for _, h in self.watermarks(topic).values())
                assert got == a.pt_records, f"{topic}: {got} records, {a.pt_records} sent"
                r.update(cpu=cpu, wall_s=wall, run=i + 1)
                result(phase="produce", path=path, **r)
                runs["produce"][path].append(r)
                if path == "direct" and first_direct is None:
                    first_direct = topic
        for i in range(a.runs):
            order = ["direct", "thaw"] if i % 2 == 0 else ["thaw", "direct"]
            for path in order:
                boot = self.boot if path == "direct" else self.thaw_boot
                log(f"passthrough run {i + 1}/{a.runs}: consume {first_direct} from the beginning, {path}")
                r, cpu, wall = self.measured(lambda: self.profiled(
                    "consume", lambda: self.consume_perf(first_direct, boot, a.pt_records)) if path == "thaw"
                    else self.consume_perf(first_direct, boot, a.pt_records))
                assert r["records"] == a.pt_records, r
                r.update(cpu=cpu, wall_s=wall, run=i + 1)
                result(phase="consume", path=path, **r)
                runs["consume"][path].append(r)
        return runs

    def latency(self) -> dict:
        a = self.a
        ctx = mp.get_context("spawn")
        out = {"direct": [], "thaw": []}
        for i in range(a.lat_runs):
            for path in (["direct", "thaw"] if i % 2 == 0 else ["thaw", "direct"]):
                topic = f"lat-{path}-{i + 1}"
                self.create_topic(topic, 1)
                boot = self.boot if path == "direct" else self.thaw_boot
                log(f"latency run {i + 1}/{a.lat_runs}, {path}: {a.lat_rate:,} records/s x {a.lat_size} B "
                    f"for {a.lat_seconds} s")
                q = ctx.Queue()
                ready = ctx.Event()
                total = int(a.lat_rate * a.lat_seconds)
                cons = ctx.Process(target=lat_consumer, args=(boot, topic, total, a.lat_rate, a.lat_warmup, ready, q))
                cons.start()
                if not ready.wait(60):
                    cons.kill()
                    raise RuntimeError("latency consumer not ready")
                prod = ctx.Process(target=lat_producer, args=(boot, topic, total, a.lat_rate, a.lat_size, q))
                prod.start()
                t_start = time.monotonic()
                pr = q.get(timeout=a.lat_seconds + 120)
                cr = q.get(timeout=120)
                if "lag_s" in cr:
                    pr, cr = cr, pr
                prod.join(30)
                cons.join(30)
                r = {**cr, "producer_lag_s": pr["lag_s"], "produce_s": pr["seconds"], "run": i + 1,
                     "busy": ACTIVITY.busy(t_start, time.monotonic()) if ACTIVITY else 0.0}
                result(phase="latency", path=path, **r)
                out[path].append(r)
        return out

    def history_read(self, prep: dict) -> dict:
        a = self.a
        reads = []
        for i in range(a.hist_runs):
            log(f"history: read `hist` from the beginning through Thaw ({i + 1}/{a.hist_runs}"
                f"{', Thaw cache empty' if i == 0 else ''})")
            r, cpu, _ = self.measured(lambda: self.profiled(
                f"history{i + 1}", lambda: self.consume_perf("hist", self.thaw_boot, a.hist_records)))
            r.update(cpu=cpu, run=i + 1)
            result(phase="history", path="thaw", **r)
            reads.append(r)
        verify = None
        if a.verify:
            log("history: verifying offsets through Thaw (confluent-kafka consumer)")
            verify = verify_offsets(self.thaw_boot, "hist", self.watermarks("hist"))
            result(phase="verify", **verify)
        return {"reads": reads, "verify": verify}


def recv_exact(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return bytes(buf)


# ------------------------------------------------------------------------------------ latency processes
def lat_producer(boot, topic, total, rate, size, q):
    from confluent_kafka import Producer
    # linger.ms=0 with at most 5 requests in flight (the Java producer's default): librdkafka's default
    # (1,000,000) sends a request per few records and the broker's per-request cost backs them up.
    p = Producer({"bootstrap.servers": boot, "acks": "1", "linger.ms": 0, "max.in.flight.requests.per.connection": 5,
                  "queue.buffering.max.messages": 1000000})
    pad = b"x" * max(0, size - 16)
    errors = []

    def cb(err, _m):
        if err is not None:
            errors.append(str(err))
    interval = 1e9 / rate
    t0 = time.monotonic_ns()
    i = 0
    lag = 0
    while i < total:
        now = time.monotonic_ns()
        due = t0 + int(i * interval)
        if now < due:
            time.sleep(min(0.001, (due - now) / 1e9))
            continue
        lag = max(lag, now - due)
        # Everything due by now, each with its own produce time.
        while i < total and t0 + int(i * interval) <= now:
            p.produce(topic, struct.pack(">qq", time.monotonic_ns(), i) + pad, partition=0, on_delivery=cb)
            i += 1
        p.poll(0)
    secs = (time.monotonic_ns() - t0) / 1e9
    p.flush(60)
    q.put({"lag_s": lag / 1e9, "seconds": secs, "errors": errors[:5]})


def lat_consumer(boot, topic, total, rate, warmup, ready, q):
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": boot, "group.id": f"lat-{topic}", "enable.auto.commit": False})
    lo, hi = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    c.assign([TopicPartition(topic, 0, hi)])
    c.consume(1, 0.5)  # fetches start
    ready.set()
    skip = int(warmup * rate)
    lat = []
    seen = 0
    deadline = time.monotonic() + total / rate + 90
    while seen < total and time.monotonic() < deadline:
        # What is there now, without waiting; else wait for one record (poll
        # returns as soon as one is there). A record's latency ends when the
        # application got it.
        msgs = c.consume(1000, 0)
        if not msgs:
            m = c.poll(0.2)
            msgs = [m] if m is not None else []
        now = time.monotonic_ns()
        for m in msgs:
            if m.error():
                continue
            ts, i = struct.unpack_from(">qq", m.value())
            seen += 1
            if i >= skip:
                lat.append(now - ts)
    c.close()
    lat.sort()

    def pct(p):
        return lat[min(len(lat) - 1, int(len(lat) * p))] / 1e6 if lat else float("nan")
    q.put({"received": seen, "sent": total, "samples": len(lat), "p50_ms": pct(0.5), "p99_ms": pct(0.99),
           "p999_ms": pct(0.999), "max_ms": lat[-1] / 1e6 if lat else float("nan"),
           "mean_ms": statistics.fmean(lat) / 1e6 if lat else float("nan")})


def verify_offsets(boot: str, topic: str, wm: dict) -> dict:
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": boot, "group.id": f"verify-{time.monotonic_ns()}",
                  "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([TopicPartition(topic, p, 0) for p in wm])
    nxt = {p: 0 for p in wm}
    bad = []
    done = set(p for p in wm if wm[p][1] == 0)
    n = 0
    deadline = time.monotonic() + 600
    while len(done) < len(wm) and time.monotonic() < deadline:
        for m in c.consume(10000, 1.0):
            if m.error():
                if m.error().code() == -191 and nxt[m.partition()] >= wm[m.partition()][1]:  # _PARTITION_EOF
                    done.add(m.partition())
                continue
            p, o = m.partition(), m.offset()
            if o != nxt[p] and len(bad) < 10:
                bad.append((p, nxt[p], o))
            nxt[p] = o + 1
            n += 1
    c.close()
    ok = not bad and all(nxt[p] == wm[p][1] for p in wm)
    return {"records": n, "ok": ok, "gaps": bad, "ends": nxt}


# ------------------------------------------------------------------------------------------------ report
def med(rs, key):
    xs = sorted(r[key] for r in rs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def runs_of(rs, key, digits):
    return " ".join(f"{r[key]:.{digits}f}" for r in rs)


def busy_of(rs):
    """'busy N%': the share of the runs' time other work (tests, compilers) ran on the machine."""
    b = max((r.get("busy", 0.0) for r in rs), default=0.0)
    return f"busy {b:.0%}" if b > 0 else "quiet"


def report(a, prep, mem, pt, lat, hist, peak_before_hist, peak_end, rss_idle_after):
    gb = lambda r: r["bytes"] / 1e9  # noqa: E731
    print()
    print(f"tiered proxy (thaw serve --upstream) vs the broker directly; record size {a.record_size} B, "
          f"MB = 10^6 bytes, figures are medians of the runs listed")
    print(f"{'measure':<54}{'direct':>12}{'via Thaw':>12}{'ratio':>9}  target")
    rows = []
    if pt:
        for kind, what in (("produce", f"produce MB/s ({a.pt_records:,} rec, {a.producer_props})"),
                           ("consume", "consume MB/s (ConsumerPerformance, from start)")):
            d, t = pt[kind]["direct"], pt[kind]["thaw"]
            dm, tm = med(d, "mb_s"), med(t, "mb_s")
            ok = tm / dm >= 0.95
            print(f"{what:<54}{dm:12.1f}{tm:12.1f}{tm / dm:8.2f}x  >= 0.95x {'yes' if ok else 'NO'}")
            print(f"{'   runs: direct | via Thaw':<54}{runs_of(d, 'mb_s', 1)} | {runs_of(t, 'mb_s', 1)}  ({busy_of(d + t)})")
            tc = med([{"x": r["cpu"]["thaw"] / gb(r)} for r in t], "x")
            bc = med([{"x": r["cpu"]["broker"] / gb(r)} for r in t], "x")
            bd = med([{"x": r["cpu"]["broker"] / gb(r)} for r in d], "x")
            print(f"{'   CPU s/GB during the via-Thaw run: Thaw | broker':<54}{tc:12.2f}{bc:12.2f}{tc / bc:8.2f}x  "
                  f"<= 0.5x {'yes' if tc / bc <= 0.5 else 'NO'}")
            print(f"{'   (broker CPU s/GB in the direct run)':<54}{bd:12.2f}")
            tot = lambda rs: med([{"x": sum(r["cpu"].values()) / gb(r)} for r in rs], "x")  # noqa: E731
            cl = lambda rs: med([{"x": r["cpu"]["client"] / gb(r)} for r in rs], "x")  # noqa: E731
            print(f"{'   client JVM CPU s/GB (start-up included)':<54}{cl(d):12.2f}{cl(t):12.2f}")
            print(f"{'   all three processes, CPU s/GB':<54}{tot(d):12.2f}{tot(t):12.2f}{tot(t) / tot(d):8.2f}x")
            if kind == "produce":
                print(f"{'   producer latency p99 ms (ProducerPerformance)':<54}{med(d, 'p99_ms'):12.0f}"
                      f"{med(t, 'p99_ms'):12.0f}")
            rows.append(dict(kind=kind, direct=dm, thaw=tm, ratio=tm / dm, thaw_cpu_gb=tc, broker_cpu_gb=bc,
                             broker_cpu_gb_direct=bd, runs=len(t), busy=max(r.get("busy", 0) for r in d + t)))
    if lat:
        d, t = lat["direct"], lat["thaw"]
        for k in ("p50_ms", "p99_ms", "p999_ms"):
            print(f"{'latency ' + k[:-3] + ' ms (' + format(a.lat_rate, ',') + ' rec/s, confluent-kafka)':<54}"
                  f"{med(d, k):12.2f}{med(t, k):12.2f}")
        added = med(t, "p99_ms") - med(d, "p99_ms")
        print(f"{'   added p99 ms (via Thaw - direct)':<54}{'':12}{added:12.2f}{'':9}  <= 1 ms "
              f"{'yes' if added <= 1 else 'NO'}")
        print(f"{'   runs p99 ms: direct | via Thaw':<54}{runs_of(d, 'p99_ms', 1)} | {runs_of(t, 'p99_ms', 1)}"
              f"  ({busy_of(d + t)})")
        print(f"{'   runs p50 ms: direct | via Thaw':<54}{runs_of(d, 'p50_ms', 2)} | {runs_of(t, 'p50_ms', 2)}")
        rows.append(dict(kind="latency", direct_p50=med(d, "p50_ms"), thaw_p50=med(t, "p50_ms"),
                         direct_p99=med(d, "p99_ms"), thaw_p99=med(t, "p99_ms"), added_p99=added, runs=len(t),
                         busy=max(r.get("busy", 0) for r in d + t)))
    if hist:
        base = med(prep["baseline"], "mb_s")
        cold = hist["reads"][0]
        print(f"{'history read MB/s, 90% only in Iceberg (cold)':<54}{base:12.1f}{cold['mb_s']:12.1f}"
              f"{cold['mb_s'] / base:8.2f}x  >= 0.8x {'yes' if cold['mb_s'] / base >= 0.8 else 'NO'}")
        print(f"{'   runs: direct | via Thaw':<54}{runs_of(prep['baseline'], 'mb_s', 1)} | "
              f"{runs_of(hist['reads'], 'mb_s', 1)}  ({busy_of(prep['baseline'] + hist['reads'])})")
        for r in hist["reads"][1:]:
            print(f"{'   again, same Thaw (warm cache)':<54}{'':12}{r['mb_s']:12.1f}{r['mb_s'] / base:8.2f}x")
        print(f"{'   records read (expected ' + format(a.hist_records, ',') + ')':<54}{prep['baseline'][0]['records']:12,}"
              f"{cold['records']:12,}{'':9}  {'ok' if cold['records'] == a.hist_records else 'MISMATCH'}")
        if hist["verify"]:
            v = hist["verify"]
            print(f"{'   offsets 0..end once each (confluent-kafka via Thaw)':<54}{'':12}{v['records']:12,}{'':9}  "
                  f"{'ok' if v['ok'] else 'FAILED ' + str(v['gaps'])}")
        tc = cold["cpu"]["thaw"] / gb(cold)
        print(f"{'   CPU s/GB, cold read: Thaw | broker':<54}{'':12}{tc:12.2f}  broker {cold['cpu']['broker'] / gb(cold):.2f}"
              f" (direct read: broker {med([{'x': r['cpu']['broker'] / gb(r)} for r in prep['baseline']], 'x'):.2f})")
        rows.append(dict(kind="history", direct=base, thaw=cold["mb_s"], ratio=cold["mb_s"] / base,
                         warm=[r["mb_s"] for r in hist["reads"][1:]], records=cold["records"], expected=a.hist_records,
                         verify=hist["verify"]["ok"] if hist["verify"] else None, thaw_cpu_gb=tc,
                         busy=max(r.get("busy", 0) for r in prep["baseline"] + hist["reads"])))
    if mem:
        print(f"{'Thaw RSS MiB: idle | ' + str(mem['connections']) + ' idle connections':<54}"
              f"{mem['rss0_kib'] / 1024:12.1f}{mem['rss_n_kib'] / 1024:12.1f}")
        print(f"{'   per connection (client + upstream leg)':<54}{'':12}{mem['per_conn_bytes'] / 1024:9.1f} KiB")
        print(f"{'   after they closed | idle after the passthrough runs':<54}{mem['rss_closed_kib'] / 1024:12.1f}"
              f"{rss_idle_after / 1024 if rss_idle_after else float('nan'):12.1f}")
    print(f"{'Thaw peak RSS MiB: before the history read | at the end':<54}"
          f"{peak_before_hist / 1024:12.1f}{peak_end / 1024:12.1f}")
    if mem:
        rows.append(dict(kind="memory", rss0_mib=mem["rss0_kib"] / 1024, rss_n_mib=mem["rss_n_kib"] / 1024,
                         connections=mem["connections"], per_conn_kib=mem["per_conn_bytes"] / 1024,
                         peak_passthrough_mib=peak_before_hist / 1024, peak_mib=peak_end / 1024))
    for r in rows:
        result(phase="summary", **r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thaw", required=True)
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--kafka-pid", type=int, required=True)
    ap.add_argument("--kafka-dir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--record-size", type=int, default=1024)
    ap.add_argument("--pt-records", type=int, default=1000000)
    ap.add_argument("--pt-partitions", type=int, default=4)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--producer-props", default="acks=1")
    ap.add_argument("--hist-records", type=int, default=1000000)
    ap.add_argument("--hist-partitions", type=int, default=4)
    ap.add_argument("--hist-runs", type=int, default=2)
    ap.add_argument("--baseline-runs", type=int, default=3)
    ap.add_argument("--delete-fraction", type=float, default=0.9)
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--lat-rate", type=int, default=20000)
    ap.add_argument("--lat-seconds", type=float, default=15)
    ap.add_argument("--lat-warmup", type=float, default=2)
    ap.add_argument("--lat-size", type=int, default=1024)
    ap.add_argument("--lat-runs", type=int, default=3)
    ap.add_argument("--consume-timeout-ms", type=int, default=20000)
    ap.add_argument("--serve-args", default="")
    ap.add_argument("--phases", default="passthrough,latency,history,memory")
    ap.add_argument("--verify", type=int, default=1)
    ap.add_argument("--profile", default="", help="perf record Thaw during the passthrough phase into this file")
    a = ap.parse_args()
    phases = set(a.phases.split(","))
    global ACTIVITY
    ACTIVITY = Activity()
    b = Bench(a)
    t0 = time.monotonic()
    if "history" not in phases:
        # thaw serve --upstream needs a tiered topic: a small one, not read.
        a.hist_records, a.baseline_runs = 4000, 0
    prep = b.history_prep()
    b.start_thaw(prep["uri"])
    try:
        mem = b.memory() if "memory" in phases else None
        pt = b.passthrough() if "passthrough" in phases else None
        lat = b.latency() if "latency" in phases else None
        time.sleep(1.0)
        rss_idle_after = status_kib(b.thaw_proc.pid, "VmRSS") if (pt or lat) else None
        peak_before = status_kib(b.thaw_proc.pid, "VmHWM")
        hist = b.history_read(prep) if "history" in phases else None
        peak_end = status_kib(b.thaw_proc.pid, "VmHWM")
    finally:
        rc = b.stop_thaw()
    if rc != 143:  # 128 + SIGTERM: a clean stop
        log(f"thaw serve exited {rc} after SIGTERM")
    keep = REPO / "bench" / ".work" / "tiered_bench.serve.log"
    keep.write_bytes(b.thaw_log.read_bytes())
    warn = [x for x in keep.read_text(errors="replace").splitlines() if "warn" in x.lower()]
    if warn:
        log(f"thaw serve logged {len(warn)} warnings, e.g.: {warn[:3]}")
    report(a, prep, mem, pt, lat, hist, peak_before, peak_end, rss_idle_after)
    ACTIVITY.stop()
    busy = sum(b for _, b in ACTIVITY.samples) / max(1, len(ACTIVITY.samples))
    print(f"  other work (pytest, compilers) seen in {busy:.0%} of the 1 s samples of this run"
          + (f": {'; '.join(sorted(ACTIVITY.seen)[:4])}" if ACTIVITY.seen else " (quiet)"))
    result(phase="machine", busy=busy, seen=sorted(ACTIVITY.seen)[:10])
    print(f"  ({time.monotonic() - t0:.0f} s; thaw serve exit {rc}; Thaw's log kept in bench/.work/tiered_bench.serve.log)")


if __name__ == "__main__":
    main()
