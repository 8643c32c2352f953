"""Harness for the `thaw serve` client tests (test_serve_clients.py,
test_serve_bad_clients.py): starting Thaw's Kafka server, the real-broker
switch, running the client drivers of tests/clients/ and comparing what they
print with the table, offset for offset.

Fixtures (loaded by conftest.py through pytest_plugins):

* ``thaw_serve``: a factory; ``with thaw_serve(catalog_uri, topics, **options)
  as (bootstrap, proc):`` starts

      $THAW_BIN serve --catalog URI --config DIR/serve.toml --listen 127.0.0.1:PORT
                      --state DIR [--refresh S] [extra args]

  on a free port (the topics go into the TOML config as ``[[topic]] name,
  table, layout, compression``; ``topic_args=True`` passes them as
  ``--topic NAME=NS.TABLE`` instead), waits until the port accepts
  connections, yields ("127.0.0.1:PORT", Popen) and stops it with SIGTERM,
  asserting exit status 0 within 30 s. Its stderr goes to a file that the
  failure messages quote (``ThawServer.stderr()``).

* ``serve_target``: the same tables behind whichever server
  $THAW_SERVE_TARGET names:

    - ``thaw`` (default): ``thaw serve`` as above; topics keep the table's
      partitions and offsets.
    - ``kafka``: the session's real Kafka broker (kafka_broker.py); each
      table is replayed into a new topic with ``thaw replay`` (same
      partitions, the topic's ``compression.type`` set to the topic's
      compression). Replay assigns new offsets (0, 1, ... per partition) and
      adds the ``thaw.source.*`` link headers; the comparison takes the table
      offset from ``thaw.source.offset`` and drops the link headers, and
      offsets a test asks for are translated by position (``wire_offset``).
      Replay sends LogAppendTime records as CreateTime (docs/replay.md), so
      in this mode every expected record is CreateTime.

  This mode exists to validate the tests and drivers against the reference
  implementation: a test that passes against the broker and fails against
  `thaw serve` points at Thaw.

``Served.check(name, lines, ...)`` is the oracle: the records the client
printed (JSON lines of tests/clients/jsonl.py) against oracle.expected_records
of the table's current snapshot, every field of every record.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

import fixtures
import oracle

REPO = Path(__file__).resolve().parents[2]
CLIENTS = REPO / "tests" / "clients"
DEPS = REPO / ".deps"
PY = os.environ.get("THAW_PYTHON_CLIENTS") or str(DEPS / "venv" / "bin" / "python")
TARGET = os.environ.get("THAW_SERVE_TARGET", "thaw")
LINK_PREFIX = "thaw.source."


@dataclass
class Topic:
    name: str                      # the topic name clients ask for
    table: str                     # NS.TABLE
    layout: str                    # oracle layout key (oracle.LAYOUT_COLUMNS)
    compression: str = "none"      # none | gzip | snappy | lz4 | zstd
    serve_layout: str | None = None  # `layout =` in the serve config (None: auto)
    source_topic: str | None = None  # `source_topic =`: one topic of a table holding several


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen | None, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode} before accepting connections")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} does not accept connections on 127.0.0.1:{port} after {timeout} s")
        time.sleep(0.05)


def toml_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid TOML basic string for these names


class ThawServer:
    """One `thaw serve` process; restart() keeps its port and state dir."""

    def __init__(self, thaw_bin: Path, catalog_uri: str, topics: list[Topic], workdir: Path,
                 refresh: str | None = "1s", topic_args: bool = False, extra: list[str] | None = None,
                 catalog_args: list[str] | None = None):
        self.thaw_bin, self.catalog_uri, self.topics = thaw_bin, catalog_uri, topics
        # How serve selects its catalog: `--catalog URI` unless given (e.g. a REST catalog's
        # `--catalog http://... --catalog-property ...`).
        self.catalog_args = list(catalog_args) if catalog_args is not None else ["--catalog", catalog_uri]
        self.workdir = workdir
        self.state = workdir / "state"
        self.state.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.refresh, self.topic_args, self.extra = refresh, topic_args, list(extra or [])
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.stderr_path: Path | None = None

    def args(self) -> list[str]:
        a = [str(self.thaw_bin), "serve", *self.catalog_args]
        if self.topic_args:
            for t in self.topics:
                a += ["--topic", f"{t.name}={t.table}" + (f":source_topic={t.source_topic}" if t.source_topic else "")]
        else:
            cfg = self.workdir / "serve.toml"
            lines = []
            for t in self.topics:
                lines += ["[[topic]]", f"name = {toml_str(t.name)}", f"table = {toml_str(t.table)}",
                          f"compression = {toml_str(t.compression)}"]
                if t.serve_layout:
                    lines.append(f"layout = {toml_str(t.serve_layout)}")
                if t.source_topic:
                    lines.append(f"source-topic = {toml_str(t.source_topic)}")
                lines.append("")
            cfg.write_text("\n".join(lines))
            a += ["--config", str(cfg)]
        a += ["--listen", self.bootstrap, "--state", str(self.state)]
        if self.refresh:
            a += ["--refresh", self.refresh]
        return a + self.extra

    def start(self, timeout: float = 60.0) -> None:
        self.starts += 1
        self.stderr_path = self.workdir / f"serve-{self.starts}.stderr"
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(self.args(), stdout=subprocess.DEVNULL, stderr=err,
                                         stdin=subprocess.DEVNULL)
        try:
            wait_port(self.port, self.proc, timeout, f"`{' '.join(self.args())}`")
            problem = None
        except (RuntimeError, TimeoutError) as e:
            problem = str(e)
        if problem is not None:
            self.kill()
            pytest.fail(f"{problem}\nstderr:\n{self.stderr()}", pytrace=False)

    def stderr(self, limit: int = 6000) -> str:
        if self.stderr_path is None or not self.stderr_path.exists():
            return ""
        return self.stderr_path.read_text(errors="replace")[-limit:]

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 30.0) -> str:
        """SIGTERM; asserts exit status 0; returns stderr."""
        if self.proc is None:
            return ""
        p, self.proc = self.proc, None
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                pytest.fail(f"thaw serve did not exit within {timeout} s of SIGTERM\nstderr:\n{self.stderr()}",
                            pytrace=False)
        assert p.returncode == 128 + signal.SIGTERM, f"thaw serve exited {p.returncode} (after SIGTERM)\nstderr:\n{self.stderr()}"
        return self.stderr()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture
def thaw_serve(thaw_bin, tmp_path):
    servers: list[ThawServer] = []

    @contextlib.contextmanager
    def start(catalog_uri: str, topics: list[Topic], **options):
        s = ThawServer(thaw_bin, catalog_uri, topics, tmp_path / f"serve{len(servers)}", **options)
        servers.append(s)
        s.start()
        try:
            yield s.bootstrap, s.proc
        finally:
            if s.proc is not None:
                s.stop()

    try:
        yield start
    finally:
        for s in servers:
            s.kill()


# ---------------------------------------------------------------------------
# Either target


def _b64d(s: str | None) -> bytes | None:
    return None if s is None else base64.b64decode(s)


class Served:
    """Tables served as topics by the target; see the module doc."""

    def __init__(self, mode: str, bootstrap: str, catalog_uri: str, warehouse_dir: str | None, topics: list[Topic],
                 server: ThawServer | None = None, broker=None, thaw=None, env=None):
        self.mode, self.bootstrap, self.catalog_uri = mode, bootstrap, catalog_uri
        self.warehouse_dir = warehouse_dir
        # A table environment (lakehouse.py's table_env: local or REST + S3), or None for a
        # local warehouse directory.
        self.env = env
        self.catalog_args = env.catalog_args if env is not None else ["--catalog", catalog_uri]
        self.topics = {t.name: t for t in topics}
        self.server, self.broker, self.thaw = server, broker, thaw
        self.wire: dict[str, str] = {t.name: t.name for t in topics}
        self.replayed: dict[str, dict[int, int]] = {}   # kafka mode: records per partition sent

    # -- tables -----------------------------------------------------------
    def table(self, name: str):
        if self.env is not None:
            return self.env.table(self.topics[name].table)
        return fixtures.open_catalog(self.warehouse_dir).load_table(self.topics[name].table)

    def records(self, name: str) -> list[dict]:
        return oracle.expected_records(self.table(name), self.topics[name].layout)

    def partition_count(self, name: str) -> int:
        return max((r["partition"] for r in self.records(name)), default=0) + 1

    def topic(self, name: str) -> str:
        """The topic name on the wire."""
        return self.wire[name]

    def wire_offset(self, name: str, partition: int, table_offset: int) -> int:
        """The offset clients must ask for to start at `table_offset`."""
        if self.mode == "thaw":
            return table_offset
        offs = [r["offset"] for r in self.records(name) if r["partition"] == partition]
        return sum(1 for o in offs if o < table_offset)

    # -- kafka mode ------------------------------------------------------------
    def _replay(self, name: str, partition: int | None = None, from_offset: int | None = None) -> None:
        t = self.topics[name]
        args = ["replay", *self.catalog_args, "--table", t.table, "--brokers", self.bootstrap,
                "--topic", self.wire[name], "--quiet"]
        if partition is not None:
            args += ["--partitions", str(partition), "--from-offset", str(from_offset)]
        if t.serve_layout:
            args += ["--layout", t.serve_layout]
        self.thaw.ok(*args)

    def _setup_kafka(self) -> None:
        for name, t in self.topics.items():
            wire = f"{name}-{uuid.uuid4().hex[:8]}"
            self.wire[name] = wire
            cfg = {"compression.type": "producer" if t.compression == "none" else t.compression,
                   "max.message.bytes": 10 * 1024 * 1024}
            self.broker.create_topic(wire, self.partition_count(name), config=cfg)
            self._replay(name)
            self.replayed[name] = self._counts(name)

    def _counts(self, name: str) -> dict[int, int]:
        out: dict[int, int] = {}
        for r in self.records(name):
            out[r["partition"]] = out.get(r["partition"], 0) + 1
        return out

    def sync(self, name: str) -> None:
        """After the table got new records: make them visible. thaw: nothing
        (serve refreshes by itself; the test waits). kafka: replay the new
        records of each partition."""
        if self.mode == "thaw":
            return
        by_p: dict[int, list[int]] = {}
        for r in self.records(name):
            by_p.setdefault(r["partition"], []).append(r["offset"])
        for p, offs in sorted(by_p.items()):
            sent = self.replayed[name].get(p, 0)
            if len(offs) > sent:
                self._replay(name, p, offs[sent])
        self.replayed[name] = self._counts(name)

    def restart(self) -> None:
        """Restart the server (thaw: SIGTERM, exit 0 asserted, start again on
        the same port and state dir); kafka: nothing."""
        if self.server is not None:
            self.server.restart()

    def alive(self) -> bool:
        return self.server is None or self.server.alive()

    def stderr(self) -> str:
        return self.server.stderr() if self.server is not None else ""

    # -- running clients ----------------------------------------------------------
    def run(self, cmd: list[str], timeout: float = 120, env: dict | None = None, ok: bool = True,
            ) -> subprocess.CompletedProcess:
        e = dict(os.environ)
        e["NODE_PATH"] = str(DEPS / "node" / "node_modules")
        e.update(env or {})
        try:
            p = subprocess.run(cmd, capture_output=True, timeout=timeout, env=e, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as ex:
            pytest.fail(f"client timed out after {timeout} s: {' '.join(cmd)}\nstderr:\n"
                        f"{(ex.stderr or b'').decode(errors='replace')[-3000:]}\nserver stderr:\n{self.stderr()}",
                        pytrace=False)
        if ok and p.returncode != 0:
            pytest.fail(f"client exited {p.returncode}: {' '.join(cmd)}\nstderr:\n"
                        f"{p.stderr.decode(errors='replace')[-4000:]}\nserver stderr:\n{self.stderr()}",
                        pytrace=False)
        return p

    # -- oracle -------------------------------------------------------------------
    def expected(self, name: str, start: str = "beginning", partitions: list[int] | None = None) -> list[dict]:
        """Oracle records a client reading from `start` must get:
        "beginning", "offset:N" (table offset, each partition), "time:MS"
        (each partition from its first record, in offset order, with
        timestamp >= MS, as ListOffsets by timestamp answers)."""
        recs = self.records(name)
        if self.mode == "kafka":
            recs = [dict(r, timestamp_type="CreateTime") for r in recs]
        if partitions is not None:
            recs = [r for r in recs if r["partition"] in partitions]
        if start == "beginning":
            return recs
        kind, arg = start.split(":", 1)
        n = int(arg)
        out = []
        by_p: dict[int, list[dict]] = {}
        for r in recs:
            by_p.setdefault(r["partition"], []).append(r)
        for p, rs in sorted(by_p.items()):
            if kind == "offset":
                out += [r for r in rs if r["offset"] >= n]
            elif kind == "time":
                i = next((i for i, r in enumerate(rs) if r["timestamp"] is not None and r["timestamp"] >= n), None)
                out += [] if i is None else rs[i:]
            else:
                raise ValueError(start)
        return out

    def parse(self, stdout: bytes | str) -> list[dict]:
        text = stdout.decode() if isinstance(stdout, bytes) else stdout
        return [json.loads(line) for line in text.splitlines() if line.strip().startswith("{\"topic\"")]

    def normalize(self, name: str, line: dict) -> tuple[tuple[int, int], dict]:
        """A driver's line -> ((partition, table offset), record in the oracle's form)."""
        assert line["topic"] == self.wire[name], line
        grouped = "headers_grouped" in line
        if grouped:
            hs = [(k, _b64d(v)) for k, vs in line["headers_grouped"] for v in vs]
        else:
            hs = [(k, _b64d(v)) for k, v in line["headers"]]
        offset = line["offset"]
        if self.mode == "kafka":
            link = {k: v for k, v in hs if k.startswith(LINK_PREFIX)}
            assert int(link[LINK_PREFIX + "partition"]) == line["partition"], line
            offset = int(link[LINK_PREFIX + "offset"])
            hs = [(k, v) for k, v in hs if not k.startswith(LINK_PREFIX)]
        value = _b64d(line["value"])
        if self.topics[name].layout in oracle.JSON_VALUE_LAYOUTS and value is not None:
            value = json.loads(value)
        rec = {"partition": line["partition"], "offset": offset, "timestamp": line["timestamp"],
               "timestamp_type": line["timestamp_type"], "key": _b64d(line["key"]), "value": value,
               "headers": hs, "grouped": grouped, "wire_offset": line["offset"]}
        return (line["partition"], offset), rec

    def check(self, name: str, lines: list[dict], start: str = "beginning", partitions: list[int] | None = None,
              duplicates_ok: bool = False, client: str = "") -> dict:
        """Asserts the client got exactly the expected records, each equal in
        every field (headers in order; for kafkajs grouped by key). Returns
        {(partition, table offset): record}."""
        exp = {(r["partition"], r["offset"]): r for r in self.expected(name, start, partitions)}
        got: dict[tuple[int, int], dict] = {}
        problems: list[str] = []
        for line in lines:
            k, rec = self.normalize(name, line)
            if k in got:
                if not duplicates_ok:
                    problems.append(f"record {k} delivered twice")
                elif _cmp(got[k], rec):
                    problems.append(f"record {k} delivered twice with different contents: {_cmp(got[k], rec)}")
                continue
            got[k] = rec
        missing = sorted(set(exp) - set(got))
        extra = sorted(set(got) - set(exp))
        if missing:
            problems.append(f"{len(missing)} records missing, first {missing[:8]}")
        if extra:
            problems.append(f"{len(extra)} records not expected, first {extra[:8]}")
        for k in sorted(set(exp) & set(got)):
            d = _diff(exp[k], got[k])
            if d:
                problems.append(f"record {k}: {d}")
        if self.mode == "thaw":
            for k, rec in got.items():
                if rec["wire_offset"] != k[1]:
                    problems.append(f"record {k} served at offset {rec['wire_offset']}")
        # per partition, the order a single reader saw must be ascending
        if not duplicates_ok:
            last: dict[int, int] = {}
            for line in lines:
                p = line["partition"]
                if p in last and line["offset"] <= last[p]:
                    problems.append(f"partition {p}: offset {line['offset']} after {last[p]}")
                last[p] = line["offset"]
        if problems:
            raise AssertionError(
                f"{client or 'client'} on topic {name} ({self.mode} target, start {start}): "
                f"{len(got)} records read, {len(exp)} expected\n  " + "\n  ".join(problems[:25])
                + (f"\n  ... {len(problems) - 25} more" if len(problems) > 25 else "")
                + (f"\nserver stderr:\n{self.stderr()}" if self.server else ""))
        return got


def _grouped(headers):
    out: dict[str, list] = {}
    for k, v in headers:
        out.setdefault(k, []).append(v)
    return list(out.items())


def _diff(exp: dict, got: dict) -> str:
    out = []
    for f in ("timestamp", "key", "value"):
        if exp[f] != got[f]:
            out.append(f"{f} {_short(got[f])} != expected {_short(exp[f])}")
    if got["timestamp_type"] is not None and exp["timestamp_type"] != got["timestamp_type"]:
        out.append(f"timestamp_type {got['timestamp_type']} != expected {exp['timestamp_type']}")
    eh = [(k, v) for k, v in exp["headers"]]
    if got["grouped"]:
        if _grouped(eh) != _grouped(got["headers"]):
            out.append(f"headers (grouped by key) {_grouped(got['headers'])} != expected {_grouped(eh)}")
    elif eh != got["headers"]:
        out.append(f"headers {got['headers']} != expected {eh}")
    return "; ".join(out)


def _cmp(a: dict, b: dict) -> str:
    return _diff(dict(a, headers=a["headers"]), b)


def _short(v):
    s = repr(v)
    return s if len(s) < 80 else s[:60] + f"...({len(s)} chars)"


@pytest.fixture(scope="session")
def _serve_broker(request):
    """The real broker, started only in kafka mode."""
    if TARGET == "kafka":
        return request.getfixturevalue("kafka")
    if TARGET != "thaw":
        pytest.fail(f"THAW_SERVE_TARGET={TARGET!r}: must be 'thaw' or 'kafka'", pytrace=False)
    return None


@contextlib.contextmanager
def open_served(thaw_bin, thaw, workdir: Path, broker, warehouse, topics: list[Topic], **options):
    """Served tables on the $THAW_SERVE_TARGET target (options go to
    ThawServer: refresh, topic_args, extra). `warehouse`: a local warehouse
    directory, or a table environment (lakehouse.py's `table_env` kinds: its
    `catalog_args` select the catalog, `table(name)` is the oracle's table)."""
    if isinstance(warehouse, (str, Path)):
        warehouse_dir, env = str(warehouse), None
        uri = fixtures.catalog_uri(warehouse_dir)
    else:
        warehouse_dir, env = None, warehouse
        uri = env.uri
        options = dict(options, catalog_args=env.catalog_args)
    if TARGET == "kafka":
        s = Served("kafka", broker.bootstrap, uri, warehouse_dir, topics, broker=broker, thaw=thaw, env=env)
        s._setup_kafka()
        yield s
        return
    srv = ThawServer(thaw_bin, uri, topics, workdir, **options)
    try:
        srv.start()
        yield Served("thaw", srv.bootstrap, uri, warehouse_dir, topics, server=srv, thaw=thaw, env=env)
        if srv.proc is not None:
            srv.stop()
    finally:
        srv.kill()


@pytest.fixture
def serve_target(thaw_bin, thaw, tmp_path, _serve_broker):
    """Factory: ``with serve_target(warehouse_dir, topics, **options) as served:``."""
    n = [0]

    def start(warehouse_dir: str, topics: list[Topic], **options):
        n[0] += 1
        return open_served(thaw_bin, thaw, tmp_path / f"serve{n[0]}", _serve_broker, warehouse_dir, topics,
                           **options)

    return start


# ---------------------------------------------------------------------------
# Driver command lines


_java_classes: list[str] = []


def java_cmd(*args: str) -> list[str]:
    """JavaConsume, compiled once per test session (javac; the driver also runs
    as `java -cp '.deps/kafka/lib/*' tests/clients/JavaConsume.java`, which
    compiles it again on every start)."""
    lib = str(DEPS / "kafka" / "lib" / "*")
    if not _java_classes:
        import tempfile
        d = tempfile.mkdtemp(prefix="thaw-java-consume-")
        p = subprocess.run(["javac", "-cp", lib, "-d", d, str(CLIENTS / "JavaConsume.java")], capture_output=True,
                           text=True, timeout=180)
        if p.returncode != 0:
            pytest.fail(f"javac tests/clients/JavaConsume.java failed:\n{p.stderr}", pytrace=False)
        _java_classes.append(d)
    return ["java", "-cp", f"{_java_classes[0]}:{lib}", "JavaConsume", *args]


def java_tool(main_class: str, *args: str) -> list[str]:
    return ["java", "-Dlog4j2.level=error", "-cp", str(DEPS / "kafka" / "lib" / "*"), main_class, *args]


CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


def kcat_cmd(*args: str) -> list[str]:
    return [PY, str(CLIENTS / "kcat_consume.py"), *args]


def confluent_cmd(*args: str) -> list[str]:
    return [PY, str(CLIENTS / "confluent_consume.py"), *args]


def kafka_python_cmd(*args: str) -> list[str]:
    return [PY, str(CLIENTS / "kafka_python_consume.py"), *args]


def kafkajs_cmd(*args: str) -> list[str]:
    return ["node", str(CLIENTS / "kafkajs_consume.js"), *args]
