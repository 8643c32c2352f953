"""`thaw archive --layout row` on a real broker (docs/layouts.md, thaw-row):
a JSON topic -- nested objects, arrays, nulls, a tombstone, a value that is
not JSON, one with extra whitespace, fields missing in later records, and a
second run that appends records with a field the table does not have --

(a) pyiceberg and DuckDB's iceberg extension see typed columns (the `value`
    struct inferred from the first records) with the right values, and
    `value_raw` only where the struct does not give the original bytes back;
(b) `thaw replay` into a new topic equals the original byte for byte, keys,
    headers, timestamps and (in the link headers) offsets included, and
    `thaw inspect` and a consumer of `thaw serve` read every record as a
    read_committed consumer of the topic does, offsets included.
"""

from __future__ import annotations

import json
import signal
import time

import pytest

import archive_topics
import iceberg_readers as readers
from archive_cli import archive_args, metadata_location, new_catalog, start_archive
from kafka_broker import KafkaBroker
from serve_harness import Topic, thaw_serve  # noqa: F401  (fixture)

EXACT = [
    (0, b"k1", b'{"id":1,"name":"a","score":1.5,"tags":["x","y"],"addr":{"city":"Paris","zip":75001},"ok":true}',
     [("h", b"v"), ("h", None)]),
    (1, b"k2", b'{"id":2,"name":null,"score":2.25,"tags":[],"addr":{"city":"Lyon","zip":69001},"ok":false}', []),
    (0, None, b'{"id":3,"name":"c","score":-0.5,"tags":["z"],"addr":null,"ok":true}', [("trace", b"1")]),
]
# (partition, key, value, headers, raw kept?)
OTHERS = [
    (1, b"k1", None, [], False),  # tombstone
    (0, b"bad", b"not json \xff", [], True),
    (1, None, b'{ "id": 5, "name": "spaced", "score": 1.0, "tags": [], "addr": null, "ok": true }', [], True),
    (0, b"k6", b'{"id":6,"name":"missing fields"}', [], True),
    (1, b"k7", b'{"id":7,"name":"d","score":0.125,"tags":["a","b","c"],"addr":{"city":null,"zip":1},"ok":false}', [],
     False),
]
SECOND_RUN = [
    (0, b"k8", b'{"id":8,"name":"e","score":3.5,"tags":[],"addr":{"city":"Nice","zip":6000},"ok":true}', [], False),
    (1, b"k9", b'{"id":9,"name":"new field","score":1.5,"tags":[],"addr":null,"ok":true,"extra":[1]}', [], True),
]


def _produce(kafka, topic, rows):
    prod = kafka.producer()
    for p, k, v, hs, *_ in rows:
        prod.produce(topic, key=k, value=v, headers=hs, partition=p)
        prod.flush(30)  # one at a time: the order of the lists is the order in each partition


@pytest.fixture(scope="module")
def row_archived(kafka, thaw, tmp_path_factory):
    wh = str(tmp_path_factory.mktemp("archive_row"))
    uri = new_catalog(wh)
    topic = archive_topics.topic_name("rowjson")
    kafka.create_topic(topic, 2)
    _produce(kafka, topic, [(*r, False) for r in EXACT] + OTHERS)
    p = thaw(*archive_args(kafka, uri, "ns.rows", topic, "--layout", "thaw-row"), timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    # A second run appends to the table with the table's schema.
    _produce(kafka, topic, SECOND_RUN)
    p = thaw(*archive_args(kafka, uri, "ns.rows", topic, "--layout", "row"), timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    return uri, "ns.rows", topic, kafka.consume_all(topic)


def _expected():
    """{value bytes: raw kept?} of every non-null value produced."""
    out = {v: False for _, _, v, _ in EXACT}
    for _, _, v, _, raw in OTHERS + SECOND_RUN:
        if v is not None:
            out[v] = raw
    return out


def test_typed_columns_through_pyiceberg_and_duckdb(row_archived):
    uri, table, topic, want = row_archived
    tbl = readers.load_table(uri, table)
    assert tbl.properties.get("thaw.layout") == "thaw-row/1"
    assert tbl.properties.get("thaw.row.value-format") == "json"
    schema = tbl.schema()
    value = schema.find_field("value")
    assert value.field_id == 12
    assert schema.find_field("value_raw").field_id == 6
    types = {f.name: str(f.field_type) for f in value.field_type.fields}
    assert types == {"id": "long", "name": "string", "score": "double", "tags": "list<string>",
                     "addr": "struct<106: city: optional string, 107: zip: optional long>", "ok": "boolean"}, types
    assert min(f.field_id for f in value.field_type.fields) == 100
    assert "extra" not in types, "the schema is fixed after the first records"

    rows = tbl.scan().to_arrow().to_pylist()
    assert len(rows) == len(want)
    by_value = {}
    for r in rows:
        raw = r["value_raw"]
        if r["value"] is None and raw is None:
            by_value.setdefault(None, []).append(r)
            continue
        orig = raw
        if orig is None:
            # Not kept raw: the struct is the value (compact JSON, schema order).
            orig = json.dumps(r["value"], separators=(",", ":"), ensure_ascii=False).encode()
        by_value[orig] = r
    assert len(by_value.pop(None)) == 1, "one tombstone: value and value_raw both null"
    expected = _expected()
    assert set(by_value) == set(expected)
    for v, raw in expected.items():
        r = by_value[v]
        assert (r["value_raw"] is not None) == raw, (v, r["value_raw"])
    # Typed values, also where value_raw is kept.
    assert by_value[EXACT[0][2]]["value"] == {"id": 1, "name": "a", "score": 1.5, "tags": ["x", "y"],
                                              "addr": {"city": "Paris", "zip": 75001}, "ok": True}
    assert by_value[OTHERS[2][2]]["value"]["name"] == "spaced"
    assert by_value[OTHERS[3][2]]["value"] == {"id": 6, "name": "missing fields", "score": None, "tags": None,
                                               "addr": None, "ok": None}
    assert by_value[OTHERS[1][2]]["value"] is None, "not JSON: no struct"
    assert by_value[SECOND_RUN[1][2]]["value"]["id"] == 9

    con = readers.duckdb_connect()
    try:
        loc = readers.metadata_location(uri, table).replace("'", "''")
        got = con.execute(
            f"SELECT kafka_partition, kafka_offset, value.id, value.addr.city, value.score, len(value.tags), "
            f"value_raw IS NOT NULL FROM iceberg_scan('{loc}') WHERE value.id IS NOT NULL ORDER BY value.id"
        ).fetchall()
    finally:
        con.close()
    assert [(g[2], g[3], g[4], g[5], g[6]) for g in got] == [
        (1, "Paris", 1.5, 2, False), (2, "Lyon", 2.25, 0, False), (3, None, -0.5, 1, False),
        (5, None, 1.0, 0, True), (6, None, None, None, True), (7, None, 0.125, 3, False),
        (8, "Nice", 3.5, 0, False), (9, None, 1.5, 0, True)]
    offsets = {(r["partition"], r["offset"]) for r in want if r["value"] is not None and r["value"].startswith(b"{")}
    assert {(g[0], g[1]) for g in got} == offsets


def test_inspect_and_replay_equal_the_original_byte_for_byte(kafka, thaw, row_archived):
    uri, table, topic, want = row_archived
    readers.assert_same_records(readers.read_thaw(thaw, uri, table), want, "thaw inspect of the row table")
    target = archive_topics.topic_name("rowreplayed")
    p = thaw("replay", "--catalog", uri, "--table", table, "--brokers", kafka.bootstrap, "--topic", target,
             "--create-topic", "--quiet", "--json", timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    assert json.loads(p.stdout)["records"] == len(want)
    got = kafka.consume_all(target)
    assert len(got) == len(want)
    by_source = {}
    for g in got:
        link = {k: v for k, v in g["headers"] if k.startswith("thaw.source.")}
        assert link["thaw.source.topic"] == topic.encode()
        src = (int(link["thaw.source.partition"]), int(link["thaw.source.offset"]))
        assert src not in by_source
        by_source[src] = {**g, "headers": [h for h in g["headers"] if not h[0].startswith("thaw.source.")]}
    for w in want:
        g = by_source[(w["partition"], w["offset"])]
        for f in ("partition", "key", "value", "headers", "timestamp", "timestamp_type"):
            assert g[f] == w[f], f"partition {w['partition']} offset {w['offset']}: {f} {g[f]!r} != {w[f]!r}"


def test_serve_equals_the_original_offset_for_offset(row_archived, thaw_serve):  # noqa: F811
    uri, table, topic, want = row_archived
    with thaw_serve(uri, [Topic(topic, table, "thaw")], topic_args=True) as (bootstrap, _proc):
        got = KafkaBroker(bootstrap).consume_all(topic, settle=0)
    readers.assert_same_records(got, want, f"a consumer of `thaw serve` ({topic}={table}, row layout)")


def test_layout_mismatch_is_refused(kafka, thaw, row_archived):
    uri, table, topic, _want = row_archived
    p = thaw(*archive_args(kafka, uri, table, topic), timeout=60)
    assert p.returncode != 0
    assert "--layout thaw-row" in p.stderr.decode(errors="replace"), p.stderr


def test_sigint_before_any_value_exits_0_and_creates_nothing(kafka, thaw_bin, tmp_path):
    uri = new_catalog(str(tmp_path / "wh"))
    topic = archive_topics.topic_name("rowempty")
    kafka.create_topic(topic, 1)
    err = tmp_path / "archive.stderr"
    proc = start_archive(thaw_bin, archive_args(kafka, uri, "ns.empty", topic, "--layout", "row", "--follow",
                                                "--json"), err)
    try:
        time.sleep(1)  # waiting for the first values to infer the value columns from
        assert proc.poll() is None, err.read_text()
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGINT, err.read_text()
    assert json.loads(out)["interrupted"] is True
    assert metadata_location(uri, "ns.empty") is None, "no value columns known: no table yet"
