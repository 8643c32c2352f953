"""Rows as JSON after schema evolution, and per-record source topics.

Tables (fixtures.py): `ns.connect_evolving` (Kafka Connect sink whose schema
grew: a column added, a nested struct field added, a column renamed; integral
doubles; `_kafka_metadata_topic` values that are not the table's name),
`ns.v3_defaults` (v3 columns with `initial-default` added after every data
file was written), `ns.connect_flat` / `ns.connect_nested` (topic "orders").

The peer is pyiceberg's own read of the same snapshot (oracle.py): every
record of a snapshot has every field of the schema the scan reads with, under
its current name, null (or the initial-default) where the data file lacks the
column. The raw JSON text is checked too: key order is schema order, and
doubles keep their decimal point as Kafka Connect's JsonConverter writes them.
"""

from __future__ import annotations

import json
import os

import pytest

import fixtures
import oracle
from test_inspect import assert_same_records, expected, parse_records, src


def raw_values(thaw, warehouse, name, *extra) -> list[tuple[int, int, str]]:
    """(partition, offset, value JSON text) of every record."""
    p = thaw.ok("inspect", *src(warehouse, name), "--records", "--format", "json", *extra)
    out = []
    for line in p.stdout.decode("utf-8").splitlines():
        o = json.loads(line)
        assert o["value_encoding"] == "utf8", o  # JSON text: shown as text
        out.append((o["partition"], o["offset"], fixtures.json_bytes(o).decode("utf-8")))
    return out


def keys_in_order(text: str) -> list[str]:
    return [k for k, _ in json.loads(text, object_pairs_hook=lambda pairs: pairs)]


def test_evolved_rows_match_pyiceberg(thaw, warehouse):
    name = "ns.connect_evolving"
    got = parse_records(thaw.ok("inspect", *src(warehouse, name), "--records", "--format", "json").stdout,
                        "kafka-connect-flat")
    want = expected(warehouse, name)
    assert len(want) == 18
    assert_same_records(got, want)


def test_evolved_rows_have_every_field_in_schema_order(thaw, warehouse):
    name = "ns.connect_evolving"
    schema = warehouse.table(name).schema()
    want_keys = [f.name for f in schema.fields if not f.name.startswith("_kafka_metadata")]
    assert want_keys == ["id", "full_name", "amount", "address", "email"]
    values = raw_values(thaw, warehouse, name)
    assert len(values) == 18
    for p, o, text in values:
        assert keys_in_order(text) == want_keys, f"({p}, {o}): {text}"
        v = json.loads(text)
        assert "name" not in v
        if v["address"] is not None:
            assert keys_in_order(json.dumps(v["address"])) == ["city", "zip"], f"({p}, {o}): {text}"
    # rows from the first file: the renamed column under its new name, the
    # later columns null; integral doubles keep their decimal point
    first = {o: t for p, o, t in values if p == 0 and o == 100}
    assert first[100] == ('{"id":0,"full_name":"n0","amount":4541.0,"address":{"city":"c0","zip":null},'
                          '"email":null}')


def test_snapshot_reads_with_its_own_schema(thaw, warehouse):
    """--snapshot (time travel) reads with the snapshot's schema, as pyiceberg does."""
    name = "ns.connect_evolving"
    first = warehouse.built[name].snapshot_ids[0]
    got = parse_records(thaw.ok("inspect", *src(warehouse, name), "--snapshot", str(first), "--records", "--format",
                                "json").stdout, "kafka-connect-flat")
    want = expected(warehouse, name, snapshot_id=first)
    assert want and set(want[0]["value"]) == {"id", "name", "amount", "address"}
    assert_same_records(got, want)


def test_initial_default_fills_columns_older_files_lack(thaw, warehouse):
    name = "ns.v3_defaults"
    t = warehouse.table(name)
    assert t.metadata.format_version == 3
    rows = t.scan().to_arrow().to_pylist()
    assert rows and all(r["region"] == "eu" and r["qty"] == 7 and r["ratio"] == 2.0 and r["note"] is None
                        for r in rows), "pyiceberg does not apply the initial-default: bad fixture"
    values = raw_values(thaw, warehouse, name)
    want = sorted(json.dumps(oracle.to_json_value(r, t.schema().as_struct()), sort_keys=True) for r in rows)
    assert sorted(json.dumps(json.loads(v), sort_keys=True) for _, _, v in values) == want
    for _, _, text in values:
        assert keys_in_order(text) == ["id", "v", "region", "qty", "ratio", "note"]
        assert text.endswith('"region":"eu","qty":7,"ratio":2.0,"note":null}'), text


@pytest.mark.parametrize("name,want", [
    ("ns.connect_evolving", None),  # per partition: fixtures.EVOLVING_TOPICS
    ("ns.connect_flat", "orders"),
    ("ns.connect_nested", "orders"),
])
def test_format_topic_is_the_stored_source_topic(thaw, warehouse, name, want):
    p = thaw.ok("inspect", *src(warehouse, name), "--format", r"%t|%p|%o\n")
    lines = p.stdout.decode("utf-8").splitlines()
    assert len(lines) == len(expected(warehouse, name))
    for line in lines:
        topic, part, _ = line.split("|")
        assert topic == (want or fixtures.EVOLVING_TOPICS[int(part)]), line


def test_format_topic_falls_back_without_a_topic_column(thaw, warehouse):
    p = thaw.ok("inspect", *src(warehouse, "ns.plain"), "--format", r"%t\n", "--limit", "2")
    assert p.stdout.decode("utf-8").splitlines() == ["ns.plain", "ns.plain"]


def test_topic_column_is_reported_and_overridable(thaw, warehouse):
    name = "ns.connect_nested"
    out = json.loads(thaw.ok("inspect", *src(warehouse, name), "--json").stdout)
    assert out["columns"]["topic"] == "_kafka_metadata.topic"
    # --column topic=COLUMN: any string column of the row. Its values are then
    # the rows' topics: many of them, so records are read one topic at a time.
    p = thaw("inspect", *src(warehouse, name), "--column", "topic=name", "--format", r"%t\n")
    assert p.returncode == 2 and "choose one with --source-topic" in p.stderr.decode(), p.stderr.decode()
    p = thaw.ok("inspect", *src(warehouse, name), "--column", "topic=name", "--source-topic", "name-1", "--format",
                r"%t|%p|%o\n")
    want = [f"name-1|{r['partition']}|{r['offset']}" for r in expected(warehouse, name)
            if r["value"]["name"] == "name-1"]
    assert want and sorted(p.stdout.decode("utf-8").splitlines()) == sorted(want)


def test_schema_change_without_a_write_keeps_the_snapshot_shape(thaw, tmp_path):
    """A snapshot is read with the schema it was written with: a column added
    after the last write does not change its records (a replay resuming at a
    pinned snapshot emits what it emitted before); pyiceberg reads that
    snapshot the same way."""
    wh = str(tmp_path / "wh")
    os.makedirs(wh)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists("ns")
    t = fixtures.create(cat, wh, "ns.t", fixtures.fresh([fixtures.F("id", fixtures.LongType(), True),
                                                        fixtures.F("x", fixtures.DoubleType())]))
    fixtures.append_rows(t, [{"id": i, "x": float(i)} for i in range(3)])
    uri = fixtures.catalog_uri(wh)
    args = ["inspect", "--catalog", uri, "--table", "ns.t", "--format", r"%s\n"]
    before = thaw.ok(*args).stdout
    with t.update_schema() as u:
        u.add_column("later", fixtures.StringType())
    t = cat.load_table("ns.t")
    assert [f.name for f in t.schema().fields] == ["id", "x", "later"]
    assert thaw.ok(*args).stdout == before
    assert before.decode().splitlines() == ['{"id":0,"x":0.0}', '{"id":1,"x":1.0}', '{"id":2,"x":2.0}']
    snap = t.current_snapshot().snapshot_id
    assert [f.name for f in t.scan(snapshot_id=snap).projection().fields] == ["id", "x"]
    assert thaw.ok(*args, "--snapshot", str(snap)).stdout == before


def test_replay_links_the_stored_source_topic(thaw, warehouse, kafka):
    """thaw.source.topic is the row's stored topic (the Connect sink's
    `_kafka_metadata_topic`), not the table's name or property."""
    from test_replay import replay, topic_name
    name = "ns.connect_evolving"
    topic = topic_name()
    p = replay(thaw, warehouse, name, kafka, topic, "--create-topic")
    assert p.returncode == 0, p.stderr.decode()
    got = kafka.consume_all(topic)
    assert len(got) == len(expected(warehouse, name))
    for g in got:
        link = dict(g["headers"])
        part = int(link["thaw.source.partition"])
        assert link["thaw.source.topic"] == fixtures.EVOLVING_TOPICS[part].encode()


def test_connect_table_of_several_topics_reads_one_at_a_time(thaw, tmp_path):
    """A Kafka Connect sink writing two topics into one table: the same
    partitions and offsets in each. Topic names longer than the 16 characters
    pyiceberg (like Java) keeps of string bounds, so a file's bounds never pin
    its topic: the summary learns the topics from the column, and
    --source-topic filters rows. One file holds both topics, one only the
    first."""
    wh = str(tmp_path / "wh")
    os.makedirs(wh)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists("ns")
    t = fixtures.create(cat, wh, "ns.sink", fixtures.fresh([
        fixtures.F("id", fixtures.LongType(), True), fixtures.F("_kafka_metadata_topic", fixtures.StringType()),
        fixtures.F("_kafka_metadata_partition", fixtures.IntegerType()),
        fixtures.F("_kafka_metadata_offset", fixtures.LongType()),
        fixtures.F("_kafka_metadata_timestamp", fixtures.LongType())]))
    eu, us = "shop.orders.europe.v1", "shop.orders.united-states.v1"

    def rows(topics, base):
        return [{"id": base + 100 * i + 10 * p + k, "_kafka_metadata_topic": topic, "_kafka_metadata_partition": p,
                 "_kafka_metadata_offset": 5 + i, "_kafka_metadata_timestamp": 1_700_000_000_000 + i}
                for i in range(4) for p in range(2) for k, topic in enumerate(topics)]

    both, eu_only = rows([eu, us], 0), rows([eu], 5000)
    eu_only = [dict(r, _kafka_metadata_offset=r["_kafka_metadata_offset"] + 4) for r in eu_only]
    fixtures.append_rows(t, both)
    fixtures.append_rows(t, eu_only)
    args = ["--catalog", fixtures.catalog_uri(wh), "--table", "ns.sink"]
    s = json.loads(thaw.ok("inspect", *args, "--json").stdout)
    assert [x["topic"] for x in s["topics"]] == [eu, us]
    by_topic = {x["topic"]: {p["partition"]: (p["records"], p["min_offset"], p["max_offset"]) for p in x["partitions"]}
                for x in s["topics"]}
    assert by_topic == {eu: {0: (8, 5, 12), 1: (8, 5, 12)}, us: {0: (4, 5, 8), 1: (4, 5, 8)}}
    p = thaw("inspect", *args, "--records")
    assert p.returncode == 2 and f"holds topics {eu}, {us}: choose one with --source-topic" in p.stderr.decode()
    for topic in (eu, us):
        got = [(int(pa), int(o), tp, json.loads(v)["id"]) for pa, o, tp, v in
               (line.split("|") for line in thaw.ok("inspect", *args, "--source-topic", topic, "--format",
                                                      r"%p|%o|%t|%s\n").stdout.decode().splitlines())]
        want = sorted((r["_kafka_metadata_partition"], r["_kafka_metadata_offset"], topic, r["id"])
                      for r in both + eu_only if r["_kafka_metadata_topic"] == topic)
        assert got == want
