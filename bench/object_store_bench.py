"""Object-store benchmark (issue 9), driven by bench/object_store_bench.sh.

The same table (OBJSTORE_BENCH_RECORDS records x 1 KiB incompressible values, 4 Kafka partitions, partitioned
by kafka_partition, 20,000-row row groups; ~310 MB of Parquet in 4 data files by default), written by pyiceberg
with the same rows in the same order into a local warehouse (SQLite catalog, file://) and into each S3-compatible
store on loopback (SQLite catalog, s3://):

  gofakes3   gofakes3 v1.2.0 (Go, in-memory backend; scripts/deps/install-gofakes3.sh): answers a range GET
             with one write of the object's bytes, the cheapest store per byte of the three
  s3proxy    s3proxy 2.6.0 (Java, jclouds' filesystem backend: objects are files in a directory;
             scripts/deps/install-s3proxy.sh)
  moto       moto's server (the test suite's store: one Python process)

Each run measures, for every source:

  local                the local warehouse
  STORE                the store directly (no relay): the store's own ceiling on this machine
  STORE+relay          behind bench/latency_relay.py with no injected latency: + the relay's own cost (a second
                       loopback hop; the relay splices response bytes, never copying them into Python)
  STORE+relay+20ms     behind the relay adding 20 ms to every request (the issue's target case: >= 0.8x local)

two operations:

  replay     `thaw replay --create-topic --json` into a fresh 4-partition topic of the local broker; MB/s from
             replay's own JSON (record bytes: key + value + headers, over its clock), the topic's record count
             checked
  read       `thaw inspect --records --format '%p %o\\n'`: every record read (keys, values, headers decoded),
             one short line printed per record (the lines are counted); MB/s = the replay's record bytes over
             the process's wall time; also split into the time to the first output (start-up and the serial
             requests before the first row group: metadata, manifest list, manifest, footer) and the rest
             (the read once it streams, where the read-ahead has to hide the latency)

and, through the relay, the HTTP requests per data file (HEAD/GET on each data file's object), the CPU seconds
of thaw, of the store's process and of this process (which runs the relay's threads), and the load average.

Issue 19 measures Thaw against peers in the same run, from the same source (same table, same store, same relay),
interleaved with thaw's own measurements (bench/objstore_peers.py; each a process of its own, in thaw's place):

  pyarrow    pyarrow.dataset over pyarrow.fs.S3FileSystem (same endpoint and keys) scanning the same data files
             (paths and sizes from the manifest, so no HEAD, as for thaw) for the columns thaw reads, to_batches with
             use_threads (pyarrow's default); seconds = its scan, from creating the filesystem (the interpreter's
             start and imports not counted). Target: thaw's full read >= 1.0x.
  duckdb     DuckDB's iceberg_scan of the table's metadata file through the httpfs extension (CREATE SECRET for the
             endpoint, path-style); the avro, iceberg and httpfs extensions INSTALLed from their PyPI wheels with
             autoinstall/autoload off (as tests/integration/iceberg_readers.py does), so nothing is downloaded; if
             httpfs cannot be loaded, the store rows say so and only the local row is measured. An aggregate over
             every column thaw reads; seconds = the query. Target: thaw's full read >= 1.0x.
  serve      `thaw serve` started on the source's catalog (a new process: cold), the table read once to the end by
             build/bin/consume_bench `read` (bench/consume_bench.cc) if built, else the same read by the
             confluent-kafka consumer (bench/objstore_peers.py consume); MB/s = the consumer's bytes over its
             clock; CPU = the serve process during the read. Target: cold from the store >= 0.8x cold from local.

and, per store and operation, what the injected latency costs: STORE+relay+20ms against STORE+relay (the same
relay with no latency added). Target: <= 10 % (>= 0.9x).

Placement (--placement): "shared" runs everything on all cores, as the processes fall. "split" pins thaw to
CPU 0 and the store, the relay (this process) and the broker's clients to CPU 1, for every source, local
included: a store on another machine, simulated on one 2-core machine. On 2 cores a full read is CPU-bound in
thaw locally, so in "shared" every CPU second the store and the relay spend is taken from thaw's decoding; the
ratio then measures the store as much as thaw. "split" charges thaw only what a client of a remote store pays
(its own HTTP and TCP receive work).

Thaw reads the S3 copies with `--catalog sqlite:///… --catalog-property s3.endpoint=… (keys, region,
path-style)`: the SQL catalog with S3 storage, so no REST catalog is involved in the figures.

Prints one JSON line per measurement to stdout prefixed with "RESULT " and a summary at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pyarrow as pa
from pyarrow import fs as pafs

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))   # fixtures (the table's schema)
sys.path.insert(0, str(REPO / "bench"))
from latency_relay import LatencyRelay  # noqa: E402
from serve_harness import free_port, wait_port  # noqa: E402

PARTS = 4
CHUNK = 25_000        # rows per partition per append (one append => one data file per partition)
ROW_GROUP = 20_000
VALUE = 1024
ACCESS_KEY, SECRET_KEY, REGION, BUCKET = "bench", "bench-secret", "us-east-1", "bench"
# The AWS SDK (in pyarrow's and thaw's Arrow) sends flexible checksums by default: uploads signed as aws-chunked
# with a CRC trailer, which s3proxy 2.6.0 refuses (400 XAmzContentSHA256Mismatch), and GETs asking for checksum
# validation (x-amz-checksum-mode), which it answers with 501 NotImplemented; gofakes3 v1.2.0 refuses the chunked
# uploads (411 MissingContentLength). For s3proxy and gofakes3: checksums where the operation requires them (the
# SDK's documented switches; real S3, MinIO and moto need neither).
SDK_CHECKSUMS_WHEN_REQUIRED = {"AWS_REQUEST_CHECKSUM_CALCULATION": "WHEN_REQUIRED",
                               "AWS_RESPONSE_CHECKSUM_VALIDATION": "WHEN_REQUIRED"}


PEERS = REPO / "bench" / "objstore_peers.py"
OPS = ("replay", "read", "pyarrow", "duckdb", "serve")
LATENCY_MAX_COST = 0.10     # issue 19: 20 ms per request costs thaw <= 10 % against the same store without it


STORE_LABELS = {"gofakes3": "gofakes3 v1.2.0 (in memory)", "s3proxy": "s3proxy 2.6.0 (filesystem backend)",
                "moto": "moto (server mode)"}


def log(*a):
    print("[objstore-bench]", *a, file=sys.stderr, flush=True)


def schema():
    """The canonical layout's schema (docs/layouts.md), as the test fixtures write it."""
    import fixtures
    return fixtures.canonical_schema()


def arrow_schema():
    import reader_tables
    return reader_tables.ARROW_SCHEMA


WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()
STATUSES = ("created", "paid", "packed", "shipped", "delivered", "returned")


def json_value(rng: random.Random, o: int) -> bytes:
    """An order event of about 1 KiB, JSON, shaped like what real topics carry: the same field names in every
    record, ids, amounts, timestamps and a short free text (0.65-1.1 KiB, 0.9 on average); zstd compresses them about 6x."""
    items = [{"sku": f"SKU-{rng.randrange(100000):05d}", "qty": rng.randrange(1, 9),
              "unit_price": round(rng.uniform(1, 500), 2), "currency": "EUR",
              "warehouse": f"{rng.choice(WORDS)}-{rng.randrange(40)}"} for _ in range(rng.randrange(4, 9))]
    doc = {"order_id": 10_000_000 + o, "status": rng.choice(STATUSES),
           "created_at": f"2026-11-{1 + o % 28:02d}T{o % 24:02d}:{o % 60:02d}:{(o * 7) % 60:02d}.{o % 1000:03d}Z",
           "customer": {"id": rng.randrange(1_000_000), "name": f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()}",
                        "email": f"{rng.choice(WORDS)}.{rng.randrange(10000)}@example.com", "tier": rng.choice(("gold", "silver", "bronze"))},
           "shipping": {"street": f"{rng.randrange(1, 300)} {rng.choice(WORDS).title()} Street",
                        "city": rng.choice(WORDS).title(), "country": rng.choice(("DE", "FR", "NL", "SE", "IT")),
                        "postcode": f"{rng.randrange(10000, 99999)}"},
           "items": items, "total": round(sum(i["qty"] * i["unit_price"] for i in items), 2),
           "note": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 16)))}
    return json.dumps(doc, separators=(",", ":")).encode()


def batches(n_total: int, values: str = "random"):
    """The appends, in order: each holds CHUNK rows of every partition (values: "random" = incompressible 1 KiB
    bytes, "json" = order events of about 1 KiB, see json_value)."""
    rng = random.Random(9)
    per = n_total // PARTS
    for start in range(0, per, CHUNK):
        n = min(CHUNK, per - start)
        parts = []
        for p in range(PARTS):
            offs = list(range(start, start + n))
            parts.append(pa.table({
                "kafka_partition": pa.array([p] * n, pa.int32()),
                "kafka_offset": pa.array(offs, pa.int64()),
                "kafka_timestamp": pa.array([1_700_000_000_000_000 + o * 1000 for o in offs],
                                            pa.timestamp("us", tz="UTC")),
                "kafka_timestamp_type": pa.array([0] * n, pa.int32()),
                "key": pa.array([f"key-{o % 1000}".encode() for o in offs], pa.binary()),
                "value": pa.array([rng.randbytes(VALUE) if values == "random" else json_value(rng, o) for o in offs],
                                  pa.binary()),
                "headers": pa.array([[{"key": "source", "value": b"bench"}]] * n,
                                    arrow_schema().field("headers").type),
            }, schema=arrow_schema()))
        yield pa.concat_tables(parts)


def write_table(catalog, location: str, n_total: int, values: str = "random"):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import IdentityTransform
    spec = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=IdentityTransform(),
                                        name="kafka_partition"))
    catalog.create_namespace_if_not_exists("bench")
    t = catalog.create_table("bench.obj", schema=schema(), partition_spec=spec, location=location,
                             properties={"thaw.layout": "thaw/1", "write.parquet.row-group-limit": str(ROW_GROUP),
                                         "write.target-file-size-bytes": str(1 << 40)})
    # One append of all rows: one data file per partition.
    t.append(pa.concat_tables(list(batches(n_total, values))))
    return t


def start_server(name: str, argv_for_port, log: Path, tries: int = 10, wait_s: float = 30, stdout_too=False):
    """Starts the server `argv_for_port(port)` builds on a free loopback port and waits until it accepts
    connections; another port if it exits (the port was taken in between). Its stderr (and stdout with
    `stdout_too`) is appended to `log`. Returns (process, URL)."""
    for _ in range(tries):
        port = free_port()
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv_for_port(port), stdout=out if stdout_too else subprocess.DEVNULL, stderr=out)
        try:
            wait_port(port, proc, wait_s, name)
            return proc, f"http://127.0.0.1:{port}"
        except (RuntimeError, TimeoutError):
            proc.kill()
            proc.wait()
    raise SystemExit(f"{name} did not start; see {log}")


def start_moto(logdir: Path):
    exe = Path(sys.executable).with_name("moto_server")
    return start_server("moto_server", lambda port: [str(exe), "-H", "127.0.0.1", "-p", str(port)],
                        logdir / "moto.log", tries=20)


def start_gofakes3(exe: Path, logdir: Path):
    """gofakes3 (Go, in-memory backend) with the bench's bucket, on a free loopback port."""
    return start_server("gofakes3", lambda port: [str(exe), "-backend", "memory", "-initialbucket", BUCKET,
                                                  "-host", f"127.0.0.1:{port}", "-quiet"],
                        logdir / "gofakes3.log")


def pin(pid: int, cpu: int) -> None:
    """Pins every thread of process `pid` (and the threads it starts later) to one CPU."""
    subprocess.run(["taskset", "-a", "-c", "-p", str(cpu), str(pid)], check=True, stdout=subprocess.DEVNULL)


def start_s3proxy(lib: Path, basedir: Path, logdir: Path):
    """s3proxy (Java, jclouds filesystem backend) serving `basedir` on a free loopback port."""
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    # The Maven artifact has no logback.xml, and logback's default logs every 8 KiB of every body at DEBUG.
    logback = logdir / "s3proxy-logback.xml"
    logback.write_text('<configuration><appender name="E" class="ch.qos.logback.core.ConsoleAppender"><encoder>'
                       '<pattern>%d %level %logger: %msg%n</pattern></encoder></appender>'
                       '<root level="WARN"><appender-ref ref="E"/></root></configuration>\n')

    def argv(port: int) -> list:
        props = logdir / f"s3proxy-{port}.properties"
        props.write_text("\n".join([
            f"s3proxy.endpoint=http://127.0.0.1:{port}",
            "s3proxy.authorization=aws-v2-or-v4",
            f"s3proxy.identity={ACCESS_KEY}",
            f"s3proxy.credential={SECRET_KEY}",
            "jclouds.provider=filesystem",
            f"jclouds.filesystem.basedir={basedir}",
            "",
        ]))
        return [java, "-Xmx1g", f"-Dlogback.configurationFile={logback}", "-cp", f"{lib}/*",
                "org.gaul.s3proxy.Main", "--properties", str(props)]

    return start_server("s3proxy", argv, logdir / "s3proxy.log", wait_s=60, stdout_too=True)


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) used so far by a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def s3_props(endpoint: str) -> dict:
    return {"s3.endpoint": endpoint, "s3.access-key-id": ACCESS_KEY, "s3.secret-access-key": SECRET_KEY,
            "s3.region": REGION, "s3.path-style-access": "true"}


def run(cmd, timeout=1800, env=None):
    """Runs cmd (with `env` added to the environment); returns (stdout bytes, wall seconds, CPU seconds of cmd,
    seconds until the first stdout bytes arrived). stderr goes to a temporary file (read only on failure), so
    stdout is the one pipe read here, in 1 MiB chunks as it comes."""
    import resource
    import tempfile
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile() as errf:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, stdin=subprocess.DEVNULL,
                             env={**os.environ, **env} if env else None)
        chunks, first = [], None
        deadline = t0 + timeout
        while True:
            chunk = p.stdout.read1(1 << 20)
            if not chunk:
                break
            if first is None:
                first = time.monotonic() - t0
            chunks.append(chunk)
            if time.monotonic() > deadline:
                p.kill()
                raise SystemExit(f"TIMEOUT: {' '.join(map(str, cmd))}")
        p.wait()
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if p.returncode != 0:
            errf.seek(0)
            err = errf.read().decode(errors="replace")
            raise SystemExit(f"FAILED ({p.returncode}): {' '.join(map(str, cmd))}\n{err[-4000:]}")
    return b"".join(chunks), wall, cpu, first if first is not None else wall


def kafka_admin(bootstrap):
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})

    def count(topic):
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "objstore-bench"})
        n = sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(PARTS))
        c.close()
        return n

    def delete(topic):
        for f in admin.delete_topics([topic]).values():
            f.result(30)

    return count, delete


def data_file_requests(stats: dict) -> dict:
    """{data file path: {"HEAD": n, "GET": n}} from a proxy's per-path counts."""
    out: dict[str, dict] = {}
    for key, n in stats["by_path"].items():
        method, path = key.split(" ", 1)
        if path.endswith(".parquet") and "/data/" in path:
            out.setdefault(path, {}).setdefault(method, 0)
            out[path][method] += n
    return out


def needs_plan(ops) -> bool:
    return "pyarrow" in ops or "duckdb" in ops


def plan_table(uri: str, props: dict, env, files_json: Path) -> dict:
    """The table's current data files (path and size, as the manifest gives them; written to `files_json` for the
    pyarrow peer) and metadata file (the DuckDB peer's input), read by pyiceberg from the catalog."""
    from pyiceberg.catalog.sql import SqlCatalog
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        t = SqlCatalog("default", uri=uri, **props).load_table("bench.obj")
        files = [{"path": task.file.file_path, "size": task.file.file_size_in_bytes} for task in t.scan().plan_files()]
        metadata = t.metadata_location
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    files_json.write_text(json.dumps(files))
    return {"files": str(files_json), "metadata": metadata, "n_files": len(files)}


def serve_read(a, taskset, consumer, consumer_taskset, uri, props, env, workdir: Path) -> tuple:
    """`thaw serve` on the catalog (a new process: cold), the table read once to the end by the consumer.
    Returns (the consumer's JSON, the serve process's CPU seconds during the read, the consumer's CPU seconds)."""
    import shutil
    import tempfile
    state = Path(tempfile.mkdtemp(prefix="serve-state-", dir=workdir))
    errlog = state / "serve.err"
    args = ["--catalog", uri]
    for k, v in (props or {}).items():
        args += ["--catalog-property", f"{k}={v}"]
    try:
        for _ in range(10):
            port = free_port()
            with open(errlog, "ab") as err:
                proc = subprocess.Popen([*taskset, a.thaw, "serve", *args, "--topic", "obj=bench.obj", "--listen",
                                         f"127.0.0.1:{port}", "--state", str(state / "state"), "--log-level", "warn"],
                                        stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
                                        env={**os.environ, **env} if env else None)
            try:
                wait_port(port, proc, 60, "thaw serve")
                break
            except (RuntimeError, TimeoutError):
                proc.kill()
                proc.wait()
        else:
            raise SystemExit(f"thaw serve did not start: {errlog.read_text()[-3000:]}")
        try:
            cpu0 = proc_cpu(proc.pid)
            cmd = [*consumer_taskset, *consumer, "--brokers", f"127.0.0.1:{port}", "--topic", "obj"]
            out, _, ccpu, _ = run(cmd + (["read"] if len(consumer) == 1 else []))
            cpu = proc_cpu(proc.pid) - cpu0
        finally:
            proc.terminate()
            try:
                rc = proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
        if rc != 143:  # 128 + SIGTERM: a clean stop
            raise SystemExit(f"thaw serve exited {rc} after SIGTERM: {errlog.read_text()[-3000:]}")
        return json.loads(out.decode().strip().splitlines()[-1]), cpu, ccpu
    finally:
        shutil.rmtree(state, True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thaw", required=True)
    ap.add_argument("--bootstrap", help="a Kafka broker (replay only)")
    ap.add_argument("--work", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--records", type=int, default=300_000)
    ap.add_argument("--latency-ms", type=float, default=20)
    ap.add_argument("--stores", default="gofakes3,s3proxy,moto",
                    help="S3-compatible stores to measure (gofakes3, s3proxy, moto)")
    ap.add_argument("--placement", choices=("shared", "split"), default="shared",
                    help="shared: every process on every core; split: thaw on CPU 0, the rest on CPU 1")
    ap.add_argument("--s3proxy-lib", default=str(REPO / ".deps" / "s3proxy" / "lib"))
    ap.add_argument("--gofakes3", default=str(REPO / ".deps" / "bin" / "gofakes3"))
    ap.add_argument("--ops", default="replay,read,pyarrow,duckdb,serve",
                    help="replay, read (thaw); pyarrow, duckdb (the peers of the read); serve (thaw serve, cold)")
    ap.add_argument("--consumer", default=str(REPO / "build" / "bin" / "consume_bench"),
                    help="the serve op's consumer (bench/consume_bench.cc); if absent, bench/objstore_peers.py "
                         "consume (confluent-kafka)")
    ap.add_argument("--values", choices=("random", "json"), default="random",
                    help="random: incompressible 1 KiB values; json: ~0.9 KiB JSON order events (zstd: ~6x)")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    stores = [x for x in a.stores.split(",") if x]
    ops = [x for x in a.ops.split(",") if x]
    unknown = [x for x in ops if x not in OPS]
    if unknown:
        raise SystemExit(f"unknown --ops {unknown}: known {list(OPS)}")
    if "replay" in ops and not a.bootstrap:
        raise SystemExit("--ops replay needs --bootstrap")
    # The DuckDB peer: its extensions from their wheels, httpfs for the stores (said in the summary if missing).
    duckdb_s3_error = None
    if "duckdb" in ops:
        probe = json.loads(subprocess.run([sys.executable, str(PEERS), "duckdb-probe", "--s3"], check=True,
                                          capture_output=True).stdout.decode().strip().splitlines()[-1])
        if not probe["ok"]:
            duckdb_s3_error = probe["error"]
            log(f"DuckDB's S3 access (httpfs) cannot be loaded offline: {duckdb_s3_error}; "
                "the duckdb peer is measured from local files only")
            local_probe = json.loads(subprocess.run([sys.executable, str(PEERS), "duckdb-probe"], check=True,
                                                    capture_output=True).stdout.decode().strip().splitlines()[-1])
            if not local_probe["ok"]:
                log(f"DuckDB's iceberg extension cannot be loaded either: {local_probe['error']}; no duckdb peer")
                ops = [x for x in ops if x != "duckdb"]
    consumer = ([a.consumer] if os.access(a.consumer, os.X_OK) else [sys.executable, str(PEERS), "consume"])
    consumer_label = ("consume_bench (librdkafka, bench/consume_bench.cc)" if len(consumer) == 1
                      else "the confluent-kafka consumer (bench/objstore_peers.py consume; build/bin/consume_bench "
                           "is not built)")
    split = a.placement == "split"
    if split:
        if (os.cpu_count() or 1) < 2:
            raise SystemExit("--placement split needs 2 CPUs")
        pin(os.getpid(), 1)       # this process: the relay's threads and the replay's topic checks
    from pyiceberg.catalog.sql import SqlCatalog

    # Local copy (cached between runs of the benchmark).
    suffix = "" if a.values == "random" else f"-{a.values}"
    local_wh = work / f"local-{a.records}{suffix}"
    if not (local_wh / "done").exists():
        log(f"writing the local table ({a.records:,} records) into {local_wh}")
        if local_wh.exists():
            import shutil
            shutil.rmtree(local_wh)
        local_wh.mkdir(parents=True)
        cat = SqlCatalog("default", uri=f"sqlite:///{local_wh}/catalog.db", warehouse=f"file://{local_wh}")
        write_table(cat, f"file://{local_wh}/bench/obj", a.records, a.values)
        (local_wh / "done").write_text("ok")
    local_uri = f"sqlite:///{local_wh}/catalog.db"
    local_files = sorted((local_wh / "bench" / "obj" / "data").rglob("*.parquet"))
    file_bytes = sum(f.stat().st_size for f in local_files)

    procs = []
    proxies = []
    try:
        sources = {"local": (local_uri, [], None, None, None)}
        # The peers' inputs per source: the data files (path, size) and the metadata file, planned once here.
        plans = {"local": plan_table(local_uri, {}, None, work / "plan-local.json")} if needs_plan(ops) else {}

        def add_store(name, url, uri, proc, env=None):
            if split:
                pin(proc.pid, 1)
            if needs_plan(ops):
                plan = plan_table(uri, s3_props(url), env, work / f"plan-{name}.json")
                for s in (name, f"{name}+relay", f"{name}+relay+{a.latency_ms:g}ms"):
                    plans[s] = plan
            plain = LatencyRelay(url).start()
            slow = LatencyRelay(url, latency_ms=a.latency_ms).start()
            proxies.extend([plain, slow])
            sources[name] = (uri, s3_props(url), None, proc, env)
            sources[f"{name}+relay"] = (uri, s3_props(plain.url), plain, proc, env)
            sources[f"{name}+relay+{a.latency_ms:g}ms"] = (uri, s3_props(slow.url), slow, proc, env)

        if "gofakes3" in stores:
            # In memory, like moto: written again every time.
            gf, gf_url = start_gofakes3(Path(a.gofakes3), work)
            procs.append(gf)
            os.environ.update(SDK_CHECKSUMS_WHEN_REQUIRED)
            gf_wh = work / f"gofakes3cat-{uuid.uuid4().hex[:8]}"
            gf_wh.mkdir()
            log(f"writing the same table into gofakes3 at {gf_url}")
            cat = SqlCatalog("default", uri=f"sqlite:///{gf_wh}/catalog.db", warehouse=f"s3://{BUCKET}/wh",
                             **s3_props(gf_url))
            write_table(cat, f"s3://{BUCKET}/wh/bench/obj", a.records, a.values)
            for k in SDK_CHECKSUMS_WHEN_REQUIRED:
                os.environ.pop(k, None)
            add_store("gofakes3", gf_url, f"sqlite:///{gf_wh}/catalog.db", gf, SDK_CHECKSUMS_WHEN_REQUIRED)

        if "moto" in stores:
            # moto is in-memory: its copy is written again every time.
            moto, moto_url = start_moto(work)
            procs.append(moto)
            s3 = pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION, scheme="http",
                                   endpoint_override=moto_url.removeprefix("http://"), allow_bucket_creation=True)
            s3.create_dir(BUCKET)
            s3_wh = work / f"s3cat-{uuid.uuid4().hex[:8]}"
            s3_wh.mkdir()
            log(f"writing the same table into moto at {moto_url}")
            cat = SqlCatalog("default", uri=f"sqlite:///{s3_wh}/catalog.db", warehouse=f"s3://{BUCKET}/wh",
                             **s3_props(moto_url))
            write_table(cat, f"s3://{BUCKET}/wh/bench/obj", a.records, a.values)
            add_store("moto", moto_url, f"sqlite:///{s3_wh}/catalog.db", moto)
        if "s3proxy" in stores:
            # s3proxy keeps its objects in a directory: that copy is cached like the local one.
            base = work / f"s3proxy-{a.records}{suffix}"
            fresh = not (base / "done").exists()
            if fresh and base.exists():
                import shutil
                shutil.rmtree(base)
            (base / "blobs").mkdir(parents=True, exist_ok=True)
            sp, sp_url = start_s3proxy(Path(a.s3proxy_lib), base / "blobs", work)
            procs.append(sp)
            if fresh:
                os.environ.update(SDK_CHECKSUMS_WHEN_REQUIRED)
                s3 = pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION, scheme="http",
                                       endpoint_override=sp_url.removeprefix("http://"), allow_bucket_creation=True)
                s3.create_dir(BUCKET)
                log(f"writing the same table into s3proxy at {sp_url} (basedir {base / 'blobs'})")
                cat = SqlCatalog("default", uri=f"sqlite:///{base}/catalog.db", warehouse=f"s3://{BUCKET}/wh",
                                 **s3_props(sp_url))
                write_table(cat, f"s3://{BUCKET}/wh/bench/obj", a.records, a.values)
                for k in SDK_CHECKSUMS_WHEN_REQUIRED:
                    os.environ.pop(k, None)
                (base / "done").write_text("ok")
            add_store("s3proxy", sp_url, f"sqlite:///{base}/catalog.db", sp, SDK_CHECKSUMS_WHEN_REQUIRED)

        count, delete = kafka_admin(a.bootstrap) if "replay" in ops else (None, None)
        record_bytes = _record_bytes(a.records, a.values)
        results = []
        taskset = ["taskset", "-c", "0"] if split else []
        consumer_taskset = ["taskset", "-c", "1"] if split else []    # the consumer is the broker's client
        peer_errors: dict = {}
        for i in range(1, a.runs + 1):
            for name, (uri, props, proxy, store, env) in sources.items():
                cat_args = ["--catalog", uri, "--table", "bench.obj"]
                for k, v in (props or {}).items():
                    cat_args += ["--catalog-property", f"{k}={v}"]
                replay_bytes = None
                for op in ops:
                    log(f"run {i}/{a.runs}: {name}: {op}")
                    if proxy:
                        proxy.reset_stats()
                    store_cpu0 = proc_cpu(store.pid) if store else 0.0
                    self0 = sum(os.times()[:2])
                    load = os.getloadavg()[0]
                    endpoint = (props or {}).get("s3.endpoint")
                    extra = {}
                    who = "thaw"
                    if op == "replay":
                        topic = f"objstore-{name.replace('+', '-')}-{i}-{uuid.uuid4().hex[:6]}"
                        out, wall, cpu, _ = run([*taskset, a.thaw, "replay", *cat_args, "--brokers", a.bootstrap, "--topic",
                                                 topic, "--create-topic", "--quiet", "--json"], env=env)
                        j = json.loads(out.decode().strip().splitlines()[-1])
                        seconds, n, nbytes = j["seconds"], j["records"], j["bytes"]
                        replay_bytes = nbytes
                    elif op == "read":
                        out, wall, cpu, first = run([*taskset, a.thaw, "inspect", *cat_args, "--records", "--format",
                                                     "%p %o\\n"], env=env)
                        seconds, n, nbytes = wall, out.count(b"\n"), replay_bytes or record_bytes
                    elif op in ("pyarrow", "duckdb"):
                        who = "peer"
                        if op == "duckdb" and endpoint and duckdb_s3_error:
                            continue          # said once in the summary
                        plan = plans[name]
                        cmd = ([sys.executable, str(PEERS), "pyarrow", "--files", plan["files"]] if op == "pyarrow"
                               else [sys.executable, str(PEERS), "duckdb", "--metadata", plan["metadata"]])
                        try:
                            out, wall, cpu, _ = run([*taskset, *cmd, *(["--endpoint", endpoint] if endpoint else [])],
                                                    env=env)
                        except SystemExit as e:
                            # A peer that fails is reported, not fatal: thaw's figures still stand.
                            peer_errors.setdefault((op, name), str(e).strip().splitlines()[-1][:300])
                            log(f"{op} from {name} failed: {e}")
                            continue
                        j = json.loads(out.decode().strip().splitlines()[-1])
                        seconds, n, nbytes = j["seconds"], j["records"], replay_bytes or record_bytes
                        extra = {"peer_bytes": j["bytes"]}
                    else:   # serve
                        t0 = time.monotonic()
                        j, cpu, ccpu = serve_read(a, taskset, consumer, consumer_taskset, uri, props, env, work)
                        wall = time.monotonic() - t0
                        seconds, n, nbytes = j["seconds"], j["records"], j["bytes"]
                        extra = {"errors": j.get("errors", 0), "consumer_cpu": round(ccpu, 2)}
                    r = {"source": name, "op": op, "run": i, "records": n, "bytes": nbytes, "seconds": seconds,
                         "wall": wall, "load": load, "cpu": {who: round(cpu, 2)}, **extra}
                    if op == "read":
                        # Time to the first record (start-up, metadata, manifests, the first footer and row
                        # group: serial round trips), and the rest: the read's throughput once it streams.
                        r["first"] = first
                        r["steady"] = max(wall - first, 1e-6)
                    if store:
                        r["cpu"]["store"] = round(proc_cpu(store.pid) - store_cpu0, 2)
                    if proxy:
                        r["cpu"]["relay"] = round(sum(os.times()[:2]) - self0, 2)
                        r["proxy"] = _proxy_summary(proxy.stats())
                    if op == "replay":
                        got = count(topic)
                        delete(topic)
                        if got != a.records or n != a.records:
                            raise SystemExit(f"{name} replay: topic holds {got}, replay says {n}, "
                                             f"expected {a.records}")
                    elif n != a.records:
                        raise SystemExit(f"{name} {op}: {n} records {'printed' if op == 'read' else 'read'}, "
                                         f"expected {a.records}")
                    results.append(r)
                    print("RESULT " + json.dumps(r), flush=True)
        summarize(results, a, file_bytes, len(local_files), ops, duckdb_s3_error=duckdb_s3_error,
                  peer_errors=peer_errors, consumer_label=consumer_label)
    finally:
        for p in proxies:
            p.stop()
        for p in procs:
            p.terminate()
            p.wait(10)


def _record_bytes(records: int, values: str) -> int:
    """Record bytes (key + value + headers, as replay counts them) when replay was not run."""
    if values != "random":
        return sum(t.column("key").nbytes - 4 * (t.num_rows + 1) + t.column("value").nbytes - 4 * (t.num_rows + 1)
                   for t in batches(records, values)) + records * (len("source") + len("bench"))
    key = sum(len(f"key-{o % 1000}") for o in range(records // PARTS)) * PARTS
    return key + records * (VALUE + len("source") + len("bench"))


def _proxy_summary(stats: dict) -> dict:
    per = data_file_requests(stats)
    return {"requests": stats["requests"], "data_files": len(per),
            "per_data_file": sorted(sum(m.values()) for m in per.values()),
            "per_data_file_by_method": {m: sorted(v.get(m, 0) for v in per.values()) for m in ("HEAD", "GET")},
            "by_method": stats["by_method"], "bytes_out": stats["bytes_out"]}


def summarize(results, a, file_bytes, n_files, ops, duckdb_s3_error=None, peer_errors=None, consumer_label=""):
    peer_errors = peer_errors or {}

    def med(rs):
        return sorted(rs, key=lambda r: r["seconds"])[len(rs) // 2]

    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2]

    def pick(op, s):
        return [r for r in results if r["op"] == op and r["source"] == s]

    def met(ok):
        return "met" if ok else "NOT met"

    sources = list(dict.fromkeys(r["source"] for r in results))
    loads = [r["load"] for r in results]
    lat = f"+relay+{a.latency_ms:g}ms"
    print()
    STORE_LABELS["moto"] = f"moto {_moto_version()} (server mode)"
    placement = ("split: thaw on CPU 0, the stores and the relay on CPU 1 (a remote store, simulated)"
                 if a.placement == "split" else "shared: every process on both cores")
    kind = "incompressible 1 KiB values" if a.values == "random" else "~0.9 KiB JSON values"
    print(f"object store: {a.records:,} records ({kind}) in {n_files} data files ({file_bytes / 1e6:.0f} MB of "
          f"Parquet, {ROW_GROUP:,}-row row groups), 4 partitions; stores on loopback: "
          f"{', '.join(STORE_LABELS[x] for x in a.stores.split(',') if x)}; "
          f"medians of {a.runs} interleaved runs; load average "
          f"{min(loads):.1f}-{max(loads):.1f} (1 min, at each run's start); placement {placement}")
    labels = {"replay": "thaw replay into a local broker", "read": "full read (thaw inspect --records)",
              "pyarrow": "peer: pyarrow.dataset scan of the same data files (same columns; to_batches, use_threads; "
                         "time = its scan)",
              "duckdb": "peer: DuckDB iceberg_scan of the same table (httpfs; all columns aggregated; time = the query)",
              "serve": f"thaw serve, cold (a new process per run), the table read to the end by {consumer_label}"}
    for op in ops:
        loc_rs = pick(op, "local")
        base = med(loc_rs) if loc_rs else None
        print(f"  {labels[op]}")
        for s in sources:
            rs = pick(op, s)
            if not rs:
                if op == "duckdb" and s != "local" and duckdb_s3_error:
                    continue
                why = peer_errors.get((op, s), "no run")
                print(f"    {s:<22} not measured: {why}")
                continue
            m = med(rs)
            mbs = m["bytes"] / m["seconds"] / 1e6
            cpu = "  ".join(f"{k} {median([r['cpu'][k] for r in rs]):.1f}" for k in m["cpu"])
            xl = f"{base['seconds'] / m['seconds']:.2f}" if base else "-"
            line = (f"    {s:<22} {mbs:7.1f} MB/s  {m['seconds']:6.2f} s   x local "
                    f"{xl}   CPU s: {cpu}")
            if op == "read":
                # The streaming part alone: median time after the first record, against local's.
                steady = median([r["steady"] for r in rs])
                first = median([r["first"] for r in rs])
                base_steady = median([r["steady"] for r in results if r["op"] == op and r["source"] == "local"])
                line += (f"   first record {first:.2f} s, then {m['bytes'] / steady / 1e6:.0f} MB/s "
                         f"(x local {base_steady / steady:.2f})")
            if op in ("pyarrow", "duckdb", "serve"):
                line += f"   process {median([r['wall'] for r in rs]):.2f} s"
            if op == "serve":
                errs = sum(r.get("errors", 0) for r in rs)
                line += (f"   consumer CPU s {median([r.get('consumer_cpu', 0) for r in rs]):.1f}"
                         + (f"   consumer errors {errs}" if errs else ""))
            if "proxy" in m:
                px = m["proxy"]
                line += (f"   requests {px['requests']}, per data file {px['per_data_file']} "
                         f"(HEAD {px['per_data_file_by_method']['HEAD']}, GET {px['per_data_file_by_method']['GET']})")
            print(line + f"   all runs {[round(r['seconds'], 2) for r in rs]} s")
        if op == "duckdb" and duckdb_s3_error:
            print(f"    DuckDB iceberg_scan not measured from the stores: the httpfs extension (S3) cannot be loaded "
                  f"offline: {duckdb_s3_error}")
        if op in ("replay", "read"):
            for s in sources:
                if s.endswith(lat):
                    m = med(pick(op, s))
                    ratio = base["seconds"] / m["seconds"]
                    line = f"    target {s}: {ratio:.2f}x local ({met(ratio >= 0.8)}: >= 0.8x)"
                    if op == "read":
                        rs = pick(op, s)
                        loc = pick(op, "local")
                        st = median([r["steady"] for r in loc]) / median([r["steady"] for r in rs])
                        line += (f" by wall time; once streaming {st:.2f}x ({met(st >= 0.8)}), "
                                 f"after {median([r['first'] for r in rs]):.2f} s to the first record "
                                 f"(local {median([r['first'] for r in loc]):.2f} s)")
                    print(line)
        if op == "serve" and base:
            for s in sources:
                if s != "local" and pick(op, s):
                    m = med(pick(op, s))
                    ratio = base["seconds"] / m["seconds"]
                    print(f"    target serve {s}: {ratio:.2f}x local cold ({met(ratio >= 0.8)}: >= 0.8x); "
                          f"{m['bytes'] / m['seconds'] / 1e6:.1f} MB/s vs {base['bytes'] / base['seconds'] / 1e6:.1f} MB/s")
    peers = [p for p in ("pyarrow", "duckdb") if p in ops]
    if "read" in ops and peers:
        print("  targets against the peers: thaw's full read / the peer's scan, same source, same run "
              "(ratio of MB/s = peer seconds / thaw seconds)")
        for p in peers:
            for s in sources:
                th, pr = pick("read", s), pick(p, s)
                if not th or not pr:
                    continue
                mt, mp = med(th), med(pr)
                ratio = mp["seconds"] / mt["seconds"]
                print(f"    target thaw/{p} {s}: {ratio:.2f}x ({met(ratio >= 1.0)}: >= 1.0x); "
                      f"thaw {mt['bytes'] / mt['seconds'] / 1e6:.1f} MB/s {mt['seconds']:.2f} s, "
                      f"{p} {mp['bytes'] / mp['seconds'] / 1e6:.1f} MB/s {mp['seconds']:.2f} s "
                      f"(by process wall time {median([r['wall'] for r in pr]) / mt['wall']:.2f}x: its process "
                      f"{median([r['wall'] for r in pr]):.2f} s, interpreter start and imports included)")
            if p == "duckdb" and duckdb_s3_error:
                print(f"    target thaw/duckdb from the stores: not measured (httpfs cannot be loaded offline: "
                      f"{duckdb_s3_error})")
    lat_ops = [o for o in ("replay", "read", "serve") if o in ops]
    stores_seen = [s[: -len(lat)] for s in sources if s.endswith(lat)]
    if lat_ops and stores_seen:
        print(f"  targets, the latency's cost: STORE{lat} against STORE+relay (the same relay, no latency "
              f"added); cost <= {LATENCY_MAX_COST * 100:.0f} % (>= {1 - LATENCY_MAX_COST:.1f}x)")
        for o in lat_ops:
            for st in stores_seen:
                slow, plain, direct = pick(o, st + lat), pick(o, st + "+relay"), pick(o, st)
                if not slow or not plain:
                    continue
                ms, mp = med(slow), med(plain)
                ratio = mp["seconds"] / ms["seconds"]
                line = (f"    target latency {st} {o}: {ratio:.2f}x without ({met(ratio >= 1 - LATENCY_MAX_COST)}: "
                        f">= {1 - LATENCY_MAX_COST:.1f}x; cost {(1 - ratio) * 100:.0f} %); "
                        f"{ms['bytes'] / ms['seconds'] / 1e6:.1f} MB/s vs {mp['bytes'] / mp['seconds'] / 1e6:.1f} MB/s")
                if direct:
                    line += f"; {med(direct)['seconds'] / ms['seconds']:.2f}x {st} directly (no relay)"
                print(line)
    print("  MB = 10^6 bytes of records (key + value + headers) as replay counts them; read time is the inspect "
          "process's wall time (start-up and planning included), split into the time to its first output and the "
          "rest (once streaming); replay time is replay's own clock (from after the table's metadata is loaded). "
          "CPU s: "
          "thaw = the thaw process, store = the S3 server process, relay = the bench process that runs the "
          "relay threads. "
          f"Target: {lat} >= 0.8x local.")
    if set(ops) & {"pyarrow", "duckdb", "serve"}:
        print("  Peers (bench/objstore_peers.py): time = the peer's own clock (pyarrow: from creating its filesystem "
              "to the last batch, its data files and sizes given, as the manifest gives them to thaw; DuckDB: the "
              "query, planning from the metadata file included), not its interpreter's start or imports (process = "
              "the peer process's wall time); CPU s: peer = the peer process. serve: time = the consumer's clock "
              "from assign() to the end; thaw = the serve process during the read. Targets: thaw's full "
              f"read >= 1.0x each peer; serve cold from the store >= 0.8x from local files; {lat} costs <= "
              f"{LATENCY_MAX_COST * 100:.0f} % against +relay.")


def _moto_version():
    try:
        import moto
        return moto.__version__
    except Exception:  # pragma: no cover
        return "?"


if __name__ == "__main__":
    main()
