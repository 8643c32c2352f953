"""Kafka record batches v2 (src/thaw/kafka/protocol/record_batch.h) against
real peers, through tests/tools/batch_tool.cc (`thaw_batch_tool`, built next
to `thaw`):

* Java reads what Thaw encodes: Kafka's own MemoryRecords/DefaultRecordBatch
  (tests/integration/java/CheckBatches.java) validate the CRC and decode every
  record, for every codec.
* Thaw reads what real producers write: librdkafka (confluent-kafka) and the
  Java producer (xerial snappy, Java's LZ4 writer) produce to a real broker
  with each compression.type; Thaw decodes the broker's log segments.
"""

from __future__ import annotations

import base64
import glob
import json
import os
import random
import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["kafka_broker"]

REPO = Path(__file__).resolve().parents[2]
JAVA_DIR = REPO / "tests" / "integration" / "java"
KAFKA_LIB = REPO / ".deps" / "kafka" / "lib"
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def b64(b: bytes | None):
    return None if b is None else base64.b64encode(b).decode()


def unb64(s: str | None):
    return None if s is None else base64.b64decode(s)


@pytest.fixture(scope="module")
def batch_tool() -> Path:
    env = os.environ.get("THAW_BATCH_TOOL")
    if env:
        p = Path(env)
    elif os.environ.get("THAW_BIN"):
        p = Path(os.environ["THAW_BIN"]).parent / "thaw_batch_tool"
    else:
        p = REPO / "build" / "bin" / "thaw_batch_tool"
    if not (p.is_file() and os.access(p, os.X_OK)):
        pytest.fail(f"thaw_batch_tool not found at {p}: build it (ninja -C build thaw_batch_tool) "
                    "or set THAW_BATCH_TOOL", pytrace=False)
    return p


def java(*args: str, stdin: bytes | None = None, timeout: float = 180) -> str:
    if not any(KAFKA_LIB.glob("kafka-clients-*.jar")):
        pytest.fail(f"no Kafka jars in {KAFKA_LIB}: run scripts/deps/install-kafka.sh", pytrace=False)
    p = subprocess.run(["java", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                        "-cp", f"{KAFKA_LIB}/*", *args],
                       input=stdin, capture_output=True, timeout=timeout)
    assert p.returncode == 0, f"java {args[0]} failed:\n{p.stderr.decode(errors='replace')[-4000:]}"
    return p.stdout.decode()


def sample_records(seed: int, count: int = 60, first_offset: int = 1000) -> list[dict]:
    """Varied records: null and empty keys, tombstones, empty values, binary,
    repeated header keys and null header values, gaps in offsets, timestamps
    that go back and forth, one 1 MiB value."""
    rnd = random.Random(seed)
    out, off = [], first_offset
    for i in range(count):
        key = [None, b"", b"k-%d" % i, rnd.randbytes(rnd.randint(1, 40))][i % 4]
        value = [None, b"", b"value %d " % i * rnd.randint(1, 50), rnd.randbytes(rnd.randint(1, 3000))][(i // 4) % 4]
        if i == count // 2:
            value = rnd.randbytes(1 << 19) * 2   # 1 MiB, half compressible
        headers = []
        for h in range(i % 4):
            headers.append([("h%d" % (h % 2)) if h != 3 else "ünï", None if (i + h) % 3 == 0 else rnd.randbytes(h * 5)])
        out.append({"offset": off, "timestamp": 1_700_000_000_000 + rnd.randint(-5000, 5000),
                    "key": b64(key), "value": b64(value), "headers": headers_b64(headers)})
        off += 1 if i % 7 else rnd.randint(2, 1000)   # gaps
    return out


def headers_b64(headers):
    return [[k, b64(v)] for k, v in headers]


def encode(tool: Path, records: list[dict], out: Path, codec: str, batch_records: int, epoch: int = 0) -> None:
    lines = "".join(json.dumps(r) + "\n" for r in records).encode()
    p = subprocess.run([str(tool), "encode", "--compression", codec, "--batch-records", str(batch_records),
                        "--leader-epoch", str(epoch), str(out)], input=lines, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()


def decode(tool: Path, path: Path | str) -> tuple[list[dict], dict]:
    p = subprocess.run([str(tool), "decode", str(path)], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    lines = [json.loads(line) for line in p.stdout.decode().splitlines()]
    return lines[:-1], lines[-1]


# ---------------------------------------------------------------------------
# (a) Kafka's Java classes read what Thaw writes


@pytest.mark.parametrize("codec", CODECS)
def test_java_reads_thaw_batches(batch_tool, tmp_path, codec):
    records = sample_records(seed=CODECS.index(codec))
    path = tmp_path / f"{codec}.batches"
    encode(batch_tool, records, path, codec, batch_records=25, epoch=5)
    lines = [json.loads(line) for line in java(str(JAVA_DIR / "CheckBatches.java"), str(path)).splitlines()]
    assert lines[-1] == {"batches": 3}
    batches = [line["batch"] for line in lines if "batch" in line]
    got = [line for line in lines[:-1] if "batch" not in line]
    for i, b in enumerate(batches):
        chunk = records[25 * i:25 * (i + 1)]
        assert b["base_offset"] == chunk[0]["offset"]
        assert b["last_offset"] == chunk[-1]["offset"]
        assert b["count"] == len(chunk)
        assert b["magic"] == 2
        assert b["compression"] == codec
        assert b["timestamp_type"] == "CreateTime"
        assert b["max_timestamp"] == max(r["timestamp"] for r in chunk)
        assert b["leader_epoch"] == 5
        assert (b["producer_id"], b["producer_epoch"], b["base_sequence"]) == (-1, -1, -1)
    want = [{**r, "timestamp_type": "CreateTime"} for r in records]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == w


def test_java_reads_log_append_time_batches(batch_tool, tmp_path):
    records = [{"offset": 10 + i, "timestamp": 1_700_000_123_456, "timestamp_type": "log_append",
                "key": b64(b"k%d" % i), "value": b64(b"v" * i), "headers": []} for i in range(5)]
    path = tmp_path / "lat.batches"
    encode(batch_tool, records, path, "zstd", batch_records=5)
    lines = [json.loads(line) for line in java(str(JAVA_DIR / "CheckBatches.java"), str(path)).splitlines()]
    assert lines[0]["batch"]["timestamp_type"] == "LogAppendTime"
    assert lines[0]["batch"]["max_timestamp"] == 1_700_000_123_456
    got = lines[1:-1]
    assert [(g["offset"], g["timestamp"], g["timestamp_type"]) for g in got] == \
        [(r["offset"], r["timestamp"], "LogAppendTime") for r in records]


# ---------------------------------------------------------------------------
# (b) Thaw reads what real producers write (the broker keeps the producer's
# batches as they are with compression.type=producer)


def segment_file(kafka, topic: str) -> Path:
    assert kafka.dir, "needs a broker started by the harness (its log dir)"
    logs = sorted(glob.glob(os.path.join(kafka.dir, "data", f"{topic}-0", "*.log")))
    assert len(logs) == 1, logs
    return Path(logs[0])


def produced(records: list[dict]) -> list[dict]:
    return [{"key": unb64(r["key"]), "value": unb64(r["value"]), "timestamp": r["timestamp"],
             "headers": [(k, unb64(v)) for k, v in r["headers"]]} for r in records]


def decoded_records(lines: list[dict]) -> list[dict]:
    return [{"key": unb64(g["key"]), "value": unb64(g["value"]), "timestamp": g["timestamp"],
             "headers": [(k, unb64(v)) for k, v in g["headers"]]} for g in lines]


def check_segment(kafka, batch_tool, topic, records, codec, timestamp_type="create", also=()):
    """`also`: codecs some batches may have instead (librdkafka sends a batch
    uncompressed when compressing does not make it smaller)."""
    lines, summary = decode(batch_tool, segment_file(kafka, topic))
    assert summary["partial_tail_bytes"] == 0
    assert summary["records"] == len(records)
    assert codec in {g["compression"] for g in lines}
    assert {g["compression"] for g in lines} <= {codec, *also}
    assert {g["timestamp_type"] for g in lines} == {timestamp_type}
    assert [g["offset"] for g in lines] == list(range(len(records)))
    assert not any(g["control"] for g in lines)
    # What a real consumer (librdkafka, check.crcs) reads from the broker.
    consumed = kafka.consume_all(topic)
    assert [(c["offset"], c["timestamp"]) for c in consumed] == [(g["offset"], g["timestamp"]) for g in lines]
    return lines, summary


@pytest.mark.parametrize("codec", CODECS)
def test_thaw_reads_librdkafka_batches(kafka, batch_tool, codec):
    topic = f"batch-peers-rdkafka-{codec}"
    kafka.create_topic(topic, partitions=1)
    records = sample_records(seed=10 + CODECS.index(codec), count=80)
    p = kafka.producer(compression_type=codec, linger_ms=50, batch_size=4 << 20, batch_num_messages=30)
    errors = []
    for r in produced(records):
        p.produce(topic, partition=0, key=r["key"], value=r["value"], timestamp=r["timestamp"],
                  headers=r["headers"], on_delivery=lambda err, msg: err and errors.append(err))
        p.poll(0)
    assert p.flush(60) == 0 and not errors, errors
    lines, summary = check_segment(kafka, batch_tool, topic, records, codec)
    assert summary["batches"] > 1
    assert decoded_records(lines) == produced(records)


def test_thaw_reads_log_append_time_batches(kafka, batch_tool):
    topic = "batch-peers-log-append-time"
    kafka.create_topic(topic, partitions=1, config={"message.timestamp.type": "LogAppendTime"})
    records = sample_records(seed=99, count=20)
    p = kafka.producer(compression_type="lz4", linger_ms=50)
    for r in produced(records):
        p.produce(topic, partition=0, key=r["key"], value=r["value"], timestamp=r["timestamp"],
                  headers=r["headers"])
    assert p.flush(60) == 0
    lines, _ = check_segment(kafka, batch_tool, topic, records, "lz4", timestamp_type="log_append",
                             also=("none",))
    # The broker's time, not the producer's: every record shows its batch's.
    assert all(g["timestamp"] > 1_700_000_010_000 for g in lines)
    assert [dict(d, timestamp=0) for d in decoded_records(lines)] == [dict(r, timestamp=0) for r in produced(records)]


@pytest.mark.parametrize("codec", CODECS)
def test_thaw_reads_java_producer_batches(kafka, batch_tool, codec):
    topic = f"batch-peers-java-{codec}"
    kafka.create_topic(topic, partitions=1)
    records = sample_records(seed=20 + CODECS.index(codec), count=80)
    lines = "".join(json.dumps(r) + "\n" for r in records).encode()
    java(str(JAVA_DIR / "ProduceCodecs.java"), kafka.bootstrap, topic, codec, stdin=lines)
    if codec == "snappy":
        # Java writes snappy in xerial snappy-java framing: the decoder's
        # second path. The first batch's records start at byte 61.
        head = segment_file(kafka, topic).read_bytes()[61:69]
        assert head == b"\x82SNAPPY\x00", head
    got, _ = check_segment(kafka, batch_tool, topic, records, codec)
    assert decoded_records(got) == produced(records)
