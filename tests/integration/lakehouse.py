"""pytest plugin: the real lakehouse servers the issue 9 tests run against.

Load it with ``pytest_plugins = ["lakehouse"]`` (conftest.py does). Every
fixture is session-scoped and starts its server only when a test asks for it;
each server binds 127.0.0.1 on a free port (retrying the bind), runs from a
temp dir, is stopped at the end of the session, and has the tail of its log
attached to the report of any failing test that used it (and to the failure
when it does not come up). Nothing is mocked: these are the real programs.

* ``s3_store``: moto in server mode (``moto_server``, PyPI, pinned in
  scripts/deps/requirements-test.txt), in memory, with a bucket ``warehouse``.
  Attributes ``endpoint``, ``access_key``, ``secret_key``, ``region``,
  ``bucket``; ``.props()`` -> the s3.* properties pyiceberg / Iceberg Java /
  ``thaw --catalog-property`` take; ``.client()`` -> a boto3 S3 client.

* ``postgres``: PostgreSQL 15 from Debian (scripts/deps/debian-test-packages.txt),
  initdb'd into a temp dir as the ``postgres`` user when we run as root; a role
  ``thaw`` with a password and a database ``thaw``. ``.uri`` =
  ``postgresql://thaw:PASSWORD@127.0.0.1:PORT/thaw``; ``.sqlalchemy_uri`` is the
  ``postgresql+psycopg2://`` form pyiceberg's SqlCatalog takes.

* ``rest_catalog``: Apache Iceberg's RESTCatalogServer (Java; jars from
  tests/rest-catalog/pom.xml, installed by scripts/deps/install-rest-catalog.sh
  into .deps/rest-catalog/lib) with S3FileIO on ``s3_store`` (path-style), a
  JDBC catalog backend on a SQLite file, and CATALOG_INCLUDE__CREDENTIALS=true so
  it hands the store's credentials to clients. ``.uri`` (http://127.0.0.1:PORT),
  ``.warehouse`` (s3://warehouse/rest), ``.pyiceberg(**extra)`` -> a pyiceberg
  RestCatalog, ``.client_props()`` -> what a client needs besides the keys it
  vends (s3.endpoint, s3.region, s3.path-style-access).

* ``lakehouse_warehouse``: every table of fixtures.build_warehouse, written by
  pyiceberg through ``rest_catalog`` into ``s3_store``.
* ``table_env`` (per test, parametrised "local" / "rest-s3"): conftest's local
  ``warehouse`` or ``lakehouse_warehouse``, behind one interface
  (``.catalog_args``, ``.metadata_args(name)``, ``.built``, ``.table(name)``), so
  an existing scenario runs in both by taking ``table_env``.

Run them by hand: see tests/integration/README.md ("Lakehouse servers").

Environment:
  THAW_TEST_KEEP_SERVERS=1  keep the servers' temp dirs after the session
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# moto_server: beside the Python running the tests (the project venv), else the project venv's.
VENV_BIN = next((d for d in (Path(sys.executable).parent, REPO / ".deps" / "venv" / "bin")
                 if (d / "moto_server").exists()), REPO / ".deps" / "venv" / "bin")
PG_BIN = Path(os.environ.get("THAW_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
REST_LIB = REPO / ".deps" / "rest-catalog" / "lib"
INSTALL_REST = REPO / "scripts" / "deps" / "install-rest-catalog.sh"

# How often a server start is retried with a new port when the port we picked
# was taken in the meantime (ports in the ephemeral range can be held briefly
# by closed client sockets).
BIND_TRIES = 5


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, max_bytes: int = 6000) -> str:
    try:
        data = path.read_bytes()
    except OSError as e:
        return f"(no log at {path}: {e})"
    text = data[-max_bytes:].decode("utf-8", "replace")
    return ("...\n" if len(data) > max_bytes else "") + text


def _keep() -> bool:
    return os.environ.get("THAW_TEST_KEEP_SERVERS", "") not in ("", "0")


def _http_ok(url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return 200 <= r.status < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


_RUNNING: "set[_Server]" = set()


@atexit.register
def _end_leftovers() -> None:
    """Servers a fixture started but never stopped (it failed between start and yield) end with
    the test session, not later."""
    for s in list(_RUNNING):
        s.stop()


class _Server:
    """A child process with a log file; stop() ends it (and only it)."""

    name = "server"

    def __init__(self, dir: Path, log: Path):
        self.dir = dir
        self.log = log
        self.proc: subprocess.Popen | None = None
        self.start_seconds = 0.0

    def log_tail(self, max_bytes: int = 6000) -> str:
        return _tail(self.log, max_bytes)

    def _spawn(self, argv: list[str], env: dict | None = None, **kw) -> subprocess.Popen:
        with open(self.log, "ab") as out:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=env, start_new_session=True, **kw)
        _RUNNING.add(self)
        return p

    def _end(self) -> None:
        _RUNNING.discard(self)
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)

    def stop(self) -> None:
        self._end()
        if not _keep():
            shutil.rmtree(self.dir, ignore_errors=True)


# --------------------------------------------------------------------------
# S3-compatible object store: moto


class S3Store(_Server):
    name = "moto (s3_store)"
    access_key = "thaw-test-access-key"
    secret_key = "thaw-test-secret-key"
    region = "us-east-1"
    bucket = "warehouse"

    def __init__(self, dir: Path):
        super().__init__(dir, dir / "moto.log")
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def props(self) -> dict[str, str]:
        """The s3.* properties for pyiceberg, Iceberg Java and `thaw --catalog-property`."""
        return {
            "s3.endpoint": self.endpoint,
            "s3.access-key-id": self.access_key,
            "s3.secret-access-key": self.secret_key,
            "s3.region": self.region,
            "s3.path-style-access": "true",
        }

    def client(self):
        import boto3  # comes with moto
        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.access_key,
                            aws_secret_access_key=self.secret_key, region_name=self.region)

    def list_keys(self, prefix: str = "") -> list[str]:
        keys = []
        for page in self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            keys += [o["Key"] for o in page.get("Contents", [])]
        return keys

    @classmethod
    def start(cls, dir: Path) -> "S3Store":
        moto = VENV_BIN / "moto_server"
        if not moto.exists():
            pytest.fail(f"{moto} not found: run scripts/deps/install.sh --test (moto[server] in "
                        "scripts/deps/requirements-test.txt)", pytrace=False)
        s = cls(dir)
        t0 = time.monotonic()
        for _ in range(BIND_TRIES):
            s.port = free_port()
            s.proc = s._spawn([str(moto), "-H", "127.0.0.1", "-p", str(s.port)])
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and s.proc.poll() is None:
                if _http_ok(f"{s.endpoint}/moto-api/data.json"):
                    break
                time.sleep(0.05)
            if s.proc.poll() is None and _http_ok(f"{s.endpoint}/moto-api/data.json"):
                break
            s._end()  # exited (port taken?) or never answered: try another port
        else:
            log = s.log_tail()
            s.stop()
            pytest.fail(f"moto_server did not come up on 127.0.0.1 after {BIND_TRIES} tries; log:\n{log}",
                        pytrace=False)
        try:
            s.client().create_bucket(Bucket=cls.bucket)
        except Exception as e:
            log = s.log_tail()
            s.stop()
            pytest.fail(f"moto_server on {s.endpoint} refused to create bucket {cls.bucket}: {e}\nlog:\n{log}",
                        pytrace=False)
        s.start_seconds = time.monotonic() - t0
        return s


# --------------------------------------------------------------------------
# PostgreSQL (SQL catalog backend)


class Postgres(_Server):
    name = "postgresql (postgres)"
    user = "thaw"
    password = "thaw-test-pw"
    database = "thaw"

    def __init__(self, dir: Path):
        super().__init__(dir, dir / "postgres.log")
        self.port = 0
        self.data = dir / "data"
        self._run_as: str | None = None

    @property
    def uri(self) -> str:
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{self.database}"

    @property
    def sqlalchemy_uri(self) -> str:
        return f"postgresql+psycopg2://{self.user}:{self.password}@127.0.0.1:{self.port}/{self.database}"

    def _pg(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        kw = {"user": self._run_as} if self._run_as else {}
        p = subprocess.run([str(PG_BIN / argv[0]), *argv[1:]], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, cwd=self.dir, **kw)
        if check and p.returncode != 0:
            log = self.log_tail()
            raise RuntimeError(f"{argv[0]} exited {p.returncode}: {p.stdout}{p.stderr}\nserver log:\n{log}")
        return p

    def connect(self, **kw):
        import psycopg2
        args = dict(host="127.0.0.1", port=self.port, user=self.user, password=self.password,
                    dbname=self.database)
        args.update(kw)
        return psycopg2.connect(**args)

    @classmethod
    def start(cls, base: Path | None = None) -> "Postgres":
        if not (PG_BIN / "initdb").exists():
            pytest.fail(f"{PG_BIN}/initdb not found: PostgreSQL 15 is installed by scripts/deps/install.sh --test "
                        "(scripts/deps/debian-test-packages.txt)", pytrace=False)
        # Not under pytest's tmp dir: that is private to root, and the server
        # must run as an unprivileged user (PostgreSQL refuses root).
        s = cls(Path(tempfile.mkdtemp(prefix="thaw-pg-", dir=base)))
        if os.geteuid() == 0:
            s._run_as = "postgres"
            shutil.chown(s.dir, user="postgres")
        t0 = time.monotonic()
        pwfile = s.dir / "pw"
        pwfile.write_text(s.password + "\n")
        if s._run_as:
            shutil.chown(pwfile, user=s._run_as)
        try:
            # Superuser `postgres` over the Unix socket (trust) to set up; the
            # tests' role `thaw` logs in over TCP with its password.
            s._pg("initdb", "-D", str(s.data), "-U", "postgres", "--auth-local=trust",
                  "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C")
            pwfile.unlink()
            for _ in range(BIND_TRIES):
                s.port = free_port()
                opts = (f"-p {s.port} -k {s.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                        "-c synchronous_commit=off -c full_page_writes=off")
                _RUNNING.add(s)
                p = s._pg("pg_ctl", "start", "-w", "-t", "60", "-D", str(s.data), "-l", str(s.log), "-o", opts,
                          check=False)
                if p.returncode == 0:
                    break
                if "Address already in use" not in s.log_tail():
                    raise RuntimeError(f"pg_ctl start exited {p.returncode}: {p.stdout}{p.stderr}")
            else:
                raise RuntimeError(f"no free port after {BIND_TRIES} tries")
            s._pg("psql", "-h", str(s.dir), "-p", str(s.port), "-U", "postgres", "-d", "postgres", "-v",
                  "ON_ERROR_STOP=1", "-q", "-c", f"CREATE ROLE {s.user} LOGIN PASSWORD '{s.password}'", "-c",
                  f"CREATE DATABASE {s.database} OWNER {s.user}")
        except Exception as e:
            log = s.log_tail()
            s.stop()
            pytest.fail(f"PostgreSQL did not come up: {e}\nlog:\n{log}", pytrace=False)
        s.start_seconds = time.monotonic() - t0
        return s

    def _end(self) -> None:
        _RUNNING.discard(self)
        if self.port and (self.data / "postmaster.pid").exists():
            self._pg("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w", check=False)


# --------------------------------------------------------------------------
# Apache Iceberg's REST catalog server


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    j = shutil.which("java")
    if not j:
        pytest.fail("java not found (JDK >= 17: scripts/deps/install.sh --test)", pytrace=False)
    return j


def _ensure_rest_jars() -> None:
    if list(REST_LIB.glob("iceberg-open-api-*-test-fixtures.jar")):
        return
    p = subprocess.run([str(INSTALL_REST)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.fail(f"{INSTALL_REST} failed:\n{p.stdout}{p.stderr}", pytrace=False)


class RestCatalog(_Server):
    name = "Iceberg RESTCatalogServer (rest_catalog)"

    def __init__(self, dir: Path, store: S3Store, prefix: str):
        super().__init__(dir, dir / "rest-catalog.log")
        self.store = store
        self.port = 0
        self.warehouse = f"s3://{store.bucket}/{prefix}"
        self.db = dir / "catalog.db"

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client_props(self) -> dict[str, str]:
        """What a client needs besides the URI: the store's endpoint and addressing. The
        server vends the access key and secret itself (include-credentials), but not these."""
        return {k: v for k, v in self.store.props().items()
                if k in ("s3.endpoint", "s3.region", "s3.path-style-access")}

    def pyiceberg(self, **extra):
        """A pyiceberg RestCatalog on this server, with the store's s3.* properties."""
        from pyiceberg.catalog.rest import RestCatalog as PyRestCatalog
        props = {"uri": self.uri, **self.store.props(), **extra}
        return PyRestCatalog("rest", **props)

    def env(self) -> dict[str, str]:
        # RESTCatalogServer reads its catalog properties from CATALOG_* variables:
        # CATALOG_X_Y__Z -> x.y-z.
        e = {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_")}
        e.update({
            "CATALOG_REST_PORT": str(self.port),
            "CATALOG_WAREHOUSE": self.warehouse,
            "CATALOG_CATALOG__IMPL": "org.apache.iceberg.jdbc.JdbcCatalog",
            "CATALOG_URI": f"jdbc:sqlite:{self.db}",
            "CATALOG_JDBC_SCHEMA__VERSION": "V1",
            "CATALOG_IO__IMPL": "org.apache.iceberg.aws.s3.S3FileIO",
            "CATALOG_S3_ENDPOINT": self.store.endpoint,
            "CATALOG_S3_PATH__STYLE__ACCESS": "true",
            "CATALOG_S3_ACCESS__KEY__ID": self.store.access_key,
            "CATALOG_S3_SECRET__ACCESS__KEY": self.store.secret_key,
            "CATALOG_CLIENT_REGION": self.store.region,
            "CATALOG_INCLUDE__CREDENTIALS": "true",
            # The AWS SDK's own chain must not find anything else on this machine.
            "AWS_ACCESS_KEY_ID": self.store.access_key,
            "AWS_SECRET_ACCESS_KEY": self.store.secret_key,
            "AWS_REGION": self.store.region,
        })
        return e

    def argv(self) -> list[str]:
        return [_java(), "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                "-cp", f"{REST_LIB}/*",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                "-Dorg.slf4j.simpleLogger.log.org.apache.hadoop.util.NativeCodeLoader=error",
                "org.apache.iceberg.rest.RESTCatalogServer"]

    @classmethod
    def start(cls, dir: Path, store: S3Store, prefix: str = "rest") -> "RestCatalog":
        _ensure_rest_jars()
        s = cls(dir, store, prefix)
        t0 = time.monotonic()
        for _ in range(BIND_TRIES):
            s.port = free_port()
            s.proc = s._spawn(s.argv(), env=s.env(), cwd=dir)
            deadline = time.monotonic() + 90
            up = False
            while time.monotonic() < deadline and s.proc.poll() is None:
                if _http_ok(f"{s.uri}/v1/config"):
                    up = True
                    break
                time.sleep(0.1)
            if up:
                break
            bind_failed = "Address already in use" in s.log_tail()
            s._end()
            if not bind_failed:
                break
        else:
            up = False
        if not up:
            log = s.log_tail()
            s.stop()
            pytest.fail(f"RESTCatalogServer did not answer GET /v1/config on 127.0.0.1; log:\n{log}",
                        pytrace=False)
        s.start_seconds = time.monotonic() - t0
        return s


# --------------------------------------------------------------------------
# Fixtures

_SERVER_FIXTURES = ("s3_store", "postgres", "rest_catalog")


@pytest.fixture(scope="session")
def s3_store(tmp_path_factory):
    s = S3Store.start(tmp_path_factory.mktemp("moto"))
    yield s
    s.stop()


@pytest.fixture(scope="session")
def rest_catalog(tmp_path_factory, s3_store):
    s = RestCatalog.start(tmp_path_factory.mktemp("rest-catalog"), s3_store)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def postgres():
    s = Postgres.start()
    yield s
    s.stop()


# --------------------------------------------------------------------------
# The fixture tables through the REST catalog into the store, and the two
# table environments the shared scenarios run in.


class LakehouseWarehouse:
    """fixtures.build_warehouse's tables, written by pyiceberg through the REST
    catalog into the S3 store; the same interface as conftest's local Warehouse."""

    kind = "rest-s3"

    def __init__(self, rest: RestCatalog, built: dict, build_seconds: float):
        self.rest = rest
        self.uri = rest.uri
        self.built = built
        self.build_seconds = build_seconds
        self._catalog = None

    @property
    def catalog_args(self) -> list[str]:
        """`--catalog URI` plus the store's endpoint and addressing as catalog properties. The
        access key and secret are not passed: the REST catalog vends them with each table."""
        args = ["--catalog", self.rest.uri]
        for k, v in self.rest.client_props().items():
            args += ["--catalog-property", f"{k}={v}"]
        return args

    def metadata_args(self, name: str) -> list[str]:
        """`--metadata s3://...` of a table, with every storage property (no catalog to vend keys)."""
        args = ["--metadata", self.table(name).metadata_location]
        for k, v in self.rest.store.props().items():
            args += ["--catalog-property", f"{k}={v}"]
        return args

    def catalog(self):
        if self._catalog is None:
            self._catalog = self.rest.pyiceberg()
        return self._catalog

    def table(self, name: str):
        return self.catalog().load_table(name)


@pytest.fixture(scope="session")
def lakehouse_warehouse(rest_catalog) -> LakehouseWarehouse:
    import fixtures

    t0 = time.monotonic()
    built = fixtures.build_warehouse(rest_catalog.warehouse, catalog=rest_catalog.pyiceberg())
    return LakehouseWarehouse(rest_catalog, built, time.monotonic() - t0)


TABLE_ENVS = ["local", "rest-s3"]


@pytest.fixture(params=TABLE_ENVS)
def table_env(request):
    """The fixture tables in a local warehouse with its SQLite catalog ("local", conftest's
    `warehouse`) or behind the REST catalog in the S3 store ("rest-s3"). Both have
    `.catalog_args` (CLI arguments selecting the catalog), `.metadata_args(name)`, `.built`,
    `.table(name)` (a pyiceberg table, for oracles), `.catalog()` and `.kind`."""
    if request.param == "local":
        return request.getfixturevalue("warehouse")
    return request.getfixturevalue("lakehouse_warehouse")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    funcargs = getattr(item, "funcargs", {}) or {}
    for name in _SERVER_FIXTURES:
        server = funcargs.get(name)
        if isinstance(server, _Server):
            report.sections.append((f"{server.name} log ({server.log})", server.log_tail()))
