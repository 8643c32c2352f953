"""archive's data path on a real broker: archive::KafkaSource reads a topic
(read_committed, assigned partitions, start/stop offsets, positions past
transaction markers and aborted transactions, a prompt stop) and
parquet::DataFileWriter writes what it read; driven through
tests/tools/kafka_source_tool.cc and checked against confluent-kafka's own
read_committed consumer and pyarrow.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest


@pytest.fixture(scope="session")
def tool(thaw_bin) -> Path:
    p = Path(thaw_bin).parent / "thaw_kafka_source_tool"
    if not p.is_file():
        pytest.fail(f"{p} is missing: build the thaw_kafka_source_tool target", pytrace=False)
    return p


def run(tool, kafka, topic, *args, timeout=120):
    p = subprocess.run([str(tool), "--brokers", kafka.bootstrap, "--topic", topic, *args],
                       capture_output=True, text=True, timeout=timeout)
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert (p.returncode == 0) == out["ok"], p.stderr
    return out


def settle(kafka, topic, timeout=30.0):
    """Waits until every partition's last stable offset reaches its high
    watermark (transaction markers land just after a commit returns)."""
    until = time.monotonic() + timeout
    while True:
        committed = kafka.offsets(topic, "read_committed")
        if committed == kafka.offsets(topic, "read_uncommitted") or time.monotonic() > until:
            return committed
        time.sleep(0.2)


def as_tool_record(r):
    h = lambda b: None if b is None else b.hex()  # noqa: E731
    return {"partition": r["partition"], "offset": r["offset"], "timestamp": r["timestamp"],
            "timestamp_type": 1 if r["timestamp_type"] == "LogAppendTime" else 0,
            "key": h(r["key"]), "value": h(r["value"]),
            "headers": [[k.encode().hex(), h(v)] for k, v in r["headers"]]}


def make_topic(kafka, topic):
    """Partition 0: plain records (null key, empty key, tombstone, duplicate
    and null headers, a 2 MiB value). Partition 1: committed transactions,
    an aborted one in the middle and one at the end (so the partition ends
    with aborted records and their marker: no record at its last offsets)."""
    kafka.create_topic(topic, partitions=2)
    p = kafka.producer()
    p.produce(topic, partition=0, key=b"k1", value=b"v1", timestamp=1_700_000_000_123,
              headers=[("a", b"1"), ("a", None), ("b", b""), ("a", b"3")])
    p.produce(topic, partition=0, key=None, value=b"no key", timestamp=1_700_000_000_100)
    p.produce(topic, partition=0, key=b"", value=None, timestamp=1_700_000_000_200)
    p.produce(topic, partition=0, key=b"big", value=bytes(range(256)) * (8 << 10),
              timestamp=1_700_000_000_300, headers=[("h", b"v")])
    for i in range(20):
        p.produce(topic, partition=0, key=f"key-{i}".encode(), value=b"x" * (1000 + i),
                  timestamp=1_700_000_001_000 + i)
    assert p.flush(30) == 0
    t = kafka.producer(transactional_id=f"{topic}-txn")
    t.init_transactions(30)

    def txn(values, commit):
        t.begin_transaction()
        for v in values:
            t.produce(topic, partition=1, key=v, value=v, headers=[("txn", v)])
        assert t.flush(30) == 0
        (t.commit_transaction if commit else t.abort_transaction)(30)

    txn([b"a", b"b"], True)
    txn([b"c", b"d"], False)
    txn([b"e", b"f", b"g"], True)
    txn([b"h", b"i"], False)
    return settle(kafka, topic)


def test_reads_committed_records_and_positions_past_gaps(kafka, tool, tmp_path):
    topic = "source-rich"
    ends = make_topic(kafka, topic)
    expected = [as_tool_record(r) for r in kafka.consume_all(topic)]
    out = run(tool, kafka, topic, "--from", "earliest", "--max-bytes", "100000", "--parquet", str(tmp_path / "pq"))
    assert out["ok"], out
    assert out["start"] == {"0": 0, "1": 0}
    assert out["stop"] == {str(p): end for p, (_, end) in ends.items()}
    got = sorted(out["records"], key=lambda r: (r["partition"], r["offset"]))
    assert got == expected
    assert [r["value"] for r in got if r["partition"] == 1] == [v.hex() for v in (b"a", b"b", b"e", b"f", b"g")]
    # Partition 1 ends with an aborted transaction and its marker: the
    # position is past them, at the end, not after the last record.
    last = max(r["offset"] for r in got if r["partition"] == 1)
    assert ends[1][1] > last + 1
    assert out["positions"] == {"0": ends[0][1], "1": ends[1][1]}
    assert out["done"] is True
    assert out["polls"] > 1  # --max-bytes cut the reading into several polls

    # What the source read, written by DataFileWriter: pyarrow reads the same
    # records, with the canonical field ids; the metrics match the rows.
    assert len(out["files"]) == 2
    for f in out["files"]:
        t = pq.read_table(f["path"])
        assert f["record_count"] == t.num_rows
        assert t.schema.field("kafka_offset").metadata[b"PARQUET:field_id"] == b"2"
        rows = t.to_pylist()
        part = rows[0]["kafka_partition"]
        want = [r for r in expected if r["partition"] == part]
        assert [r["kafka_offset"] for r in rows] == [r["offset"] for r in want]
        for row, r in zip(rows, want):
            assert (row["key"].hex() if row["key"] is not None else None) == r["key"]
            assert (row["value"].hex() if row["value"] is not None else None) == r["value"]
            assert [[h["key"].encode().hex(), h["value"].hex() if h["value"] is not None else None]
                    for h in row["headers"]] == r["headers"]
            assert int(row["kafka_timestamp"].timestamp() * 1000) == r["timestamp"]
        assert f["value_counts"]["2"] == len(rows)
        assert f["null_value_counts"]["5"] == sum(1 for r in rows if r["key"] is None)
        assert f["null_value_counts"]["6"] == sum(1 for r in rows if r["value"] is None)
        offsets = [r["kafka_offset"] for r in rows]
        assert f["lower_bounds"]["2"] == min(offsets).to_bytes(8, "little", signed=True).hex()
        assert f["upper_bounds"]["2"] == max(offsets).to_bytes(8, "little", signed=True).hex()


def test_resume_partitions_latest_and_errors(kafka, tool):
    topic = "source-resume"
    ends = make_topic(kafka, topic)
    # Resume partition 0 at offset 3: the 2 MiB record onwards; partition 1 only.
    out = run(tool, kafka, topic, "--partitions", "0", "--resume", "0=3")
    assert out["ok"], out
    assert out["start"] == {"0": 3} and out["stop"] == {"0": ends[0][1]}
    assert [r["offset"] for r in out["records"]] == list(range(3, ends[0][1]))
    # latest: nothing to read, done at once.
    out = run(tool, kafka, topic, "--from", "latest")
    assert out["ok"] and out["records"] == [] and out["done"], out
    assert out["positions"] == {str(p): end for p, (_, end) in ends.items()}
    # A table position at the end of a partition reads nothing there.
    out = run(tool, kafka, topic, "--resume", f"1={ends[1][1]}", "--partitions", "1")
    assert out["ok"] and out["records"] == [], out

    out = run(tool, kafka, "source-no-such-topic")
    assert not out["ok"] and out["code"] == "not found", out
    assert f"topic 'source-no-such-topic' does not exist on brokers '{kafka.bootstrap}'" in out["error"]
    out = run(tool, kafka, topic, "--partitions", "7")
    assert not out["ok"] and out["code"] == "invalid argument" and "no partition 7" in out["error"], out
    out = run(tool, kafka, topic, "--resume", f"0={ends[0][1] + 5}")
    assert not out["ok"] and out["code"] == "aborted" and "re-created" in out["error"], out
    out = run(tool, kafka, topic, "-X", "isolation.level=read_uncommitted")
    assert not out["ok"] and "isolation.level" in out["error"], out


def test_resume_below_log_start_is_refused(kafka, tool):
    import confluent_kafka as ck
    topic = "source-retention"
    kafka.create_topic(topic, partitions=1)
    p = kafka.producer()
    for i in range(10):
        p.produce(topic, partition=0, value=f"v{i}".encode())
    assert p.flush(30) == 0
    fs = kafka.admin().delete_records([ck.TopicPartition(topic, 0, 6)])
    for f in fs.values():
        f.result(30)
    out = run(tool, kafka, topic, "--resume", "0=4")
    assert not out["ok"] and out["code"] == "aborted", out
    assert "resumes at offset 4" in out["error"] and "starts at offset 6" in out["error"], out
    # A fresh start (no table offset) begins at the log start.
    out = run(tool, kafka, topic, "--from", "2")
    assert out["ok"] and out["start"] == {"0": 6}, out
    assert [r["offset"] for r in out["records"]] == [6, 7, 8, 9]


def test_open_transaction_bounds_the_run_and_stop_is_prompt(kafka, tool):
    topic = "source-open-txn"
    kafka.create_topic(topic, partitions=1)
    p = kafka.producer()
    for i in range(5):
        p.produce(topic, partition=0, value=f"v{i}".encode())
    assert p.flush(30) == 0
    t = kafka.producer(transactional_id=f"{topic}-txn")
    t.init_transactions(30)
    t.begin_transaction()
    t.produce(topic, partition=0, value=b"open")
    assert t.flush(30) == 0  # left open: past the last stable offset
    try:
        # Without follow the run stops at the last stable offset (5), not the
        # high watermark, and does not wait for the open transaction.
        out = run(tool, kafka, topic, "--from", "earliest")
        assert out["ok"] and out["stop"] == {"0": 5} and out["done"], out
        assert [r["offset"] for r in out["records"]] == [0, 1, 2, 3, 4]
        # Following, a stop ends the wait at once.
        out = run(tool, kafka, topic, "--from", "earliest", "--follow-ms", "60000", "--stop-after-ms", "1500")
        assert out["ok"], out
        assert out["seconds"] < 5, out
        assert out["stop"] == {} and out["done"] is False
        assert out["positions"] == {"0": 5}
    finally:
        t.abort_transaction(30)
        t.close() if hasattr(t, "close") else None


def test_parquet_on_s3_appears_on_finish_and_aborts_cleanly(kafka, tool, s3_store):
    """DataFileWriter through the object-store FileIO: a finished file is the
    object (its size the DataFile's file_size), read back by pyarrow; an
    aborted one -- large enough for a multipart upload -- leaves no object
    and no pending upload."""
    import io
    import os
    topic = "source-s3"
    kafka.create_topic(topic, partitions=1)
    p = kafka.producer()
    values = [os.urandom(1 << 20) for _ in range(12)]  # incompressible: > 5 MiB parts
    for i, v in enumerate(values):
        p.produce(topic, partition=0, key=f"k{i}".encode(), value=v, headers=[("i", str(i).encode())])
    assert p.flush(30) == 0
    props = []
    for k, v in s3_store.props().items():
        props += ["-p", f"{k}={v}"]
    c = s3_store.client()

    out = run(tool, kafka, topic, "--parquet", f"s3://{s3_store.bucket}/source-s3/done", *props)
    assert out["ok"], out
    (f,) = out["files"]
    key = f["path"].removeprefix(f"s3://{s3_store.bucket}/")
    body = c.get_object(Bucket=s3_store.bucket, Key=key)["Body"].read()
    assert len(body) == f["file_size"]
    t = pq.read_table(io.BytesIO(body))
    assert t.column("value").to_pylist() == values
    assert [h[0]["value"] for h in t.column("headers").to_pylist()] == [str(i).encode() for i in range(12)]
    assert len(f["split_offsets"]) == pq.ParquetFile(io.BytesIO(body)).metadata.num_row_groups > 1

    out = run(tool, kafka, topic, "--parquet", f"s3://{s3_store.bucket}/source-s3/aborted", "--abort", *props)
    assert out["ok"], out
    assert out["written_before_abort"] > 5 << 20, out
    assert s3_store.list_keys("source-s3/aborted") == []
    assert not c.list_multipart_uploads(Bucket=s3_store.bucket).get("Uploads"), "an aborted upload is left pending"
