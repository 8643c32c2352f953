"""Table creation and commits through Thaw's Catalog interface (Catalog::CreateTable / CommitTable, issue 10)
against real catalogs, each read back by pyiceberg:

- Apache Iceberg's RESTCatalogServer (the ``rest_catalog`` fixture, metadata in the S3-compatible store),
- the SQL catalog on SQLite and on PostgreSQL (Thaw writes the metadata files and swaps the pointer).

Driven through tests/tools/rest_tool.cc's typed commands (create, append, set-properties). The appended
snapshots' manifest lists are not written: these tests check the metadata (what a catalog and pyiceberg's
load_table see), not scans.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import uuid

import pytest

ARCHIVE_SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "kafka_partition", "required": True, "type": "int"},
    {"id": 2, "name": "kafka_offset", "required": True, "type": "long"},
    {"id": 3, "name": "kafka_timestamp", "required": True, "type": "timestamptz"},
    {"id": 4, "name": "kafka_timestamp_type", "required": True, "type": "int"},
    {"id": 5, "name": "key", "required": False, "type": "binary"},
    {"id": 6, "name": "value", "required": False, "type": "binary"},
    {"id": 7, "name": "headers", "required": False, "type": {
        "type": "list", "element-id": 8, "element-required": True, "element": {"type": "struct", "fields": [
            {"id": 9, "name": "key", "required": True, "type": "string"},
            {"id": 10, "name": "value", "required": False, "type": "binary"}]}}}]}
SPEC = {"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "kafka_partition",
                                  "transform": "identity"}]}
SORT = {"order-id": 1, "fields": [
    {"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"},
    {"source-id": 2, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]}


@pytest.fixture(scope="module")
def tool(thaw_bin):
    p = thaw_bin.parent / "thaw_rest_tool"
    if not os.access(p, os.X_OK):
        pytest.fail(f"{p} not found: build it (ninja -C build thaw_rest_tool)", pytrace=False)

    def run(cat, cmd: str, *args: str) -> dict:
        r = subprocess.run([str(p), cat.uri, *cat.props, cmd, *args], capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr.decode()
        return json.loads(r.stdout)
    return run


class Cat:
    def __init__(self, kind: str, uri: str, props: list[str], pyiceberg, metadata_dir=None):
        self.kind, self.uri, self.props, self.pyiceberg = kind, uri, props, pyiceberg
        self.metadata_dir = metadata_dir  # SQL: table ident -> local metadata directory


@pytest.fixture(params=["rest", "sqlite", "postgres"])
def cat(request, tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog
    if request.param == "rest":
        rc = request.getfixturevalue("rest_catalog")
        yield Cat("rest", rc.uri, [f"{k}={v}" for k, v in rc.client_props().items()], rc.pyiceberg())
        return
    wh = tmp_path / "wh"
    dirs = lambda ns, name: wh / f"{ns}.db" / name / "metadata"  # noqa: E731
    if request.param == "sqlite":
        db = tmp_path / "catalog.db"
        sqlite3.connect(db).close()  # an empty database: Thaw never creates one
        yield Cat("sqlite", f"sqlite:///{db}", [f"warehouse={wh}"],
                  SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=f"file://{wh}"), dirs)
        return
    pg = request.getfixturevalue("postgres")
    name = "commit_it_" + uuid.uuid4().hex[:8]  # the server is shared by the session
    yield Cat("postgres", pg.uri, [f"warehouse={wh}", f"catalog-name={name}"],
              SqlCatalog(name, uri=pg.sqlalchemy_uri, warehouse=f"file://{wh}"), dirs)
    # The server is shared: leave no catalog behind for tests that read its only one.
    import psycopg2
    with psycopg2.connect(pg.uri) as conn, conn.cursor() as cur:
        for table in ("iceberg_tables", "iceberg_namespace_properties"):
            cur.execute(f"DELETE FROM {table} WHERE catalog_name = %s", (name,))


def _create(tool, cat, ident: str, fv: int) -> dict:
    return tool(cat, "create", ident, json.dumps({
        "schema": ARCHIVE_SCHEMA, "partition-spec": SPEC, "sort-order": SORT, "format-version": fv,
        "properties": {"thaw.layout": "thaw/1", "write.parquet.compression-codec": "zstd"}}))


@pytest.mark.parametrize("fv", [2, 3])
def test_create_append_conflict_and_properties_read_back_by_pyiceberg(tool, cat, fv):
    ns = "commit_it_" + uuid.uuid4().hex[:8]
    ident = f"{ns}.events"
    created = _create(tool, cat, ident, fv)
    assert created["ok"], created
    assert created["snapshot_id"] is None
    t = cat.pyiceberg.load_table(ident)
    assert str(t.metadata.table_uuid) == created["table_uuid"]
    assert t.metadata.format_version == fv
    assert t.metadata_location == created["metadata_location"]
    assert [(f.field_id, f.name) for f in t.schema().fields][:2] == [(1, "kafka_partition"), (2, "kafka_offset")]
    assert t.schema().find_field("headers.element.value").field_id == 10
    assert [(f.source_id, f.field_id, f.name, str(f.transform)) for f in t.spec().fields] == [
        (1, 1000, "kafka_partition", "identity")]
    assert [(f.source_id, f.direction.value) for f in t.sort_order().fields] == [(1, "asc"), (2, "asc")]
    assert t.properties["thaw.layout"] == "thaw/1"
    if cat.metadata_dir:
        # <warehouse>/<ns>.db/<name>/metadata/00000-<uuid>.metadata.json, as pyiceberg names them
        assert created["metadata_location"].startswith(str(cat.metadata_dir(ns, "events")) + "/00000-")
        assert os.path.basename(created["metadata_location"]).endswith(".metadata.json")

    again = _create(tool, cat, ident, fv)
    assert again["code"] == "already exists", again
    assert cat.pyiceberg.load_table(ident).metadata_location == created["metadata_location"]

    first = tool(cat, "append", ident)
    assert first["ok"], first
    s1 = first["snapshot_id"]
    t = cat.pyiceberg.load_table(ident)
    assert t.current_snapshot().snapshot_id == s1
    assert t.current_snapshot().summary.operation.value == "append"
    assert t.current_snapshot().summary["thaw.test"] == "rest_tool"
    assert t.metadata.refs["main"].snapshot_id == s1
    assert [e.snapshot_id for e in t.metadata.snapshot_log] == [s1]
    assert t.metadata.last_sequence_number == 1
    if fv == 3:
        assert t.current_snapshot().first_row_id == 0

    # A writer that still believes main is empty loses, and nothing changes.
    files_before = sorted(os.listdir(cat.metadata_dir(ns, "events"))) if cat.metadata_dir else None
    stale = tool(cat, "append", ident, "none")
    assert stale["code"] == "commit conflict", stale
    assert cat.pyiceberg.load_table(ident).current_snapshot().snapshot_id == s1
    if cat.metadata_dir:
        assert sorted(os.listdir(cat.metadata_dir(ns, "events"))) == files_before

    second = tool(cat, "append", ident, str(s1))
    assert second["ok"], second
    props = tool(cat, "set-properties", ident, "thaw.source.topic=events")
    assert props["ok"], props
    t = cat.pyiceberg.load_table(ident)
    assert t.current_snapshot().snapshot_id == second["snapshot_id"]
    assert t.current_snapshot().parent_snapshot_id == s1
    assert [s.sequence_number for s in t.metadata.snapshots] == [1, 2]
    assert t.properties["thaw.source.topic"] == "events"
    assert t.metadata_location == props["metadata_location"]
    assert len(t.metadata.metadata_log) == 3  # create, two appends (the properties commit is current)
    if cat.metadata_dir:
        names = sorted(os.listdir(cat.metadata_dir(ns, "events")))
        assert [n[:6] for n in names] == ["00000-", "00001-", "00002-", "00003-"], names


def test_sql_catalog_without_a_warehouse_asks_for_one(tool, tmp_path):
    db = tmp_path / "catalog.db"
    sqlite3.connect(db).close()
    cat = Cat("sqlite", f"sqlite:///{db}", [], None)
    out = _create(tool, cat, "ns.events", 2)
    assert out["code"] == "invalid argument", out
    assert "--warehouse" in out["message"] and "ns.db/events" in out["message"]
