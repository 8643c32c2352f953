"""`thaw replay` and `thaw serve` on a REST catalog + S3 store that misbehave (issue 9, "Faults").

Both real servers of lakehouse.py (Apache Iceberg's RESTCatalogServer and moto's S3 server) sit behind their
own fault_proxy.FaultProxy; Thaw talks to the proxies only (`--catalog <catalog proxy>` and
`--catalog-property s3.endpoint=<store proxy>`; the catalog vends the store's keys). The same table is written by
pyiceberg twice, with the same rows and operations: through the REST catalog into S3, and into a local SQLite
warehouse, whose records are the reference (`thaw inspect --records` on it for replay, as test_replay.py does;
pyiceberg's scan of it through oracle.py for serve, as the serve tests do).

* ~20 % of the requests to each server fail (503, SlowDown / 429, a connection reset mid-response, a slow
  answer): replay and serve still produce exactly the table's records, offsets included, and both proxies did
  inject faults that Thaw retried.
* Every request fails (retry budget exhausted): Thaw exits non-zero with a message naming the object or URL
  and the HTTP status; an exactly-once job that failed midway is safe to rerun, and the rerun after the faults
  stop completes it with every record exactly once (`--verify` agrees).
"""

from __future__ import annotations

import json
import re
import uuid
from urllib.parse import unquote
from dataclasses import dataclass

import pytest

import fixtures
from fault_proxy import FaultProxy
from serve_harness import Served, ThawServer, Topic, confluent_cmd
from test_replay import assert_replayed

TABLE = "faults.events"
PARTITIONS = 4
PER_PARTITION = 1500
ALL_FAULTS = ("503", "slowdown", "429", "reset", "slow")


def _records():
    """Records with gaps in the offsets, null and empty keys/values, duplicate and null headers, values up to
    ~6 KB; recent CreateTime timestamps (nothing a topic's retention would drop)."""
    import random
    import time
    rng = random.Random(9)
    base = int(time.time() * 1000) - 3_600_000
    out = []
    for p in range(PARTITIONS):
        off = 0
        for i in range(PER_PARTITION):
            off += 1 if i % 97 else 5  # a few gaps
            key = None if i % 50 == 0 else (b"" if i % 51 == 0 else f"key-{p}-{i % 37}".encode())
            value = None if i % 113 == 0 else rng.randbytes(rng.choice((0, 10, 300, 6000)))
            headers = [("h", f"{p}:{off}".encode())] + ([("h", None), ("dup", b"x")] if i % 7 == 0 else [])
            out.append(fixtures.rec(p, off, base + off, key, value, headers))
    return out


def _write(catalog, location: str | None, records):
    """The table, written the same way into either catalog: 3 appends (3 data files per partition),
    200-row row groups, then a copy-on-write delete of some offsets."""
    catalog.create_namespace_if_not_exists("faults")
    kw = {"location": location} if location else {}
    t = catalog.create_table(TABLE, schema=fixtures.canonical_schema(), partition_spec=fixtures.CANONICAL_SPEC,
                             properties={**fixtures.thaw_props("events"), "format-version": "2",
                                         "write.parquet.row-group-limit": "200"}, **kw)
    for chunk in fixtures.chunks(records, 3):
        fixtures.append_rows(t, [fixtures.canonical_row(r) for r in chunk])
    t.delete("kafka_partition = 1 and kafka_offset >= 300 and kafka_offset < 340")
    return catalog.load_table(TABLE)


def _deleted(r) -> bool:
    return r["partition"] == 1 and 300 <= r["offset"] < 340


EXPECTED = sum(1 for r in _records() if not _deleted(r))


@dataclass
class Lake:
    catalog_proxy: FaultProxy
    store_proxy: FaultProxy
    local_dir: str
    rest_table_location: str
    client_props: dict  # what a client needs besides the catalog's vended keys (endpoint, region, addressing)

    def args(self) -> list[str]:
        """--catalog/--catalog-property for the REST catalog + S3 store, through the proxies."""
        out = ["--catalog", self.catalog_proxy.url]
        for k, v in {**self.client_props, "s3.endpoint": self.store_proxy.url}.items():
            out += ["--catalog-property", f"{k}={v}"]
        return out

    def faults(self, rate: float, faults=ALL_FAULTS, store_filter=None) -> None:
        for p in (self.catalog_proxy, self.store_proxy):
            p.fault_rate, p.faults = rate, tuple(faults)
            p.reset_stats()
        self.store_proxy.fault_filter = store_filter
        self.catalog_proxy.fault_filter = None


@pytest.fixture(scope="module")
def lake(rest_catalog, s3_store, tmp_path_factory):
    records = _records()
    local = str(tmp_path_factory.mktemp("faults-local"))
    _write(fixtures.open_catalog(local), fixtures.table_location(local, TABLE), records)
    rest_table = _write(rest_catalog.pyiceberg(), None, records)
    assert rest_table.location().startswith("s3://"), rest_table.location()
    cat = FaultProxy(rest_catalog.uri, seed=1, slow_ms=700).start()
    store = FaultProxy(s3_store.endpoint, seed=2, slow_ms=700).start()
    try:
        yield Lake(cat, store, local, rest_table.location(), rest_catalog.client_props())
    finally:
        cat.stop()
        store.stop()


def local_records(thaw, lake: Lake) -> list[dict]:
    """The local table's records as `thaw inspect --records` reads them (the reference replay must match)."""
    p = thaw.ok("inspect", "--catalog", fixtures.catalog_uri(lake.local_dir), "--table", TABLE, "--records",
                "--format", "json")
    out = []
    for line in p.stdout.decode().splitlines():
        r = json.loads(line)
        b = fixtures.json_bytes
        out.append({"partition": r["partition"], "offset": r["offset"], "timestamp": r["timestamp"],
                    "key": b(r, "key"), "value": b(r, "value"),
                    "headers": [(h["key"], b(h, "value", "encoding")) for h in r["headers"]]})
    return out


def assert_faults_retried(stats: dict):
    """Both proxies injected faults, and Thaw came back after them ({"catalog": stats, "store": stats})."""
    for name, s in stats.items():
        assert s["faults_total"] >= 1, f"the {name} proxy injected no fault: {s}"
        assert s["requests"] > s["faults_total"], f"{name}: no request after the faults: {s}"


def topic_name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


# --------------------------------------------------------------------------- ~20 % faults


def test_replay_under_faults_is_exact(thaw, kafka, lake):
    want = local_records(thaw, lake)
    assert len(want) == EXPECTED
    lake.faults(0.2)
    topic = topic_name("faults-replay")
    p = thaw("replay", *lake.args(), "--table", TABLE, "--brokers", kafka.bootstrap, "--topic", topic,
             "--create-topic", "--json", timeout=600)
    stats = {"catalog": lake.catalog_proxy.stats(), "store": lake.store_proxy.stats()}
    lake.faults(0.0)
    assert p.returncode == 0, f"replay failed under 20% faults ({stats}):\n{p.stderr.decode()[-4000:]}"
    assert json.loads(p.stdout.decode().strip().splitlines()[-1])["records"] == len(want)
    got = kafka.consume_all(topic)
    assert_replayed(got, want, TABLE)
    assert_faults_retried(stats)
    # Faults of every kind hit the store (it sees most of the requests).
    assert set(stats["store"]["faults"]) >= {"503", "slowdown", "reset"}, stats["store"]


def test_serve_under_faults_is_exact(thaw_bin, thaw, lake, tmp_path):
    lake.faults(0.2)
    topics = [Topic("events", TABLE, "thaw")]
    srv = ThawServer(thaw_bin, lake.catalog_proxy.url, topics, tmp_path / "serve", refresh="1s",
                     extra=lake.args()[2:])
    try:
        srv.start(timeout=120)
        served = Served("thaw", srv.bootstrap, lake.catalog_proxy.url, lake.local_dir, topics, server=srv, thaw=thaw)
        p = served.run(confluent_cmd("-b", served.bootstrap, "-t", "events", "--timeout", "240"), timeout=300)
        served.check("events", served.parse(p.stdout), client="confluent-kafka assign, 20% faults")
        assert len(served.parse(p.stdout)) == EXPECTED
        stats = {"catalog": lake.catalog_proxy.stats(), "store": lake.store_proxy.stats()}
        # Serving on through the faults: the server is still up (its catalog refreshes met faults too).
        assert srv.alive(), srv.stderr()
        lake.faults(0.0)
        srv.stop()
    finally:
        lake.faults(0.0)
        srv.kill()
    assert_faults_retried(stats)


# --------------------------------------------------------------------------- retry budget exhausted


def test_catalog_down_names_the_url_and_status(thaw, kafka, lake):
    lake.faults(1.0, faults=("503",))
    lake.store_proxy.fault_rate = 0.0
    topic = topic_name("faults-down")
    p = thaw("replay", *lake.args(), "--table", TABLE, "--brokers", kafka.bootstrap, "--topic", topic,
             "--create-topic", timeout=300)
    tried = lake.catalog_proxy.stats()
    lake.faults(0.0)
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode != 0, err
    assert "503" in err, err
    assert lake.catalog_proxy.url in err or f"127.0.0.1:{lake.catalog_proxy.port}" in err, err
    assert tried["requests"] > 1, f"the catalog request was not retried: {tried}"
    assert "Traceback" not in err and "terminate called" not in err, err


def test_store_down_midway_then_resume_exactly_once(thaw, kafka, lake):
    """Data files of partition 2 answer 503 to every request: the exactly-once job fails, naming the object and
    the status, and says it is safe to rerun; the rerun after the store recovers completes it exactly once."""
    want = local_records(thaw, lake)
    topic, job = topic_name("faults-eos"), f"faults-job-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, PARTITIONS)
    cmd = ["replay", *lake.args(), "--table", TABLE, "--brokers", kafka.bootstrap, "--topic", topic, "--job", job,
           "--exactly-once", "--checkpoint-every", "500", "--json"]
    lake.faults(1.0, faults=("503",),
                store_filter=lambda method, path: "kafka_partition=2/" in unquote(path) and path.endswith(".parquet"))
    lake.catalog_proxy.fault_rate = 0.0
    p = thaw(*cmd, timeout=600)
    tried = lake.store_proxy.stats()
    lake.faults(0.0)
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode != 0, f"replay succeeded although partition 2's files always fail ({tried}):\n{err}"
    assert re.search(r"s3://[^\s']*/data/kafka_partition=2/[^\s']*\.parquet", err), err
    assert "503" in err, err
    assert "safe to rerun" in err, err
    assert tried["faults"].get("503", 0) > 1, f"no retry before giving up: {tried}"

    p2 = thaw(*cmd, timeout=600)
    assert p2.returncode == 0, (f"the rerun failed:\n{p2.stderr.decode()[-4000:]}\n"
                                f"store requests: {json.dumps(lake.store_proxy.stats()['by_path'], indent=1)}")
    got = kafka.consume_all(topic, "read_committed")
    assert_replayed(got, want, TABLE)  # every record once (count equal, each (partition, offset) matched)
    v = thaw("replay", "--brokers", kafka.bootstrap, "--job", job, "--verify", "--json", timeout=300)
    assert v.returncode == 0, v.stderr.decode() + v.stdout.decode()
    j = json.loads(v.stdout.decode().strip().splitlines()[-1])
    j = j.get("verify", j)
    assert j["ok"] is True and (j["missing"], j["duplicates"], j["out_of_order"]) == (0, 0, 0), j
