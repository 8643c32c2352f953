"""A real Confluent-compatible schema registry for the tests (issue 23).

AxonOps Schema Registry v0.2.1 (Go, Apache-2.0), built by
scripts/deps/install-schema-registry.sh into .deps/schema-registry/, started on
a free loopback port with in-memory storage:

* `schema_registry` (session): an open registry (no authentication).
* `schema_registry_auth` (session): one that requires HTTP basic auth, with the
  bootstrap admin user `SchemaRegistry.user` / `SchemaRegistry.password`
  (its own config file: security.auth with the basic method).

Each records its log in its directory (shown when it does not come up); stop()
ends the process it started and nothing else. A missing binary FAILS the test.
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from lakehouse import BIND_TRIES, REPO, _Server, free_port

SCHEMA_REGISTRY_BIN = REPO / ".deps" / "schema-registry" / "schema-registry"
INSTALL = REPO / "scripts" / "deps" / "install-schema-registry.sh"


def _answers(url: str, auth: tuple[str, str] | None) -> bool:
    """The registry answers GET /schemas/types (with the credentials when it requires them)."""
    req = urllib.request.Request(url + "/schemas/types")
    if auth:
        import base64
        req.add_header("Authorization", "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode())
    try:
        with urllib.request.urlopen(req, timeout=1.0) as r:
            return r.status == 200
    except OSError:
        return False


class SchemaRegistry(_Server):
    name = "AxonOps Schema Registry (schema_registry)"
    user = "thaw-admin"
    password = "thaw-registry-pw-7f3a"

    def __init__(self, dir: Path, auth: bool):
        super().__init__(dir, dir / "schema-registry.log")
        self.port = 0
        self.auth = auth

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client_conf(self) -> dict[str, str]:
        """confluent-kafka SchemaRegistryClient's configuration."""
        conf = {"url": self.url}
        if self.auth:
            conf["basic.auth.user.info"] = f"{self.user}:{self.password}"
        return conf

    def client(self):
        from confluent_kafka.schema_registry import SchemaRegistryClient
        return SchemaRegistryClient(self.client_conf())

    @classmethod
    def start(cls, dir: Path, auth: bool = False) -> "SchemaRegistry":
        if not SCHEMA_REGISTRY_BIN.exists():
            pytest.fail(f"{SCHEMA_REGISTRY_BIN} not found: run {INSTALL} (part of scripts/deps/install.sh --test; "
                        "needs Go >= 1.26)", pytrace=False)
        s = cls(dir, auth)
        argv = [str(SCHEMA_REGISTRY_BIN)]
        env = dict(os.environ, SCHEMA_REGISTRY_HOST="127.0.0.1", SCHEMA_REGISTRY_STORAGE_TYPE="memory",
                   SCHEMA_REGISTRY_LOG_LEVEL="warn")
        if auth:
            config = dir / "auth.yaml"
            config.write_text("security:\n  auth:\n    enabled: true\n    methods: [basic]\n"
                              f"    bootstrap:\n      enabled: true\n      username: {cls.user}\n")
            argv += ["-config", str(config)]
            env["SCHEMA_REGISTRY_BOOTSTRAP_PASSWORD"] = cls.password
        t0 = time.monotonic()
        for _ in range(BIND_TRIES):
            s.port = free_port()
            env["SCHEMA_REGISTRY_PORT"] = str(s.port)
            s.proc = s._spawn(argv, env=env, cwd=dir)
            deadline = time.monotonic() + 20
            up = False
            while time.monotonic() < deadline and s.proc.poll() is None:
                if _answers(s.url, (cls.user, cls.password) if auth else None):
                    up = True
                    break
                time.sleep(0.05)
            if up:
                break
            s._end()  # exited (port taken?) or never answered: try another port
        else:
            log = s.log_tail()
            s.stop()
            pytest.fail(f"the schema registry did not come up on 127.0.0.1 after {BIND_TRIES} tries; log:\n{log}",
                        pytrace=False)
        s.start_seconds = time.monotonic() - t0
        return s


@pytest.fixture(scope="session")
def schema_registry(tmp_path_factory):
    s = SchemaRegistry.start(tmp_path_factory.mktemp("schema-registry"))
    yield s
    s.stop()


@pytest.fixture(scope="session")
def schema_registry_auth(tmp_path_factory):
    s = SchemaRegistry.start(tmp_path_factory.mktemp("schema-registry-auth"), auth=True)
    yield s
    s.stop()
