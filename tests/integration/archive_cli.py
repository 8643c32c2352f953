"""Running `thaw archive` in the archive scenario tests
(test_archive_readers.py, test_archive_roundtrip.py, test_archive_crash.py),
and reading what it committed without any Iceberg library:

* new_catalog(dir) -> URI of an empty SQLite catalog (pyiceberg's tables).
* archive_args(kafka, uri, table, topic, *extra) -> the CLI arguments
  (`--create` included; a new table goes under the catalog
  database's directory).
* start_archive(thaw_bin, args, stderr_path) -> Popen (stdout piped).
* committed_next_offsets(uri, table) -> {partition: next offset} of the
  current snapshot's `thaw.archive.next-offsets` summary (the archiver's
  truth), read from the metadata JSON the SQLite catalog points at.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path


def new_catalog(warehouse: str) -> str:
    """An empty SQLite catalog database in `warehouse` (its tables created by
    pyiceberg's SqlCatalog, catalog name "default"); returns its URI."""
    import fixtures

    os.makedirs(warehouse, exist_ok=True)
    fixtures.open_catalog(warehouse)
    return fixtures.catalog_uri(warehouse)


def warehouse_of(uri: str) -> str:
    return os.path.dirname(uri.removeprefix("sqlite:///"))


def archive_args(kafka, uri: str, table: str, topic: str, *extra: str) -> list[str]:
    return ["archive", "--brokers", kafka.bootstrap, "--topic", topic, "--catalog", uri, "--table", table,
            "--create", "--warehouse", warehouse_of(uri), *map(str, extra)]


def start_archive(thaw_bin: Path, args: list[str], stderr_path: Path) -> subprocess.Popen:
    with open(stderr_path, "ab") as err:
        return subprocess.Popen([str(thaw_bin), *args], stdout=subprocess.PIPE, stderr=err,
                                stdin=subprocess.DEVNULL)


class CatalogMidTransaction(RuntimeError):
    """The SQLite catalog has a hot journal: a writer was killed inside a transaction."""


def metadata_location(uri: str, table: str) -> str | None:
    """The current metadata file of NS.TABLE in the SQLite catalog, or None
    while the table does not exist."""
    db = uri.removeprefix("sqlite:///")
    if not os.path.exists(db):
        return None
    ns, name = table.rsplit(".", 1)
    # Read-only, so that reading never repairs what a killed writer left (a hot journal: then
    # CatalogMidTransaction is raised; the next writer must roll it back).
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        row = con.execute("SELECT metadata_location FROM iceberg_tables WHERE table_namespace = ? AND table_name = ?",
                          (ns, name)).fetchone()
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return None
        if os.path.exists(db + "-journal") and "readonly" in str(e):
            raise CatalogMidTransaction(f"{db}: a writer died in a transaction (hot journal): {e}") from e
        raise
    finally:
        con.close()
    return None if row is None else row[0].removeprefix("file://")


def current_snapshot(uri: str, table: str) -> dict | None:
    loc = metadata_location(uri, table)
    if loc is None:
        return None
    with open(loc) as f:
        md = json.load(f)
    sid = md.get("current-snapshot-id")
    if sid in (None, -1):
        return None
    return next(s for s in md["snapshots"] if s["snapshot-id"] == sid)


def committed_next_offsets(uri: str, table: str, topic: str) -> dict[int, int]:
    snap = current_snapshot(uri, table)
    if snap is None:
        return {}
    raw = snap["summary"].get("thaw.archive.next-offsets")
    assert raw is not None, f"snapshot {snap['snapshot-id']} of {table} has no thaw.archive.next-offsets"
    return {int(p): int(o) for p, o in json.loads(raw).get(topic, {}).items()}
