"""Certificates for the TLS tests, made with the openssl CLI: a CA
(ca.pem, ca.key), a server certificate for 127.0.0.1 and localhost
(server.pem, server.key; CN thaw-server-1), a renewed one (renewed.pem,
renewed.key; CN thaw-server-2) and a client certificate (client.pem,
client.key), all signed by the CA.

    def test_x(certs): certs / "ca.pem" ...
    make_certs(dir)   # the same, for fixtures of a wider scope
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def _openssl(*args: str, cwd: Path) -> None:
    p = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, f"openssl {' '.join(args)}: {p.stderr}"


def _signed(cwd: Path, name: str, cn: str, ext: str) -> None:
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
             "-subj", f"/CN={cn}", cwd=cwd)
    (cwd / f"{name}.ext").write_text(ext)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", f"{name}.pem", "-days", "2", "-sha256", "-extfile", f"{name}.ext", cwd=cwd)


def make_certs(d: Path) -> Path:
    """Writes the certificates into (new) directory d; returns d."""
    d.mkdir(parents=True)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
             "-days", "2", "-subj", "/CN=thaw-test-ca", cwd=d)
    server_ext = "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
    _signed(d, "server", "thaw-server-1", server_ext)
    _signed(d, "renewed", "thaw-server-2", server_ext)
    _signed(d, "client", "thaw-client", "extendedKeyUsage=clientAuth\n")
    return d


@pytest.fixture
def certs(tmp_path) -> Path:
    return make_certs(tmp_path / "certs")
