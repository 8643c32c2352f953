"""Real Iceberg engines reading a table in Thaw's canonical layout (the table
`thaw archive` writes; docs/layouts.md), each normalised to the record shape of
kafka_broker.KafkaBroker.consume_all:

    {"partition": int, "offset": int, "timestamp": int (ms),
     "timestamp_type": "CreateTime" | "LogAppendTime",
     "key": bytes | None, "value": bytes | None,
     "headers": [(str, bytes | None), ...]}        # wire order, duplicates kept

sorted by (partition, offset). A null headers list reads as [] (Kafka has no
null header list). The readers:

* read_pyiceberg(catalog_uri, ident): pyiceberg's SqlCatalog (the catalog
  name is taken from the database, as Thaw's SQL catalog does), a full scan.
* read_pyiceberg_metadata(metadata_location): pyiceberg's StaticTable.
* read_duckdb(metadata_location): DuckDB's iceberg extension (`iceberg_scan`
  on the metadata.json), the avro and iceberg extensions INSTALLed from their
  PyPI wheels (scripts/deps/requirements-test.txt) with autoinstall and
  autoload off: nothing is downloaded.
* read_java(metadata_location): Iceberg Java's generic reader
  (tests/fixtures/java `run.sh oracle --metadata`, built by
  scripts/deps/install-java.sh).
* read_thaw(thaw, catalog_uri, ident): `thaw inspect --records --format json`
  (bytes decoded by their encoding fields: fixtures.json_bytes).

`metadata_location(catalog_uri, ident)` gives the table's current metadata
file (a local path) for the engines that take one. `assert_same_records(got,
want, what)` compares two such lists and fails on the first difference, saying
which record and which field.

No code is shared with Thaw or with the other oracles (oracle.py): the
canonical columns are written down here from docs/layouts.md.
"""

from __future__ import annotations

import atexit
import base64
import importlib
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

import fixtures

REPO = Path(__file__).resolve().parents[2]
JAVA_RUN = REPO / "tests" / "fixtures" / "java" / "run.sh"

FIELDS = ("partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers")
_TS_TYPES = {0: "CreateTime", 1: "LogAppendTime"}


def _ts_type(v) -> str:
    # The canonical column holds 0 (CreateTime) or 1 (LogAppendTime).
    if v not in _TS_TYPES:
        raise AssertionError(f"kafka_timestamp_type {v!r} is neither 0 (CreateTime) nor 1 (LogAppendTime)")
    return _TS_TYPES[v]


def _sorted(rows: list[dict]) -> list[dict]:
    rows.sort(key=lambda r: (r["partition"], r["offset"]))
    return rows


def _local(location: str) -> str:
    return location.removeprefix("file://")


# --------------------------------------------------------------------------
# pyiceberg


def sql_catalog(catalog_uri: str):
    """pyiceberg's SqlCatalog on a SQLite catalog (sqlite:///PATH), under the
    catalog name its tables are stored with ("default" in an empty one)."""
    from pyiceberg.catalog.sql import SqlCatalog

    if not catalog_uri.startswith("sqlite:///"):
        raise ValueError(f"not a SQLite catalog URI: {catalog_uri}")
    name = "default"
    db = catalog_uri.removeprefix("sqlite:///")
    if os.path.exists(db):
        with sqlite3.connect(db) as con:
            try:
                names = [r[0] for r in con.execute("SELECT DISTINCT catalog_name FROM iceberg_tables")]
            except sqlite3.OperationalError:
                names = []
        if len(names) == 1:
            name = names[0]
    return SqlCatalog(name, uri=catalog_uri)


def load_table(catalog_uri: str, ident: str):
    return sql_catalog(catalog_uri).load_table(ident)


def metadata_location(catalog_uri: str, ident: str) -> str:
    """The table's current metadata file, as a local path."""
    return _local(load_table(catalog_uri, ident).metadata_location)


def _rows_from_arrow(tbl) -> list[dict]:
    out = []
    cols = {name: tbl.column(name).to_pylist() for name in
            ("kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_timestamp_type", "key", "value", "headers")}
    # kafka_timestamp as integer microseconds (no datetime rounding on the way).
    import pyarrow as pa
    import pyarrow.compute as pc

    ts = tbl.column("kafka_timestamp")
    micros = pc.cast(ts, pa.timestamp("us", tz=ts.type.tz) if pa.types.is_timestamp(ts.type) else ts.type)
    micros = micros.cast(pa.int64()).to_pylist()
    for i in range(tbl.num_rows):
        hs = cols["headers"][i]
        out.append({
            "partition": cols["kafka_partition"][i],
            "offset": cols["kafka_offset"][i],
            "timestamp": None if micros[i] is None else micros[i] // 1000,
            "timestamp_type": _ts_type(cols["kafka_timestamp_type"][i]),
            "key": cols["key"][i],
            "value": cols["value"][i],
            "headers": [(h["key"], h["value"]) for h in (hs or [])],
        })
    return _sorted(out)


def read_pyiceberg(catalog_uri: str, ident: str) -> list[dict]:
    """Every record of the table's current snapshot, read by pyiceberg through
    its SQL catalog."""
    return _rows_from_arrow(load_table(catalog_uri, ident).scan().to_arrow())


def read_pyiceberg_metadata(location: str) -> list[dict]:
    """The same through pyiceberg's StaticTable (no catalog)."""
    from pyiceberg.table import StaticTable

    loc = location if "://" in location else f"file://{location}"
    return _rows_from_arrow(StaticTable.from_metadata(loc).scan().to_arrow())


def pyiceberg_offsets(catalog_uri: str, ident: str) -> list[tuple[int, int]]:
    """(partition, offset) of every row, sorted, duplicates kept (reads only
    the two columns)."""
    t = load_table(catalog_uri, ident)
    if t.current_snapshot() is None:
        return []
    a = t.scan(selected_fields=("kafka_partition", "kafka_offset")).to_arrow()
    return sorted(zip(a.column("kafka_partition").to_pylist(), a.column("kafka_offset").to_pylist()))


# --------------------------------------------------------------------------
# DuckDB


_duckdb_ext_dir: str | None = None


def duckdb_connect():
    """A DuckDB connection with the iceberg (and avro) extensions loaded from
    their pinned PyPI wheels; autoinstall/autoload off, so a missing or
    mismatched wheel fails here instead of downloading anything."""
    import duckdb

    global _duckdb_ext_dir
    if _duckdb_ext_dir is None:
        # INSTALL copies the extension files here: a private directory, not ~/.duckdb.
        _duckdb_ext_dir = tempfile.mkdtemp(prefix="thaw-duckdb-ext-")
        atexit.register(shutil.rmtree, _duckdb_ext_dir, True)
    con = duckdb.connect(config={"autoinstall_known_extensions": "false",
                                 "autoload_known_extensions": "false",
                                 "extension_directory": _duckdb_ext_dir})
    con.execute("SET enable_progress_bar = false")
    ver = con.sql("PRAGMA version").fetchone()[0]
    for name in ("avro", "iceberg"):
        mod = importlib.import_module(f"duckdb_extension_{name}")
        path = Path(mod.__file__).parent / "extensions" / ver / f"{name}.duckdb_extension"
        if not path.is_file():
            raise FileNotFoundError(
                f"DuckDB {ver}: no {name} extension at {path} (the wheel duckdb-extension-{name} must match "
                f"duckdb's version; scripts/deps/requirements-test.txt)")
        con.execute(f"INSTALL '{path}'")
        con.execute(f"LOAD {name}")
    return con


def read_duckdb(location: str) -> list[dict]:
    """Every record of the table whose current metadata file is `location`,
    read with DuckDB's iceberg_scan."""
    con = duckdb_connect()
    try:
        path = _local(location).replace("'", "''")
        rows = con.execute(
            "SELECT kafka_partition, kafka_offset, epoch_us(kafka_timestamp), kafka_timestamp_type, "
            f"key, value, headers FROM iceberg_scan('{path}')").fetchall()
    finally:
        con.close()
    out = []
    for p, o, us, tt, k, v, hs in rows:
        out.append({
            "partition": p, "offset": o, "timestamp": None if us is None else us // 1000,
            "timestamp_type": _ts_type(tt),
            "key": None if k is None else bytes(k), "value": None if v is None else bytes(v),
            "headers": [(h["key"], None if h["value"] is None else bytes(h["value"])) for h in (hs or [])],
        })
    return _sorted(out)


# --------------------------------------------------------------------------
# Iceberg Java and Thaw (JSON lines: Java's bytes are base64; Thaw's are kcat -J style, the text when
# it is UTF-8 else base64, with an encoding field each: fixtures.json_bytes)


def _b64(s):
    return None if s is None else base64.b64decode(s)


def _java_bytes(obj: dict, field: str, encoding_field: str | None = None) -> bytes | None:
    return _b64(obj[field])


def _from_json_lines(text: str, thaw: bool = False) -> list[dict]:
    b = fixtures.json_bytes if thaw else _java_bytes
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        out.append({
            "partition": r["partition"], "offset": r["offset"], "timestamp": r["timestamp"],
            "timestamp_type": r["timestamp_type"], "key": b(r, "key"), "value": b(r, "value"),
            "headers": [(h["key"], b(h, "value", "encoding")) for h in (r["headers"] or [])],
        })
    return _sorted(out)


def read_java(location: str, timeout: float = 300) -> list[dict]:
    """Every record of the table whose current metadata file is `location`,
    read by Iceberg Java's generic reader (IcebergGenerics over
    StaticTableOperations)."""
    return read_java_many([location], timeout)[location]


def read_java_many(locations: list[str], timeout: float = 300) -> dict[str, list[dict]]:
    """read_java of several tables in one JVM run (a start costs seconds):
    {location: records}."""
    paths = [_local(loc) for loc in locations]
    assert paths and not any("," in p for p in paths), paths
    p = subprocess.run([str(JAVA_RUN), "oracle", "--metadata", ",".join(paths)], capture_output=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise AssertionError(f"Iceberg Java reader failed (exit {p.returncode}; built by "
                             f"scripts/deps/install-java.sh):\n{p.stderr.decode(errors='replace')[-3000:]}")
    sections: dict[str, list[str]] = {}
    current = None
    for line in p.stdout.decode().splitlines():
        if line.startswith("# "):
            current = sections.setdefault(line[2:], [])
        elif line.strip():
            assert current is not None, f"Iceberg Java reader: a row before any '# METADATA' line: {line[:200]}"
            current.append(line)
    assert sorted(sections) == sorted(set(paths)), (sorted(sections), paths)
    return {loc: _from_json_lines("\n".join(sections[_local(loc)])) for loc in locations}


def read_thaw(thaw, catalog_uri: str, ident: str) -> list[dict]:
    """`thaw inspect --records --format json` of the table (Thaw's own view)."""
    p = thaw.ok("inspect", "--catalog", catalog_uri, "--table", ident, "--records", "--format", "json")
    return _from_json_lines(p.stdout.decode(), thaw=True)


# --------------------------------------------------------------------------
# comparing


def _short(v, limit: int = 80):
    r = repr(v)
    return r if len(r) <= limit else r[:limit] + f"...({len(v) if hasattr(v, '__len__') else '?'} long)"


def _ids(records: Iterable[dict]) -> list[tuple[int, int]]:
    return [(r["partition"], r["offset"]) for r in records]


def first_difference(got: list[dict], want: list[dict], fields: tuple[str, ...] = FIELDS) -> str | None:
    """None when equal; else a sentence on the first difference."""
    gi, wi = _ids(got), _ids(want)
    dup = [k for k in set(gi) if gi.count(k) > 1] if len(set(gi)) != len(gi) else []
    if dup:
        return f"{len(gi) - len(set(gi))} duplicate (partition, offset) in what was read, e.g. {sorted(dup)[:5]}"
    if gi != wi:
        gs, ws = set(gi), set(wi)
        missing, extra = sorted(ws - gs), sorted(gs - ws)
        return (f"{len(got)} records read, {len(want)} expected; missing (partition, offset) "
                f"{missing[:10]}{' ...' if len(missing) > 10 else ''} ({len(missing)}), unexpected "
                f"{extra[:10]}{' ...' if len(extra) > 10 else ''} ({len(extra)})")
    for g, w in zip(got, want):
        for f in fields:
            if g[f] != w[f]:
                return (f"partition {w['partition']} offset {w['offset']}: {f} is {_short(g[f])}, "
                        f"expected {_short(w[f])}")
    return None


def assert_same_records(got: list[dict], want: list[dict], what: str, fields: tuple[str, ...] = FIELDS) -> None:
    """Fails with the first difference between `got` (read by `what`) and
    `want` (e.g. consume_all's read_committed records)."""
    d = first_difference(got, want, fields)
    assert d is None, f"{what}: {d}"
