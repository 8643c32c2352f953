"""Shared fixtures for the `thaw inspect` integration tests.

* `warehouse` (session): every fixture table of fixtures.py, written once by
  pyiceberg into a temp dir (or into $THAW_TEST_WAREHOUSE, wiped first, to keep
  it for debugging).
* `thaw` : runs the CLI (binary from $THAW_BIN, default build/bin/thaw); a
  missing binary FAILS the test, it never skips it.
* `small_table` (per test): a small canonical table in its own warehouse, for
  tests that corrupt files.

The plugins kafka_broker.py (a real Kafka broker) and lakehouse.py (S3 store,
Iceberg REST catalog, PostgreSQL; `table_env`, which runs a scenario on the
local warehouse and on the same tables behind the REST catalog in S3) and
schema_registry.py (a Confluent-compatible schema registry) add more.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import fixtures

# The real Kafka broker (KRaft) fixture `kafka`; the lakehouse servers (moto
# S3 store, PostgreSQL, Iceberg REST catalog) of lakehouse.py; the schema
# registry of schema_registry.py.
pytest_plugins = ["kafka_broker", "lakehouse", "schema_registry"]

REPO = Path(__file__).resolve().parents[2]
DEFAULT_THAW_BIN = REPO / "build" / "bin" / "thaw"


@dataclass
class Warehouse:
    dir: str
    uri: str
    built: dict          # table name -> fixtures.Built
    build_seconds: float

    kind = "local"

    @property
    def catalog_args(self) -> list[str]:
        return ["--catalog", self.uri]

    def metadata_args(self, name: str) -> list[str]:
        return ["--metadata", self.table(name).metadata_location.removeprefix("file://")]

    def catalog(self):
        return fixtures.open_catalog(self.dir)

    def table(self, name: str):
        return self.catalog().load_table(name)


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory) -> Warehouse:
    keep = os.environ.get("THAW_TEST_WAREHOUSE")
    if keep:
        d = Path(keep).resolve()
        shutil.rmtree(d, ignore_errors=True)
    else:
        d = tmp_path_factory.mktemp("warehouse")
    t0 = time.monotonic()
    built = fixtures.build_warehouse(str(d))
    return Warehouse(str(d), fixtures.catalog_uri(str(d)), built, time.monotonic() - t0)


def thaw_bin_path() -> Path:
    return Path(os.environ.get("THAW_BIN", str(DEFAULT_THAW_BIN)))


@pytest.fixture(scope="session")
def thaw_bin() -> Path:
    p = thaw_bin_path()
    if not (p.is_file() and os.access(p, os.X_OK)):
        pytest.fail(f"thaw binary not found or not executable: {p} (build it, or set THAW_BIN)", pytrace=False)
    return p


class Thaw:
    """Runs `thaw ARGS...`; returns subprocess.CompletedProcess with bytes output."""

    def __init__(self, binary: Path):
        self.binary = binary

    def __call__(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.binary), *map(str, args)], capture_output=True, timeout=timeout)

    def ok(self, *args: str) -> subprocess.CompletedProcess:
        """Run and assert exit status 0."""
        p = self(*args)
        assert p.returncode == 0, (
            f"thaw {' '.join(map(str, args))} exited {p.returncode}\nstderr:\n"
            f"{p.stderr.decode('utf-8', 'replace')[:4000]}")
        return p


@pytest.fixture(scope="session")
def thaw(thaw_bin) -> Thaw:
    return Thaw(thaw_bin)


@dataclass
class SmallTable:
    dir: str
    uri: str
    name: str
    table: object  # pyiceberg Table

    @property
    def metadata_path(self) -> str:
        return self.table.metadata_location.removeprefix("file://")


@pytest.fixture
def small_table(tmp_path) -> SmallTable:
    d = str(tmp_path / "wh")
    name = "ns.small"
    t = fixtures.build_small_canonical(d, name)
    return SmallTable(d, fixtures.catalog_uri(d), name, t)
