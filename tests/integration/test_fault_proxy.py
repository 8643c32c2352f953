"""Tests of the fault-injecting proxy itself (tests/integration/fault_proxy.py).

The upstream is a real HTTP/1.1 server (a small recording server from the stdlib below) and, for SigV4, moto's
S3 server with IAM auth switched on (so it verifies signatures) driven by pyarrow's S3 client (the AWS SDK
for C++, as Thaw uses it).
"""

from __future__ import annotations

import base64
import http.client
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from fault_proxy import FaultProxy


class _Recorder(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list = None

    def log_message(self, *a):
        pass

    def _any(self):
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te:
            raw = bytearray()
            while True:
                line = self.rfile.readline()
                raw += line
                n = int(line.split(b";")[0], 16)
                if n == 0:
                    raw += self.rfile.readline()
                    break
                raw += self.rfile.read(n + 2)
            body = bytes(raw)
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append({"method": self.command, "path": self.path, "headers": list(self.headers.items()),
                          "body": body})
        if self.path.startswith("/chunked"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("X-Up", "1")
            self.end_headers()
            for part in (b"hello ", b"chunked ", b"world"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        payload = b"x" * 100_000 if self.path.startswith("/big") else f"{self.command} {self.path}".encode()
        self.send_response(201 if self.command == "PUT" else 200, "Fine")
        self.send_header("Content-Type", "text/plain")
        self.send_header("X-Up", "1")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _any


@pytest.fixture
def upstream():
    seen = []

    class H(_Recorder):
        pass

    H.seen = seen
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    srv.seen = seen
    srv.url = f"http://127.0.0.1:{srv.server_address[1]}"
    yield srv
    srv.shutdown()
    srv.server_close()


def _request(proxy, method, path, body=None, headers=()):
    c = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
    c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for k, v in headers:
        c.putheader(k, v)
    if body is not None and not any(k.lower() == "transfer-encoding" for k, _ in headers):
        c.putheader("Content-Length", str(len(body)))
    c.endheaders()
    if body:
        c.send(body)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r, data


def test_forwards_requests_and_responses_unchanged(upstream):
    with FaultProxy(upstream.url) as p:
        hdrs = [("Host", "bucket.example:1234"), ("X-Amz-Date", "20260101T000000Z"),
                ("authorization", "AWS4-HMAC-SHA256 Credential=k/x, Signature=ab"),
                ("X-Amz-Content-Sha256", "UNSIGNED")]
        r, data = _request(p, "PUT", "/warehouse/a%20b/key?partNumber=2&uploadId=x", b"\x00\x01body", hdrs)
        assert (r.status, r.reason, data) == (201, "Fine", b"PUT /warehouse/a%20b/key?partNumber=2&uploadId=x")
        assert r.getheader("X-Up") == "1"
        got = upstream.seen[-1]
        assert got["path"] == "/warehouse/a%20b/key?partNumber=2&uploadId=x"
        assert got["body"] == b"\x00\x01body"
        # Every header as the client sent it, in order (Host included), nothing added but the framing.
        assert got["headers"][:4] == hdrs

        # A chunked request body keeps its framing; a chunked response comes back with Content-Length.
        framed = b"4\r\nabcd\r\n3\r\nefg\r\n0\r\n\r\n"
        r, data = _request(p, "POST", "/chunked", framed, [("Host", "h"), ("Transfer-Encoding", "chunked")])
        assert data == b"hello chunked world"
        assert r.getheader("Content-Length") == str(len(data))
        assert upstream.seen[-1]["body"] == framed

        # HEAD keeps the upstream's Content-Length; big bodies stream through intact.
        r, data = _request(p, "HEAD", "/big", headers=[("Host", "h")])
        assert (r.status, data, r.getheader("Content-Length")) == (200, b"", "100000")
        r, data = _request(p, "GET", "/big?x=1", headers=[("Host", "h")])
        assert data == b"x" * 100_000

        s = p.stats()
        assert s["requests"] == 4
        assert s["by_path"] == {"PUT /warehouse/a%20b/key": 1, "POST /chunked": 1, "HEAD /big": 1, "GET /big": 1}
        assert s["by_method"] == {"PUT": 1, "POST": 1, "HEAD": 1, "GET": 1}
        assert s["faults_total"] == 0
        assert s["by_status"] == {201: 1, 200: 3}
        assert p.requests_matching("/big") == 2 and p.requests_matching("/big", "GET") == 1


def _fault_sequence(url, seed, n):
    out = []
    with FaultProxy(url, fault_rate=0.3, faults=("503", "slowdown", "429"), seed=seed) as p:
        for i in range(n):
            r, _ = _request(p, "GET", f"/o{i}", headers=[("Host", "h")])
            out.append(r.status)
        return out, p.stats()


def test_fault_share_is_seeded_and_reproducible(upstream):
    a, sa = _fault_sequence(upstream.url, 11, 300)
    b, _ = _fault_sequence(upstream.url, 11, 300)
    c, _ = _fault_sequence(upstream.url, 12, 300)
    assert a == b and a != c
    failed = sum(1 for s in a if s != 200)
    assert failed == sa["faults_total"]
    assert 60 <= failed <= 120, failed  # 30 % of 300, give or take
    assert set(sa["faults"]) == {"503", "slowdown", "429"}
    # Injected errors never reach the upstream.
    assert len(upstream.seen) == 3 * 300 - 2 * failed - sum(1 for s in c if s != 200)


def test_error_bodies_for_store_and_catalog(upstream):
    with FaultProxy(upstream.url, fault_rate=1.0, faults=("503",)) as p:
        r, data = _request(p, "GET", "/warehouse/data/f.parquet", headers=[("Host", "h")])
        assert r.status == 503 and r.getheader("Content-Type") == "application/xml"
        assert b"<Code>ServiceUnavailable</Code>" in data and b"/warehouse/data/f.parquet" in data
        r, data = _request(p, "GET", "/v1/namespaces", headers=[("Host", "h")])
        assert r.status == 503
        assert json.loads(data)["error"]["code"] == 503
        assert json.loads(data)["error"]["type"] == "ServiceUnavailableException"
        r, data = _request(p, "HEAD", "/warehouse/x", headers=[("Host", "h")])
        assert (r.status, data) == (503, b"")
        p.faults = ("slowdown",)
        r, data = _request(p, "GET", "/warehouse/x", headers=[("Host", "h")])
        assert r.status == 503 and b"<Code>SlowDown</Code>" in data
        r, data = _request(p, "POST", "/v1/namespaces/n/tables/t", b"{}", [("Host", "h")])
        assert r.status == 429 and json.loads(data)["error"]["code"] == 429
        p.faults = ("429",)
        r, data = _request(p, "GET", "/warehouse/x", headers=[("Host", "h")])
        assert r.status == 429 and b"<Code>TooManyRequests</Code>" in data
        assert upstream.seen == []
        assert p.stats()["faults"] == {"503": 3, "slowdown": 2, "429": 1}
        assert p.stats()["by_status"] == {503: 4, 429: 2}


def test_reset_cuts_the_response_after_the_upstream_acted(upstream):
    with FaultProxy(upstream.url, fault_rate=1.0, faults=("reset",)) as p:
        c = http.client.HTTPConnection("127.0.0.1", p.port, timeout=30)
        c.request("GET", "/big")
        r = c.getresponse()
        assert r.status == 200  # headers arrive...
        with pytest.raises((http.client.IncompleteRead, ConnectionResetError)):
            r.read()  # ...but the body stops halfway, with a reset
        c.close()
        assert [s["path"] for s in upstream.seen] == ["/big"]
        # A bodyless answer is cut right after the headers: the client sees a reset or an empty reply.
        with pytest.raises((http.client.IncompleteRead, ConnectionError, http.client.RemoteDisconnected)):
            c = http.client.HTTPConnection("127.0.0.1", p.port, timeout=30)
            c.request("PUT", "/k", body=b"v")
            r = c.getresponse()
            r.read()
            raise AssertionError("the response arrived whole")
        assert upstream.seen[-1]["method"] == "PUT"
        assert p.stats()["faults"] == {"reset": 2}


def test_slow_and_latency(upstream):
    with FaultProxy(upstream.url, fault_rate=1.0, faults=("slow",), slow_ms=400) as p:
        t0 = time.monotonic()
        r, data = _request(p, "GET", "/a", headers=[("Host", "h")])
        assert (r.status, data) == (200, b"GET /a") and time.monotonic() - t0 >= 0.4
        p.fault_rate = 0.0
        p.latency_ms = 150
        t0 = time.monotonic()
        for _ in range(3):
            _request(p, "GET", "/a", headers=[("Host", "h")])
        assert time.monotonic() - t0 >= 0.45
        assert p.stats()["faults"] == {"slow": 1}


def test_bearer_and_oauth2_client_credentials(upstream):
    with FaultProxy(upstream.url, bearer="s3cret", oauth_clients={"app": "pw"}, token_ttl_s=1) as p:
        r, data = _request(p, "GET", "/v1/config", headers=[("Host", "h")])
        assert r.status == 401 and "missing Authorization" in json.loads(data)["error"]["message"]
        r, data = _request(p, "GET", "/v1/config", headers=[("Host", "h"), ("Authorization", "Bearer nope")])
        assert r.status == 401 and json.loads(data)["error"]["type"] == "NotAuthorizedException"
        r, data = _request(p, "GET", "/v1/config", headers=[("Host", "h"), ("Authorization", "Bearer s3cret")])
        assert (r.status, data) == (200, b"GET /v1/config")

        form = "application/x-www-form-urlencoded"

        def token(body, extra=()):
            return _request(p, "POST", "/v1/oauth/tokens", body.encode(), [("Host", "h"), ("Content-Type", form),
                                                                             *extra])

        r, data = token("grant_type=client_credentials&client_id=app&client_secret=bad&scope=catalog")
        assert r.status == 401 and json.loads(data)["error"] == "invalid_client"
        r, data = token("grant_type=password&username=a&password=b")
        assert r.status == 400 and json.loads(data)["error"] == "unsupported_grant_type"
        r, data = token("grant_type=client_credentials&client_id=app&client_secret=pw&scope=catalog")
        assert r.status == 200
        tok = json.loads(data)
        assert tok["token_type"] == "bearer" and tok["expires_in"] == 1 and tok["access_token"]
        basic = base64.b64encode(b"app:pw").decode()
        r, data = token("grant_type=client_credentials", [("Authorization", f"Basic {basic}")])
        assert r.status == 200 and json.loads(data)["access_token"] != tok["access_token"]

        auth = [("Host", "h"), ("Authorization", f"Bearer {tok['access_token']}")]
        r, data = _request(p, "GET", "/v1/namespaces", headers=auth)
        assert (r.status, data) == (200, b"GET /v1/namespaces")
        time.sleep(1.1)
        r, data = _request(p, "GET", "/v1/namespaces", headers=auth)
        assert r.status == 401 and "expired" in json.loads(data)["error"]["message"]

        assert [s["path"] for s in upstream.seen] == ["/v1/config", "/v1/namespaces"]  # token endpoint: local
        s = p.stats()
        assert s["tokens_issued"] == 2 and s["auth_failures"] == 4


# ---- SigV4 through the proxy, verified by moto with IAM auth on -------------------------------------------

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def moto_with_auth(tmp_path):
    """moto_server that checks SigV4 signatures (IAM auth on after 3 set-up requests)."""
    exe = Path(sys.executable).with_name("moto_server")
    if not exe.exists():
        pytest.fail(f"moto_server not found next to {sys.executable}; run scripts/deps/install.sh --test")
    for _ in range(20):
        port = _free_port()
        env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="3")
        proc = subprocess.Popen([str(exe), "-H", "127.0.0.1", "-p", str(port)], env=env,
                                stdout=subprocess.DEVNULL, stderr=open(tmp_path / "moto.log", "wb"))
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.1)
        if proc.poll() is None:
            break
    else:
        pytest.fail("moto_server did not start: " + (tmp_path / "moto.log").read_text())
    try:
        import boto3
        iam = boto3.client("iam", endpoint_url=url, region_name="us-east-1",
                           aws_access_key_id="setup", aws_secret_access_key="setup")
        iam.create_user(UserName="thaw")
        key = iam.create_access_key(UserName="thaw")["AccessKey"]
        iam.put_user_policy(UserName="thaw", PolicyName="all", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        yield url, key["AccessKeyId"], key["SecretAccessKey"]
    finally:
        proc.terminate()
        proc.wait(10)


def test_arrow_s3_sigv4_verifies_through_the_proxy(moto_with_auth):
    from pyarrow import fs

    url, ak, sk = moto_with_auth
    with FaultProxy(url) as p:
        host = urllib.parse.urlsplit(p.url).netloc

        def s3(secret):
            return fs.S3FileSystem(access_key=ak, secret_key=secret, region="us-east-1", scheme="http",
                                   endpoint_override=host, force_virtual_addressing=False,
                                   allow_bucket_creation=True,
                                   retry_strategy=fs.AwsStandardS3RetryStrategy(max_attempts=1))

        good = s3(sk)
        good.create_dir("bucket")
        payload = os.urandom(3 * 1024 * 1024)
        with good.open_output_stream("bucket/dir/obj.bin") as f:
            f.write(payload)
        with good.open_input_file("bucket/dir/obj.bin") as f:
            assert f.read() == payload
            assert f.read_at(10, 1000) == payload[1000:1010]
        assert sorted(i.path for i in good.get_file_info(fs.FileSelector("bucket", recursive=True))) == [
            "bucket/dir", "bucket/dir/obj.bin"]

        # Control: moto does check signatures: the right key id with a wrong secret (which only enters the
        # signature) is refused through the same proxy.
        with pytest.raises(OSError, match="ACCESS_DENIED|SignatureDoesNotMatch"):
            s3("wrong-secret").open_input_file("bucket/dir/obj.bin").read()
        s = p.stats()
        assert s["requests"] >= 5 and s["by_method"].get("GET", 0) >= 2
