"""`thaw serve --tls-cert/--tls-key [--tls-client-ca]` (issue 22): TLS on
the listener, as Kafka's SSL listeners speak it, read by the clients users
run (kcat, confluent-kafka, the Java console consumer), with certificates
made by the openssl CLI: a CA, a server certificate for 127.0.0.1 and
localhost, a client certificate, and a renewed server certificate.
"""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest

import fixtures
from tls_certs import certs  # noqa: F401  (fixture)
from serve_harness import CONSOLE_CONSUMER, Topic, confluent_cmd, java_tool, kcat_cmd, thaw_serve  # noqa: F401

TABLE = "ns.tls"
COUNT = 40


def make_table(wh: str) -> None:
    fixtures.value_table(wh, TABLE, COUNT)


def _run(cmd: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def _offsets(stdout: str) -> list[int]:
    import json
    return sorted(json.loads(x)["offset"] for x in stdout.splitlines() if x.strip())


def _peer_cn(port: int, ca: Path, client: tuple[Path, Path] | None = None,
             version: ssl.TLSVersion | None = None) -> str:
    ctx = ssl.create_default_context(cafile=str(ca))
    if version is not None:
        ctx.minimum_version = ctx.maximum_version = version
    if client:
        ctx.load_cert_chain(str(client[0]), str(client[1]))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            subject = dict(x[0] for x in s.getpeercert()["subject"])
            # A Kafka request on the TLS stream: ApiVersions v0 gets its answer.
            s.sendall(bytes.fromhex("0000000a" "0012" "0000" "00000007" "0000"))
            head = s.recv(8)
            assert len(head) == 8 and head[4:8] == bytes.fromhex("00000007"), head
            return subject["commonName"]


def test_tls_listener_serves_kcat_confluent_and_java(thaw_serve, tmp_path, certs):
    wh = str(tmp_path / "wh")
    make_table(wh)
    ssl_props = ["security.protocol=ssl", f"ssl.ca.location={certs / 'ca.pem'}"]
    with thaw_serve(fixtures.catalog_uri(wh), [Topic("tls", TABLE, "thaw")],
                    extra=["--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key")]) \
            as (bootstrap, proc):
        port = int(bootstrap.rsplit(":", 1)[1])
        x = [a for p in ssl_props for a in ("-X", p)]
        p = _run(kcat_cmd("-b", bootstrap, "-t", "tls", "--start", "beginning", *x))
        assert p.returncode == 0, p.stderr
        assert _offsets(p.stdout) == list(range(COUNT))
        p = _run(confluent_cmd("-b", bootstrap, "-t", "tls", *x))
        assert p.returncode == 0, p.stderr
        assert _offsets(p.stdout) == list(range(COUNT))
        # The Java client with a PEM truststore, as kafka-console-consumer.sh takes it.
        cfg = tmp_path / "java-ssl.properties"
        cfg.write_text(f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={certs / 'ca.pem'}\n")
        p = _run(java_tool(CONSOLE_CONSUMER, "--bootstrap-server", bootstrap,
                           "--topic", "tls", "--from-beginning", "--max-messages", str(COUNT), "--timeout-ms", "60000",
                           "--consumer.config", str(cfg)), timeout=180)
        assert p.returncode == 0, p.stderr[-3000:]
        assert p.stdout.splitlines() == [f"value {o}" for o in range(COUNT)]
        # TLS 1.2 and 1.3 are spoken; 1.1 is refused.
        assert _peer_cn(port, certs / "ca.pem", version=ssl.TLSVersion.TLSv1_2) == "thaw-server-1"
        assert _peer_cn(port, certs / "ca.pem", version=ssl.TLSVersion.TLSv1_3) == "thaw-server-1"
        with pytest.raises((ssl.SSLError, ConnectionError)):
            old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            old.check_hostname = False
            old.verify_mode = ssl.CERT_NONE
            old.minimum_version = old.maximum_version = ssl.TLSVersion.TLSv1_1
            old.set_ciphers("ALL:@SECLEVEL=0")
            with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
                with old.wrap_socket(raw):
                    pass
        # A plaintext Kafka client on the TLS port: its connection is closed, logged once.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(bytes.fromhex("0000000a" "0012" "0000" "00000007" "0000"))
            raw.settimeout(10)
            try:
                data = raw.recv(100)
            except ConnectionError:
                data = b""
            assert len(data) < 8 or data[4:8] != bytes.fromhex("00000007"), data  # no Kafka answer
        # A renewed certificate on disk: new connections get it, no restart.
        os.replace(certs / "renewed.key", certs / "server.key.new")
        (certs / "server.pem").write_bytes((certs / "renewed.pem").read_bytes())
        os.replace(certs / "server.key.new", certs / "server.key")
        deadline = time.monotonic() + 15
        while _peer_cn(port, certs / "ca.pem") != "thaw-server-2":
            assert time.monotonic() < deadline, "the renewed certificate was not picked up"
            time.sleep(0.3)
        assert proc.poll() is None
    log = (tmp_path / "serve0" / "serve-1.stderr").read_text()
    assert "TLS handshake failed" in log, log[-3000:]
    assert "loaded the renewed certificate" in log, log[-3000:]


def test_mutual_tls_requires_a_client_certificate_of_the_ca(thaw_serve, tmp_path, certs):
    wh = str(tmp_path / "wh")
    make_table(wh)
    with thaw_serve(fixtures.catalog_uri(wh), [Topic("tls", TABLE, "thaw")],
                    extra=["--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key"),
                           "--tls-client-ca", str(certs / "ca.pem")]) as (bootstrap, _proc):
        port = int(bootstrap.rsplit(":", 1)[1])
        with pytest.raises((ssl.SSLError, ConnectionError, AssertionError)):
            _peer_cn(port, certs / "ca.pem")  # no client certificate
        assert _peer_cn(port, certs / "ca.pem", client=(certs / "client.pem", certs / "client.key")) == \
            "thaw-server-1"
        x = ["-X", "security.protocol=ssl", "-X", f"ssl.ca.location={certs / 'ca.pem'}",
             "-X", f"ssl.certificate.location={certs / 'client.pem'}", "-X", f"ssl.key.location={certs / 'client.key'}"]
        p = _run(kcat_cmd("-b", bootstrap, "-t", "tls", "--start", "beginning", *x))
        assert p.returncode == 0, p.stderr
        assert _offsets(p.stdout) == list(range(COUNT))
    log = (tmp_path / "serve0" / "serve-1.stderr").read_text()
    assert "TLS handshake failed" in log and "certificate" in log, log[-3000:]


def test_bad_tls_files_are_refused_before_listening(thaw, tmp_path, certs):
    wh = str(tmp_path / "wh")
    make_table(wh)
    base = ["serve", "--catalog", fixtures.catalog_uri(wh), "--topic", f"tls={TABLE}", "--listen", "127.0.0.1:0",
            "--state", str(tmp_path / "state")]
    cases = [
        (["--tls-cert", str(certs / "server.pem")], "TLS needs both --tls-cert and --tls-key"),
        (["--tls-cert", str(certs / "nope.pem"), "--tls-key", str(certs / "server.key")],
         f"--tls-cert {certs / 'nope.pem'}: not a readable PEM certificate chain"),
        (["--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "client.key")],
         "is not the key of --tls-cert"),
        (["--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key"),
          "--tls-client-ca", str(certs / "server.csr")], "not a readable PEM CA file"),
    ]
    for extra, message in cases:
        p = thaw(*base, *extra, timeout=60)
        err = p.stderr.decode(errors="replace")
        assert p.returncode == 2, (extra, p.returncode, err)
        assert message in err, (extra, err)
