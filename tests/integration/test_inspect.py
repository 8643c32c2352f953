"""`thaw inspect` against pyiceberg-written tables, compared with oracle.py.

Contract under test (see the module docstrings of oracle.py for the record
mapping and the JSON value mapping):

* `inspect --catalog URI --table NS.NAME --json` -> one JSON object
  {table, layout, snapshot_id, data_files, delete_files, records,
   partitions: [{partition, records, min_offset, max_offset, min_timestamp,
                 max_timestamp, gaps: [{from, to}]}]}
* without --json: a human-readable table (exit 0, names the layout and every
  partition number).
* `--records [--partition P] [--from-offset N] [--limit K] --format json` ->
  JSON lines (kcat -J style) {topic, partition, offset, timestamp,
  timestamp_type, key, key_encoding, value, value_encoding,
  headers: [{key, value, encoding}]} in (partition, offset) order. Key, value
  and header values are the text when the bytes are valid UTF-8 (encoding
  "utf8"), else base64 (encoding "base64"); null has a null encoding.
* `--layout NAME`, `--column FIELD=COLUMN`, `--metadata PATH`, `--snapshot ID`,
  `--ref NAME`, `--as-of TIME`.

The tests that take `table_env` run twice: on the local warehouse with its
SQLite catalog ("local") and on the same tables written through Iceberg's REST
catalog into an S3-compatible store ("rest-s3", lakehouse.py).
"""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

import fixtures
import oracle

# table -> (oracle layout, column overrides, extra CLI args)
CASES: dict[str, tuple[str, dict[str, str], list[str]]] = {
    "ns.canonical_v2": ("thaw", {}, []),
    "ns.canonical_snappy_unpartitioned": ("thaw", {}, []),
    "ns.canonical_v3": ("thaw", {}, []),
    "ns.canonical_cow_delete": ("thaw", {}, []),
    "ns.canonical_evolved": ("thaw", {}, []),
    "ns.canonical_renamed_offset": ("thaw", {"offset": "off"}, ["--layout", "thaw", "--column", "offset=off"]),
    "ns.redpanda": ("redpanda", {}, []),
    "ns.redpanda_v1": ("redpanda_v1", {}, []),
    "ns.bufstream": ("bufstream", {}, []),
    "ns.aiven": ("aiven", {}, []),
    "ns.automq": ("automq", {}, []),
    "ns.connect_flat": ("kafka-connect-flat", {}, []),
    "ns.connect_nested": ("kafka-connect-nested", {}, []),
    "ns.plain": ("plain", {}, []),
    "ns.plain_types": ("plain", {}, []),
    "ns.connect_evolving": ("kafka-connect-flat", {}, []),
    "ns.v3_defaults": ("plain", {}, []),
}
TABLES = list(CASES)
RECORD_KEYS = {"topic", "partition", "offset", "timestamp", "timestamp_type", "key", "key_encoding", "value",
               "value_encoding", "headers"}
HEADER_KEYS = {"key", "value", "encoding"}


# ---------------------------------------------------------------------------
# helpers


def src(warehouse, name):
    """`--catalog ...` + `--table NAME` for a table environment (its `catalog_args`), or for
    anything with a catalog `uri`."""
    args = getattr(warehouse, "catalog_args", None) or ["--catalog", warehouse.uri]
    return [*args, "--table", name]


def expected(warehouse, name, snapshot_id=None, columns=None):
    layout, cols, _ = CASES[name]
    return oracle.expected_records(warehouse.table(name), layout, dict(cols, **(columns or {})),
                                   snapshot_id=snapshot_id)


def json_bytes(obj: dict, field: str, encoding_field: str | None = None) -> bytes | None:
    """fixtures.json_bytes, and base64 only for bytes that are not valid UTF-8 (kcat -J)."""
    b = fixtures.json_bytes(obj, field, encoding_field)
    if b is not None and obj[encoding_field or f"{field}_encoding"] == "base64":
        try:
            b.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            raise AssertionError(f"{field} is valid UTF-8 but shown as base64: {str(obj)[:300]}")
    return b


def parse_records(stdout: bytes, layout: str) -> list[dict]:
    """JSON lines from `--records --format json` -> oracle-format records."""
    out = []
    for n, line in enumerate(stdout.decode("utf-8").splitlines()):
        if not line.strip():
            continue
        try:
            o = json.loads(line)
        except json.JSONDecodeError as e:
            raise AssertionError(f"line {n + 1} is not JSON: {line[:200]!r}") from e
        missing = RECORD_KEYS - set(o)
        assert not missing, f"line {n + 1} lacks {sorted(missing)}: {line[:300]}"
        assert isinstance(o["topic"], str), f"line {n + 1}: topic {o['topic']!r}"
        value = json_bytes(o, "value")
        if layout in oracle.JSON_VALUE_LAYOUTS and value is not None:
            value = json.loads(value)
        assert all(set(h) == HEADER_KEYS for h in o["headers"]), f"line {n + 1} headers: {line[:300]}"
        headers = [(h["key"], json_bytes(h, "value", "encoding")) for h in o["headers"]]
        if layout == "automq":  # a map: entry order is not significant
            headers.sort(key=lambda kv: (kv[0], kv[1] is None, kv[1] or b""))
        out.append({"partition": o["partition"], "offset": o["offset"], "timestamp": o["timestamp"],
                    "timestamp_type": o["timestamp_type"], "key": json_bytes(o, "key"), "value": value,
                    "headers": headers})
    return out


def short(r: dict) -> dict:
    """A record with long byte strings abbreviated, for assertion messages."""
    def s(v):
        if isinstance(v, bytes) and len(v) > 64:
            return v[:32] + b"...(%d bytes)" % len(v)
        return v
    return {k: ([(hk, s(hv)) for hk, hv in v] if k == "headers" else s(v)) for k, v in r.items()}


def assert_same_records(got: list[dict], want: list[dict]):
    if got == want:
        return
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            diff = {k: (short(g)[k], short(w)[k]) for k in w if g.get(k) != w[k]}
            raise AssertionError(f"record #{i} ({w['partition']}, {w['offset']}) differs (got, want): {diff}")
    raise AssertionError(f"got {len(got)} records, want {len(want)}; "
                         f"first extra/missing: {short((got[len(want):] or want[len(got):])[0])}")


def multiset_equal(a: list, b: list) -> bool:
    """Multiset equality with == (so 1 == 1.0 and -0.0 == 0 as in JSON)."""
    rest = list(b)
    for x in a:
        for i, y in enumerate(rest):
            if x == y:
                del rest[i]
                break
        else:
            return False
    return not rest


PARTITION_KEYS = ("partition", "records", "min_offset", "max_offset", "min_timestamp", "max_timestamp", "gaps")


def partitions_of(out: dict) -> list[dict]:
    """The contract's keys of each `partitions` entry (extra keys are allowed)."""
    parts = []
    for p in out["partitions"]:
        missing = [k for k in PARTITION_KEYS if k not in p]
        assert not missing, f"partition entry lacks {missing}: {p}"
        parts.append({k: p[k] for k in PARTITION_KEYS})
    return parts


def records(thaw, warehouse, name, *extra):
    layout, _, args = CASES[name]
    p = thaw.ok("inspect", *src(warehouse, name), *args, "--records", "--format", "json", *extra)
    return parse_records(p.stdout, layout)


def inspect_json(thaw, warehouse, name, *extra):
    _, _, args = CASES[name]
    p = thaw.ok("inspect", *src(warehouse, name), *args, "--json", *extra)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        raise AssertionError(f"--json output is not one JSON object: {p.stdout[:500]!r}") from e


# ---------------------------------------------------------------------------
# the oracle and the fixtures agree (no binary needed)


@pytest.mark.parametrize("name", TABLES)
def test_oracle_matches_written_records(table_env, name):
    built = table_env.built[name]
    exp = expected(table_env, name)
    if built.records is not None:
        assert_same_records(exp, built.records)
    else:
        assert len(exp) == len(built.json_rows)
    assert table_env.build_seconds < 60


def test_oracle_first_snapshot(warehouse):
    built = warehouse.built["ns.canonical_v2"]
    first = expected(warehouse, "ns.canonical_v2", snapshot_id=built.snapshot_ids[0])
    assert first == built.append_records[0]
    assert 0 < len(first) < len(built.records)


# ---------------------------------------------------------------------------
# inspect --json


@pytest.mark.parametrize("name", TABLES)
def test_inspect_json(thaw, table_env, name):
    layout = CASES[name][0]
    t = table_env.table(name)
    exp = expected(table_env, name)
    out = inspect_json(thaw, table_env, name)
    tasks = list(t.scan().plan_files())
    assert out["table"] == name
    assert out["layout"] == oracle.reported_layout(layout)
    assert out["snapshot_id"] == t.current_snapshot().snapshot_id
    assert out["data_files"] == len(tasks)
    assert out["delete_files"] == len({d.file_path for task in tasks for d in task.delete_files})
    assert out["records"] == len(exp)
    want = oracle.summary(exp)
    got = partitions_of(out)
    if layout == "plain":  # no timestamps in a plain table: only their type is checked
        for p in got:
            for k in ("min_timestamp", "max_timestamp"):
                assert p.get(k) is None or isinstance(p[k], int)
                p[k] = None
    assert got == want


@pytest.mark.parametrize("name", ["ns.canonical_v2", "ns.redpanda", "ns.aiven", "ns.plain", "ns.connect_flat"])
def test_inspect_human(thaw, warehouse, name):
    layout = CASES[name][0]
    p = thaw.ok("inspect", *src(warehouse, name), *CASES[name][2])
    text = p.stdout.decode("utf-8")
    assert oracle.reported_layout(layout) in text
    for part in oracle.summary(expected(warehouse, name)):
        assert re.search(rf"(?<![\d.]){part['partition']}(?![\d.])", text), \
            f"partition {part['partition']} not in output:\n{text}"


# ---------------------------------------------------------------------------
# inspect --records


@pytest.mark.parametrize("name", [n for n in TABLES if CASES[n][0] != "plain"])
def test_records_full_dump(thaw, table_env, name):
    assert_same_records(records(thaw, table_env, name), expected(table_env, name))


@pytest.mark.parametrize("name", ["ns.plain", "ns.plain_types", "ns.v3_defaults"])
def test_records_plain(thaw, warehouse, name):
    got = records(thaw, warehouse, name)
    want = expected(warehouse, name)
    assert [r["partition"] for r in got] == [0] * len(want)
    assert [r["offset"] for r in got] == list(range(len(want)))
    assert all(r["key"] is None and r["headers"] == [] for r in got)
    assert all((r["timestamp"] is None or isinstance(r["timestamp"], int))
               and r["timestamp_type"] in ("CreateTime", "LogAppendTime")
               for r in got)
    assert multiset_equal([r["value"] for r in got], [r["value"] for r in want]), \
        f"values differ:\n got {[r['value'] for r in got]}\nwant {[r['value'] for r in want]}"
    again = thaw.ok("inspect", *src(warehouse, name), "--records", "--format", "json")
    first = thaw.ok("inspect", *src(warehouse, name), "--records", "--format", "json")
    assert again.stdout == first.stdout, "two runs gave different output"


@pytest.mark.parametrize("name,partition,from_offset,limit", [
    ("ns.canonical_v2", 0, None, None),        # one whole partition
    ("ns.canonical_v2", 0, 12, 5),             # 12..14 is a gap: starts at 15
    ("ns.canonical_v2", 0, 6, 2),              # single-offset gap
    ("ns.canonical_v2", 0, 500, 10),           # inside the 24..1023 gap: the last records
    ("ns.canonical_v2", 1, 0, 3),              # below the first offset (5)
    ("ns.canonical_v2", 1, 20, None),          # no limit; crosses file boundaries
    ("ns.canonical_v2", 1, None, 1),
    ("ns.canonical_v2", 2, 1_000_013, 4),      # gap in a high-offset partition
    ("ns.canonical_v2", 2, 1_001_027, 100),    # exactly the last offset
    ("ns.canonical_snappy_unpartitioned", 1, 3, 7),  # interleaved partitions in one file
    ("ns.aiven", 3, 13, 4),
    ("ns.redpanda", 2, 50, 6),
    ("ns.connect_nested", 1, 12, 3),
])
def test_records_slice(thaw, warehouse, name, partition, from_offset, limit):
    extra = ["--partition", str(partition)]
    if from_offset is not None:
        extra += ["--from-offset", str(from_offset)]
    if limit is not None:
        extra += ["--limit", str(limit)]
    want = oracle.slice_records(expected(warehouse, name), partition, from_offset, limit)
    assert want, "bad test case: empty slice"
    assert_same_records(records(thaw, warehouse, name, *extra), want)


@pytest.mark.parametrize("from_offset", ["max+1", 10**15])
def test_records_from_offset_beyond_max(thaw, warehouse, from_offset):
    name = "ns.canonical_v2"
    exp = expected(warehouse, name)
    if from_offset == "max+1":
        from_offset = max(r["offset"] for r in exp if r["partition"] == 0) + 1
    p = thaw.ok("inspect", *src(warehouse, name), "--records", "--format", "json",
                "--partition", "0", "--from-offset", str(from_offset))
    assert p.stdout.strip() == b""


def test_records_unknown_partition_is_empty(thaw, warehouse):
    p = thaw.ok("inspect", *src(warehouse, "ns.canonical_v2"), "--records", "--format", "json", "--partition", "7")
    assert p.stdout.strip() == b""


BINARY = b"\xff\x00\xfe"  # not UTF-8


def test_records_json_shows_text_as_text_and_other_bytes_as_base64(thaw, tmp_path):
    """kcat -J style: UTF-8 key / value / header value as the text itself ("utf8"), any other bytes as
    base64 ("base64"), null as null with a null encoding; every record names its topic."""
    recs = [
        fixtures.rec(0, 0, fixtures.BASE_TS_MS, "clé-✓".encode(), '{"name":"été"}'.encode(),
                     [("h", "värde".encode()), ("bin", BINARY), ("null", None)]),
        fixtures.rec(0, 1, fixtures.BASE_TS_MS + 1, BINARY, BINARY + b"value", [("h", BINARY)]),
        fixtures.rec(0, 2, fixtures.BASE_TS_MS + 2, None, None, [("h", None)]),
        # Empty and NUL-holding bytes are UTF-8; a surrogate and an overlong NUL are not.
        fixtures.rec(0, 3, fixtures.BASE_TS_MS + 3, b"", b"nul\x00inside", [("e", b"")]),
        fixtures.rec(0, 4, fixtures.BASE_TS_MS + 4, b"\xed\xa0\x80", b"\xc0\x80", None),
    ]
    wh = str(tmp_path)
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists("ns")
    t = fixtures.create(cat, wh, "ns.encodings", fixtures.canonical_schema(), spec=fixtures.CANONICAL_SPEC,
                        properties=fixtures.thaw_props("orders"))
    fixtures.append_rows(t, [fixtures.canonical_row(r) for r in recs])
    p = thaw.ok("inspect", "--catalog", fixtures.catalog_uri(wh), "--table", "ns.encodings", "--records",
                "--format", "json")
    lines = [json.loads(line) for line in p.stdout.decode("utf-8").splitlines()]
    assert [o["offset"] for o in lines] == [0, 1, 2, 3, 4]
    for o in lines:
        assert set(o) == RECORD_KEYS, o
        assert o["topic"] == "orders" and o["partition"] == 0, o
        assert all(set(h) == HEADER_KEYS for h in o["headers"]), o

    def encodings(o):
        return (o["key_encoding"], o["value_encoding"], [h["encoding"] for h in o["headers"]])

    assert encodings(lines[0]) == ("utf8", "utf8", ["utf8", "base64", None])
    assert lines[0]["key"] == "clé-✓" and lines[0]["value"] == '{"name":"été"}'
    assert lines[0]["headers"][0] == {"key": "h", "value": "värde", "encoding": "utf8"}
    assert lines[0]["headers"][1] == {"key": "bin", "value": "/wD+", "encoding": "base64"}
    assert lines[0]["headers"][2] == {"key": "null", "value": None, "encoding": None}
    assert encodings(lines[1]) == ("base64", "base64", ["base64"])
    assert lines[1]["key"] == "/wD+"
    assert encodings(lines[2]) == (None, None, [None])
    assert lines[2]["key"] is None and lines[2]["value"] is None
    assert encodings(lines[3]) == ("utf8", "utf8", ["utf8"])
    assert lines[3]["key"] == "" and lines[3]["value"] == "nul\x00inside"
    assert encodings(lines[4]) == ("base64", "base64", [])
    # Decoded, every byte is what was written.
    for o, r in zip(lines, recs):
        assert fixtures.json_bytes(o, "key") == r["key"], o
        assert fixtures.json_bytes(o, "value") == r["value"], o
        assert [(h["key"], fixtures.json_bytes(h, "value", "encoding")) for h in o["headers"]] == r["headers"], o
    assert_same_records(parse_records(p.stdout, "thaw"), fixtures.expected_view(recs))


# ---------------------------------------------------------------------------
# --layout / --column


def test_forced_layout_same_as_detected(thaw, warehouse):
    name = "ns.canonical_v2"
    assert_same_records(records(thaw, warehouse, name, "--layout", "thaw"), expected(warehouse, name))


def test_column_override_nested(thaw, warehouse):
    name = "ns.bufstream"
    got = records(thaw, warehouse, name, "--column", "timestamp=kafka.ingest_timestamp")
    want = expected(warehouse, name, columns={"timestamp": "kafka.ingest_timestamp"})
    assert want != expected(warehouse, name)
    assert_same_records(got, want)


def test_column_override_repeated(thaw, warehouse):
    name = "ns.bufstream"
    got = records(thaw, warehouse, name, "--column", "key=value.__raw__", "--column", "value=key.__raw__")
    want = expected(warehouse, name, columns={"key": "value.__raw__", "value": "key.__raw__"})
    assert_same_records(got, want)


def test_redpanda_v1_explicit_columns(thaw, warehouse):
    name = "ns.redpanda_v1"
    p = thaw.ok("inspect", *src(warehouse, name), "--layout", "redpanda",
                "--column", "timestamp=redpanda.timestamp_v1", "--records", "--format", "json")
    assert_same_records(parse_records(p.stdout, "redpanda_v1"), expected(warehouse, name))


# ---------------------------------------------------------------------------
# --metadata (no catalog)


@pytest.mark.parametrize("name", ["ns.canonical_v2", "ns.redpanda", "ns.canonical_v3"])
def test_metadata_path(thaw, table_env, name):
    layout, _, args = CASES[name]
    meta = table_env.metadata_args(name)
    p = thaw.ok("inspect", *meta, *args, "--records", "--format", "json")
    assert_same_records(parse_records(p.stdout, layout), expected(table_env, name))
    p = thaw.ok("inspect", *meta, *args, "--json")
    out = json.loads(p.stdout)
    assert out["layout"] == oracle.reported_layout(layout)
    assert out["records"] == len(expected(table_env, name))


# ---------------------------------------------------------------------------
# snapshot selection


def snapshot_ts(table, snapshot_id) -> int:
    return table.metadata.snapshot_by_id(snapshot_id).timestamp_ms


def iso_ms(ms: int) -> str:
    d = dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


@pytest.mark.parametrize("how", ["snapshot", "ref-tag", "as-of-ms", "as-of-iso", "ref-branch", "ref-main"])
def test_snapshot_selection(thaw, table_env, how):
    name = "ns.canonical_v2"
    built = table_env.built[name]
    t = table_env.table(name)
    first, second = built.snapshot_ids[0], built.snapshot_ids[1]
    t1, t2 = snapshot_ts(t, first), snapshot_ts(t, second)
    assert t2 - t1 >= 2, "fixture snapshots too close in time"
    mid = (t1 + t2) // 2
    sel, want_id = {
        "snapshot": (["--snapshot", str(first)], first),
        "ref-tag": (["--ref", "first-append"], first),
        "as-of-ms": (["--as-of", str(mid)], first),
        "as-of-iso": (["--as-of", iso_ms(mid)], first),
        "ref-branch": (["--ref", "audit"], second),
        "ref-main": (["--ref", "main"], t.current_snapshot().snapshot_id),
    }[how]
    want = expected(table_env, name, snapshot_id=want_id)
    if want_id == first:
        assert want == built.append_records[0]
    assert_same_records(records(thaw, table_env, name, *sel), want)
    out = inspect_json(thaw, table_env, name, *sel)
    assert out["snapshot_id"] == want_id
    assert out["records"] == len(want)
    assert partitions_of(out) == oracle.summary(want)
