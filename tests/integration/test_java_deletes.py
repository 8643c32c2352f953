"""Row-level deletes written by Iceberg Java (the reference implementation):
v2 position deletes, v2 equality deletes (with the sequence-number rule), a v3
deletion vector, and partition-spec evolution with bucket/day transforms.

Iceberg Java writes the tables (tests/fixtures/java) and its own generic
reader, which applies every delete, is the oracle: Thaw must yield exactly the
rows it yields, in (partition, offset) order. Every scenario runs twice: on a
local warehouse with a SQLite JdbcCatalog, and with the same tables written by
Iceberg Java through Iceberg's REST catalog into an S3-compatible store
(lakehouse.py's servers).
"""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest

from fixtures import json_bytes

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "tests" / "fixtures" / "java" / "run.sh"
TABLES = ["ns.pos_deletes", "ns.eq_deletes", "ns.dv_deletes", "ns.partitioned_transforms"]


class JavaTables:
    """The Java-written tables in one environment: "local" (a warehouse directory with a SQLite
    JdbcCatalog) or "rest-s3" (through Iceberg's REST catalog into the S3 store, lakehouse.py).
    `catalog_args(table)` selects a table for thaw; `oracle(table)` is Iceberg Java's own read of
    it (deletes applied), computed once per table; `puffin_files()` the bytes of every Puffin file."""

    def __init__(self, kind: str, oracle_target: list[str], catalog_args: list[str], puffins):
        self.kind = kind
        self._oracle_target = oracle_target
        self._catalog_args = catalog_args
        self._puffins = puffins
        self._oracle: dict[str, list[dict]] = {}

    def catalog_args(self, table: str) -> list[str]:
        return [*self._catalog_args, "--table", table]

    def oracle(self, table: str) -> list[dict]:
        if not self._oracle:  # every table in one JVM run (a start costs seconds)
            t = self._oracle_target
            tables = ",".join(TABLES)
            argv = [str(RUN), "oracle", t[0], tables, *t[1:]] if self.kind == "rest-s3" else \
                [str(RUN), "oracle", *t, tables]
            p = subprocess.run(argv, capture_output=True, timeout=300)
            assert p.returncode == 0, f"Java oracle failed:\n{p.stderr.decode()[-3000:]}"
            current = None
            for line in p.stdout.decode().splitlines():
                if line.startswith("# "):
                    current = self._oracle.setdefault(line[2:], [])
                elif line.strip():
                    current.append(json.loads(line))
            assert sorted(self._oracle) == sorted(TABLES), sorted(self._oracle)
        return self._oracle[table]

    def puffin_files(self) -> list[bytes]:
        return self._puffins()


def java_bytes(r: dict) -> dict:
    """A record line of the Java oracle (bytes as base64) with its bytes decoded."""
    b = lambda v: None if v is None else base64.b64decode(v, validate=True)  # noqa: E731
    return {**r, "key": b(r["key"]), "value": b(r["value"]),
            "headers": [{"key": h["key"], "value": b(h["value"])} for h in r["headers"]]}


def thaw_bytes(r: dict, table: str) -> dict:
    """A record line of `thaw inspect --records --format json` (kcat -J style: text or base64, each with
    its encoding; the table's topic) with its bytes decoded, in the Java oracle's shape."""
    assert r["topic"] == table.split(".")[-1], r  # thaw.source.topic of WriteDeleteFixtures' tables
    out = {k: v for k, v in r.items() if k not in ("topic", "key_encoding", "value_encoding")}
    return {**out, "key": json_bytes(r, "key"), "value": json_bytes(r, "value"),
            "headers": [{"key": h["key"], "value": json_bytes(h, "value", "encoding")} for h in r["headers"]]}


def _write(argv: list[str]) -> None:
    p = subprocess.run([str(RUN), "write", *argv], capture_output=True, timeout=300)
    assert p.returncode == 0, f"Java fixture writer failed:\n{p.stderr.decode()[-3000:]}"


@pytest.fixture(scope="module")
def java_wh(tmp_path_factory) -> JavaTables:
    wh = tmp_path_factory.mktemp("java_wh")
    _write([str(wh)])
    return JavaTables("local", [str(wh / "java_catalog.db"), str(wh)],
                      ["--catalog", f"sqlite:///{wh}/java_catalog.db"],
                      lambda: [f.read_bytes() for f in (wh / "java").rglob("*.puffin")])


@pytest.fixture(scope="module")
def java_rest(rest_catalog, s3_store) -> JavaTables:
    # The writer and the oracle get the store's endpoint and addressing; the catalog vends the keys.
    props = [f"{k}={v}" for k, v in rest_catalog.client_props().items()] + [f"client.region={s3_store.region}"]
    _write([rest_catalog.uri, *props])
    prefix = rest_catalog.warehouse.removeprefix(f"s3://{s3_store.bucket}/") + "/ns/dv_deletes/"

    def puffins():
        c = s3_store.client()
        return [c.get_object(Bucket=s3_store.bucket, Key=k)["Body"].read()
                for k in s3_store.list_keys(prefix) if k.endswith(".puffin")]

    args = ["--catalog", rest_catalog.uri]
    for k, v in rest_catalog.client_props().items():
        args += ["--catalog-property", f"{k}={v}"]
    return JavaTables("rest-s3", [rest_catalog.uri, *props], args, puffins)


@pytest.fixture(params=["local", "rest-s3"])
def java_tables(request) -> JavaTables:
    return request.getfixturevalue("java_wh" if request.param == "local" else "java_rest")


@pytest.mark.parametrize("table", TABLES)
def test_records_match_iceberg_java(thaw, java_tables, table):
    want = [java_bytes(r) for r in java_tables.oracle(table)]
    p = thaw.ok("inspect", *java_tables.catalog_args(table), "--records", "--format", "json")
    got = [thaw_bytes(json.loads(line), table) for line in p.stdout.decode().splitlines()]
    assert len(got) == len(want)
    assert got == want


def test_deletes_are_counted_and_applied(thaw, java_tables):
    for table, written in [("ns.pos_deletes", 40), ("ns.eq_deletes", 43), ("ns.dv_deletes", 40)]:
        p = thaw.ok("inspect", *java_tables.catalog_args(table), "--json")
        s = json.loads(p.stdout)
        assert s["delete_files"] >= 1, table
        assert s["records"] < written, table
        assert s["records"] == len(java_tables.oracle(table)), table


def test_equality_delete_does_not_hide_later_reinsert(thaw, java_tables):
    # (partition 0, offset 3) was equality-deleted, then appended again in a
    # later snapshot: the newer row has a higher sequence number and stays.
    p = thaw.ok("inspect", *java_tables.catalog_args("ns.eq_deletes"), "--partition", "0",
                "--from-offset", "3", "--limit", "1", "--format", "json")
    rec = json.loads(p.stdout.decode().splitlines()[0])
    assert rec["offset"] == 3
    assert json_bytes(rec) == b"v-0-3-readded"


def test_seek_in_transform_partitioned_table(thaw, java_tables):
    want = [java_bytes(r) for r in java_tables.oracle("ns.partitioned_transforms")
            if r["partition"] == 1 and r["offset"] >= 7][:5]
    p = thaw.ok("inspect", *java_tables.catalog_args("ns.partitioned_transforms"), "--partition", "1",
                "--from-offset", "7", "--limit", "5", "--format", "json")
    got = [thaw_bytes(json.loads(line), "ns.partitioned_transforms") for line in p.stdout.decode().splitlines()]
    assert got == want


def puffin_blob_lengths(data: bytes) -> list[int]:
    """Blob lengths from a Puffin file's footer (uncompressed JSON payload)."""
    assert data[:4] == b"PFA1" and data[-4:] == b"PFA1"
    payload_size = int.from_bytes(data[-12:-8], "little")
    assert int.from_bytes(data[-8:-4], "little") & 1 == 0, "compressed footer"
    footer = json.loads(data[-12 - payload_size:-12])
    return [b["length"] for b in footer["blobs"]]


def test_deletion_vectors_are_read_by_byte_range(thaw, java_tables):
    # Iceberg Java wrote one Puffin file holding the DVs of two data files:
    # Thaw fetches each blob's bytes, not the whole file once per data file.
    puffins = java_tables.puffin_files()
    assert len(puffins) == 1, len(puffins)
    lengths = puffin_blob_lengths(puffins[0])
    assert len(lengths) == 2
    p = thaw.ok("inspect", *java_tables.catalog_args("ns.dv_deletes"), "--json")
    dv = json.loads(p.stdout)["deletion_vectors"]
    assert dv["blobs_read"] == 2
    assert dv["bytes_read"] == sum(lengths)
    assert dv["bytes_read"] < len(puffins[0])
