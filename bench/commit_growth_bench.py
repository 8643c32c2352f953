"""Driver of bench/commit_growth_bench.sh (its header says what is measured)."""
from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import uuid

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 64
COMMIT = re.compile(r"commit (\d+): snapshot (-?\d+), (\d+) data files, ([0-9.]+) ms")


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def metadata_path(db: str) -> str:
    con = sqlite3.connect(db)
    try:
        (loc,) = con.execute("SELECT metadata_location FROM iceberg_tables WHERE table_name = 'growth'").fetchone()
    finally:
        con.close()
    return loc.removeprefix("file://")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--thaw", required=True)
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--interval", default="100ms")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    topic = f"growth-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": a.bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    time.sleep(2)
    stop = threading.Event()

    def produce():
        p = Producer({"bootstrap.servers": a.bootstrap, "linger.ms": 5})
        i = 0
        while not stop.is_set():
            for part in range(PARTITIONS):
                p.produce(topic, value=b"v" * 100, key=str(i).encode(), partition=part)
            i += 1
            p.poll(0)
            time.sleep(0.01)
        p.flush(30)

    th = threading.Thread(target=produce, daemon=True)
    th.start()
    db = os.path.join(a.work, "catalog.db")
    uri = f"sqlite:///{db}"
    proc = subprocess.Popen([a.thaw, "archive", "--brokers", a.bootstrap, "--topic", topic, "--catalog", uri,
                             "--table", "bench.growth", "--create", "--warehouse", a.work, "--follow",
                             "--commit-interval", a.interval, "--verbose", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    lat: dict[int, float] = {}
    sizes: dict[int, int] = {}
    t0 = time.monotonic()
    props_set = False
    tail: list[str] = []
    for raw in iter(proc.stderr.readline, b""):
        line = raw.decode("utf-8", "replace")
        tail = (tail + [line])[-20:]
        m = COMMIT.search(line)
        if not m:
            continue
        n = int(m.group(1))
        lat[n] = float(m.group(4))
        if not props_set and n >= 2:
            # Iceberg's metadata-file expiry, as a team running archive for weeks would set it.
            subprocess.run([sys.executable, "-c", f"""
from pyiceberg.catalog.sql import SqlCatalog
c = SqlCatalog("default", uri="sqlite:///{db}", warehouse="file://{a.work}")
t = c.load_table("bench.growth")
with t.transaction() as tx:
    tx.set_properties({{"write.metadata.delete-after-commit.enabled": "true",
                       "write.metadata.previous-versions-max": "10"}})
"""], check=True)
            props_set = True
        if n in (100, 500, 1000) or n % 1000 == 0 or n == a.commits:
            sizes[n] = os.path.getsize(metadata_path(db))
        if n >= a.commits:
            break
    seconds = time.monotonic() - t0
    if not lat:
        print("thaw archive ended without a commit:\n" + "".join(tail), file=sys.stderr)
        return 1
    proc.terminate()
    proc.wait(60)
    stop.set()
    th.join(60)
    md_path = metadata_path(db)
    md = json.load(open(md_path))
    from pyiceberg.catalog.sql import SqlCatalog
    table = SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=f"file://{a.work}").load_table("bench.growth")
    manifests = len(table.current_snapshot().manifests(table.io))
    meta_dir = os.path.dirname(md_path)
    files = len([f for f in os.listdir(meta_dir) if f.endswith(".metadata.json")])

    def around(n):
        xs = [lat[k] for k in range(max(1, n - 25), n + 25) if k in lat]
        return statistics.median(xs), pct(xs, 0.99)

    p50_100, p99_100 = around(100)
    p50_end, p99_end = around(max(lat) - 25)
    out = {"commits": max(lat), "interval": a.interval, "partitions": PARTITIONS, "seconds": round(seconds, 1),
           "p50_ms_at_100": round(p50_100, 1), "p99_ms_at_100": round(p99_100, 1),
           "p50_ms_at_end": round(p50_end, 1), "p99_ms_at_end": round(p99_end, 1),
           "p99_ratio": round(p99_end / p99_100, 2), "manifests_at_end": manifests,
           "metadata_json_bytes": sizes, "metadata_files_kept": files}
    print("RESULT " + json.dumps(out))
    print(f"commit latency p50/p99: {p50_100:.1f}/{p99_100:.1f} ms at commit 100, {p50_end:.1f}/{p99_end:.1f} ms "
          f"at commit {max(lat)} ({p99_end / p99_100:.2f}x); {manifests} manifests in the last snapshot; "
          f"metadata.json {sizes.get(max(sizes), 0) / 2**20:.2f} MiB at the end ({len(md['snapshots'])} snapshots); "
          f"{files} metadata files kept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
