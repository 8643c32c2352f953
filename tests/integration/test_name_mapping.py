"""Parquet files written without field ids (plain pyarrow files registered
with pyiceberg's add_files) are read through the table's name mapping
(`schema.name-mapping.default`), as the Iceberg spec says -- also after a
column rename, when the file's names are no longer the schema's -- and
without a mapping Thaw refuses them, naming the file and the fix."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

import fixtures
import reader_tables as rt

N = 50
NAME = "ns.mapped"


def plain_file(path: str, offsets: list[int], schema: pa.Schema) -> str:
    n = len(offsets)
    t = pa.Table.from_arrays([
        pa.array([0] * n, pa.int32()),
        pa.array(offsets, pa.int64()),
        pa.array([(1_700_000_000_000 + o) * 1000 for o in offsets], pa.timestamp("us", tz="UTC")),
        pa.array([0] * n, pa.int32()),
        pa.array([b"k%d" % o for o in offsets], pa.binary()),
        pa.array([b"v%d" % o for o in offsets], pa.binary()),
        pa.array([headers(o, schema) for o in offsets], schema.field(6).type),
    ], schema=schema)
    rt.write_file(path, t, 20)
    assert all(f.metadata is None or b"PARQUET:field_id" not in f.metadata for f in pq.read_schema(path)), \
        "the file must have no field ids"
    return path


def headers(o: int, schema: pa.Schema):
    value_name = schema.field(6).type.value_type.field(1).name
    return [{"key": "h", value_name: b"hv%d" % o}] if o % 3 else None


def renamed_schema() -> pa.Schema:
    fields = list(rt.ARROW_SCHEMA)
    fields[5] = pa.field("payload", pa.binary())
    return pa.schema(fields)


def build(wh: str) -> str:
    """Offsets 0..N/2 in a file whose names were the schema's when it was
    added; then `value` is renamed, and offsets
    N/2..N are added in a file with the new names. Only the name mapping
    (which pyiceberg keeps, adding the new names) links the first file's
    columns to the current schema's."""
    rt.create_unpartitioned(wh, NAME)
    old = plain_file(f"{wh}/files/old.parquet", list(range(N // 2)), rt.ARROW_SCHEMA)
    rt.add_files(wh, NAME, [old])
    tbl = fixtures.open_catalog(wh).load_table(NAME)
    assert "schema.name-mapping.default" in tbl.properties, "pyiceberg's add_files sets the name mapping"
    with tbl.update_schema() as u:
        u.rename_column("value", "payload")
    new = plain_file(f"{wh}/files/new.parquet", list(range(N // 2, N)), renamed_schema())
    rt.add_files(wh, NAME, [new])
    return old


def check(recs):
    assert [r["offset"] for r in recs] == list(range(N))
    for r in recs:
        o = r["offset"]
        assert fixtures.json_bytes(r, "key") == b"k%d" % o
        assert fixtures.json_bytes(r, "value") == b"v%d" % o, o
        want_headers = [("h", b"hv%d" % o)] if o % 3 else []
        assert [(h["key"], fixtures.json_bytes(h, "value", "encoding")) for h in r["headers"]] == want_headers, o


def args(wh):
    return ["--catalog", fixtures.catalog_uri(wh), "--table", NAME, "--column", "value=payload"]


def test_id_less_files_resolve_through_the_name_mapping(tmp_path, thaw, kafka):
    wh = str(tmp_path / "wh")
    build(wh)
    p = thaw.ok("inspect", *args(wh), "--records", "--format", "json")
    check([json.loads(line) for line in p.stdout.decode().splitlines()])

    topic = f"mapped-{tmp_path.name[-8:]}"
    thaw.ok("replay", *args(wh), "--brokers", kafka.bootstrap, "--topic", topic, "--create-topic", "--quiet")
    got = kafka.consume_all(topic)
    assert [r["offset"] for r in got] == list(range(N))
    for r in got:
        o = r["offset"]
        assert r["key"] == b"k%d" % o and r["value"] == b"v%d" % o
        own = [h for h in r["headers"] if not h[0].startswith("thaw.source.")]
        assert own == ([("h", b"hv%d" % o)] if o % 3 else [])


def test_id_less_files_without_a_mapping_are_refused(tmp_path, thaw):
    wh = str(tmp_path / "wh")
    path = build(wh)
    tbl = fixtures.open_catalog(wh).load_table(NAME)
    with tbl.transaction() as tx:
        tx.remove_properties("schema.name-mapping.default")
    p = thaw("inspect", *args(wh), "--records", "--format", "json")
    assert p.returncode == 1, p.stderr.decode()
    err = p.stderr.decode()
    assert path in err and "schema.name-mapping.default" in err and "add_files" in err, err
