"""The peers of the object-store benchmark (issue 19), run by bench/object_store_bench.py as processes of their own
(one per measurement, like thaw), each printing one JSON line:

  pyarrow --files F.json [--endpoint http://HOST:PORT]
      pyarrow.dataset over pyarrow.fs.S3FileSystem (same endpoint, keys, region, path-style as thaw; without
      --endpoint: the local filesystem) scanning the table's data files (F.json: [{"path", "size"}], the manifest's
      paths and file_size_in_bytes, planned by the bench beforehand, so no HEAD is needed, as for thaw) for the
      columns thaw reads (kafka_partition, kafka_offset, kafka_timestamp, kafka_timestamp_type, key, value,
      headers): Dataset.to_batches(columns=..., use_threads=True) -- pyarrow's default, the "threads" setting of
      bench/pyarrow_scan.py -- counting rows and the key/value bytes. Parquet pre-buffering is on (pyarrow's
      default: coalesced column-chunk reads on the IO thread pool).
      {"records", "bytes", "seconds"}: seconds from creating the filesystem to the last batch (the interpreter's
      start and the imports are not counted; thaw's process wall time counts its start and its planning).

  duckdb --metadata LOC [--endpoint http://HOST:PORT]
      DuckDB's iceberg_scan(LOC) (LOC = the table's current metadata file, s3://... or a local path), the httpfs
      extension configured for the endpoint through CREATE SECRET (TYPE s3, KEY_ID, SECRET, REGION, ENDPOINT,
      URL_STYLE 'path', USE_SSL false); avro, iceberg and httpfs are INSTALLed from their PyPI wheels
      (duckdb-extension-*, the version of duckdb) with autoinstall and autoload off, as
      tests/integration/iceberg_readers.py loads avro and iceberg: nothing is downloaded. The query aggregates
      every column thaw reads (count, sums of key/value/header lengths, of offsets, partitions, max timestamp),
      so every column chunk is read and decoded; DuckDB's default threads (one per core).
      {"records", "bytes", "seconds"}: seconds of the query (planning from the metadata file included;
      loading the extensions and creating the secret not).

  duckdb-probe [--s3]
      Loads the extensions (with --s3 also httpfs); prints {"ok": true} or {"ok": false, "error": ...}.

  consume --brokers HOST:PORT --topic T
      The fallback of bench/consume_bench.cc's `read` mode when build/bin/consume_bench is not built: the
      confluent-kafka (librdkafka) consumer, same settings (assign every partition from its log start,
      fetch.message.max.bytes=1 MiB, check.crcs=false), reading until every partition reached the high watermark
      queried first; bytes = key + value + header keys + values. Prints consume_bench's JSON
      ({"mode":"read","records","bytes","seconds","mb_s","errors"}), seconds from assign() to the end.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ACCESS_KEY, SECRET_KEY, REGION = "bench", "bench-secret", "us-east-1"
COLUMNS = ["kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_timestamp_type", "key", "value", "headers"]


def scan_pyarrow(files: list[dict], endpoint: str | None) -> dict:
    import pyarrow.dataset as ds
    from pyarrow import fs as pafs

    t0 = time.monotonic()
    if endpoint:
        fs = pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION, scheme="http",
                               endpoint_override=endpoint.removeprefix("http://"))
        paths = [f["path"].split("://", 1)[1] for f in files]          # bucket/key
    else:
        fs = pafs.LocalFileSystem()
        paths = [f["path"].removeprefix("file://") for f in files]
    fmt = ds.ParquetFileFormat()
    frags = [fmt.make_fragment(p, filesystem=fs, file_size=f["size"]) for p, f in zip(paths, files)]
    dataset = ds.FileSystemDataset(frags, frags[0].physical_schema, fmt, fs)
    records = nbytes = 0
    for b in dataset.to_batches(columns=COLUMNS, use_threads=True):
        records += b.num_rows
        nbytes += b.column("key").nbytes + b.column("value").nbytes
    return {"records": records, "bytes": nbytes, "seconds": round(time.monotonic() - t0, 4), "files": len(files)}


def duckdb_connect(s3: bool):
    """DuckDB with avro + iceberg (+ httpfs) from their wheels, nothing downloaded (iceberg_readers.duckdb_connect,
    plus httpfs)."""
    import duckdb

    ext_dir = tempfile.mkdtemp(prefix="thaw-objstore-duckdb-ext-")
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false",
                                 "extension_directory": ext_dir})
    con.execute("SET enable_progress_bar = false")
    ver = con.sql("PRAGMA version").fetchone()[0]
    for name in (("httpfs",) if s3 else ()) + ("avro", "iceberg"):
        try:
            mod = importlib.import_module(f"duckdb_extension_{name}")
        except ImportError as e:
            raise RuntimeError(f"no Python package duckdb-extension-{name} ({e}); pip install "
                               f"duckdb-extension-{name}=={duckdb.__version__} (scripts/deps/requirements-test.txt)")
        path = Path(mod.__file__).parent / "extensions" / ver / f"{name}.duckdb_extension"
        if not path.is_file():
            raise RuntimeError(f"DuckDB {ver}: no {name} extension at {path} (duckdb-extension-{name} must match "
                               f"duckdb's version)")
        con.execute(f"INSTALL '{path}'")
        con.execute(f"LOAD {name}")
    return con, ext_dir


def scan_duckdb(metadata: str, endpoint: str | None) -> dict:
    con, ext_dir = duckdb_connect(s3=bool(endpoint))
    try:
        if endpoint:
            host = endpoint.removeprefix("http://")
            con.execute(f"CREATE SECRET bench_s3 (TYPE s3, KEY_ID '{ACCESS_KEY}', SECRET '{SECRET_KEY}', "
                        f"REGION '{REGION}', ENDPOINT '{host}', URL_STYLE 'path', USE_SSL false)")
        loc = metadata if endpoint else metadata.removeprefix("file://")
        loc = loc.replace("'", "''")
        t0 = time.monotonic()
        row = con.execute(
            "SELECT count(*), sum(octet_length(key)), sum(octet_length(value)), "
            "sum(list_sum(list_transform(headers, h -> octet_length(h.value) + length(h.key)))), "
            "sum(kafka_offset), sum(kafka_partition), epoch_us(max(kafka_timestamp)), max(kafka_timestamp_type) "
            f"FROM iceberg_scan('{loc}')").fetchone()
        secs = time.monotonic() - t0
    finally:
        con.close()
        shutil.rmtree(ext_dir, True)
    return {"records": row[0], "bytes": int((row[1] or 0) + (row[2] or 0)), "seconds": round(secs, 4),
            "threads": os.cpu_count()}


def consume(brokers: str, topic: str, timeout: float = 600) -> dict:
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    conf = {"bootstrap.servers": brokers, "enable.auto.commit": False, "enable.auto.offset.store": False,
            "enable.partition.eof": True, "fetch.message.max.bytes": 1 << 20, "check.crcs": False}
    d = Consumer({**conf, "group.id": "objstore-bench-describe"})
    md = d.list_topics(topic, timeout=30).topics[topic]
    if md.error is not None:
        raise SystemExit(f"consume: cannot describe {topic} at {brokers}: {md.error}")
    ends = {}
    starts = {}
    for p in sorted(md.partitions):
        lo, hi = d.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
        starts[p], ends[p] = lo, hi
    d.close()
    c = Consumer({**conf, "group.id": "objstore-bench-read"})
    c.list_topics(topic, timeout=30)
    pending = {p for p in ends if ends[p] > starts[p]}
    records = nbytes = errors = 0
    t0 = time.monotonic()
    c.assign([TopicPartition(topic, p, starts[p]) for p in sorted(pending)])
    deadline = t0 + timeout
    while pending:
        if time.monotonic() > deadline:
            errors += 1
            print(f"consume: timeout with {len(pending)} partitions unfinished", file=sys.stderr)
            break
        for m in c.consume(num_messages=10000, timeout=0.2):
            p = m.partition()
            err = m.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    if p in pending and m.offset() >= ends[p]:
                        pending.discard(p)
                else:
                    errors += 1
                    if errors <= 5:
                        print(f"consume: {err}", file=sys.stderr)
                continue
            if p not in pending:
                continue
            o = m.offset()
            if o < ends[p]:
                records += 1
                k, v = m.key(), m.value()
                nbytes += (len(k) if k else 0) + (len(v) if v else 0)
                hs = m.headers()
                if hs:
                    nbytes += sum(len(hk) + (len(hv) if hv else 0) for hk, hv in hs)
            if o + 1 >= ends[p]:
                pending.discard(p)
                c.pause([TopicPartition(topic, p)])
    secs = time.monotonic() - t0
    c.close()
    return {"mode": "read", "records": records, "bytes": nbytes, "seconds": round(secs, 3),
            "mb_s": round(nbytes / secs / 1e6, 1), "errors": errors, "consumer": "confluent-kafka (python)"}


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pyarrow")
    p.add_argument("--files", required=True)
    p.add_argument("--endpoint")
    d = sub.add_parser("duckdb")
    d.add_argument("--metadata", required=True)
    d.add_argument("--endpoint")
    pr = sub.add_parser("duckdb-probe")
    pr.add_argument("--s3", action="store_true")
    c = sub.add_parser("consume")
    c.add_argument("--brokers", required=True)
    c.add_argument("--topic", required=True)
    a = ap.parse_args()
    if a.cmd == "pyarrow":
        out = scan_pyarrow(json.loads(Path(a.files).read_text()), a.endpoint)
    elif a.cmd == "duckdb":
        out = scan_duckdb(a.metadata, a.endpoint)
    elif a.cmd == "duckdb-probe":
        try:
            con, ext_dir = duckdb_connect(a.s3)
            ver = con.sql("PRAGMA version").fetchone()[0]
            con.close()
            shutil.rmtree(ext_dir, True)
            out = {"ok": True, "version": ver}
        except Exception as e:  # noqa: BLE001 -- reported, not raised: the bench goes on without this peer
            out = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    else:
        out = consume(a.brokers, a.topic)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
