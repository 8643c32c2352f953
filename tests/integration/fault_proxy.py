"""A small fault-injecting HTTP/1.1 proxy for the object-store and REST catalog tests (stdlib, threads).

Put it in front of an upstream (moto's S3 server or the Iceberg REST catalog) and point the client at
``proxy.url`` instead of the upstream:

    proxy = FaultProxy(s3_store.endpoint, fault_rate=0.2, seed=7).start()
    ... s3.endpoint = proxy.url ...
    proxy.stats()["faults"]        # {"503": 4, "slowdown": 3, ...}
    proxy.stop()

Requests are forwarded unchanged: the method, the path and query, every header in the client's order and
spelling (Host included, so an S3 SigV4 signature made for ``proxy.url`` still verifies upstream) and the body
byte for byte (a chunked body keeps its chunk framing). The response comes back with the upstream's status,
reason, headers and body (re-framed with Content-Length). Each request opens its own upstream connection.

For a seeded share ``fault_rate`` of the requests (one ``random.Random(seed)`` draw per request, in arrival
order) the proxy injects one fault chosen from ``faults``:

    "503"       503 without asking the upstream: S3-style XML (<Code>ServiceUnavailable</Code>) for the store,
                Iceberg REST ErrorModel JSON (ServiceUnavailableException) for the catalog
    "slowdown"  throttling without asking the upstream: S3's 503 <Code>SlowDown</Code> for the store,
                429 JSON for the catalog
    "429"       429 Too Many Requests (XML <Code>TooManyRequests</Code> / JSON) for either
    "reset"     the request IS forwarded (the upstream acts on it), then the connection is reset halfway
                through the response (status line and headers sent, half the body, then RST): a lost response
    "slow"      the request is forwarded and answered correctly, but only after ``slow_ms`` milliseconds

Which body style an error uses (``flavor``): "s3", "rest", or None (default) = per request, "rest" when the
path (below the upstream's base path) starts with /v1/, else "s3". ``fault_filter(method, path) -> bool``, when
set, limits faults to the requests it accepts (e.g. only data files). Every request also waits ``latency_ms``
before it is forwarded (injected latency; concurrent requests wait concurrently).

Auth (for the catalog): with ``bearer`` set and/or ``oauth_clients`` given, every request except the token
endpoint must carry ``Authorization: Bearer <token>`` where the token is ``bearer`` or an unexpired token
issued by the endpoint; otherwise 401 with a JSON ErrorModel (NotAuthorizedException) saying whether the token
was missing, unknown or expired. The OAuth2 token endpoint ``POST <base>/v1/oauth/tokens`` takes a
form-encoded ``grant_type=client_credentials`` with ``client_id``/``client_secret`` (or HTTP Basic auth) checked
against ``oauth_clients`` ({client_id: secret}) and returns ``{"access_token", "token_type": "bearer",
"expires_in": token_ttl_s, "issued_token_type"}``; bad credentials get 401 ``invalid_client``, another grant
type 400 ``unsupported_grant_type`` (RFC 6749 §5.2). The endpoint is answered by the proxy, never forwarded.
Faults and latency apply to it too.

``stats()`` returns a snapshot: total requests, counts per "METHOD /path" (query string dropped, path as sent,
percent-encoding included), per method, injected faults per kind, responses per HTTP status (injected ones
included), auth failures and tokens issued; ``reset_stats()`` zeroes them. The constructor's keyword arguments are
plain attributes and may be changed while the proxy runs (e.g. ``proxy.fault_rate = 1.0``).
"""

from __future__ import annotations

import base64
import collections
import http.client
import http.server
import json
import random
import secrets
import socket
import struct
import threading
import time
import urllib.parse
import uuid

FAULT_KINDS = ("503", "slowdown", "429", "reset", "slow")
TOKEN_PATH = "/v1/oauth/tokens"

# Hop-by-hop response headers the proxy re-frames itself.
_DROP_RESPONSE_HEADERS = {"transfer-encoding", "connection", "keep-alive", "content-length"}
_COPY_CHUNK = 1 << 20


class FaultProxy:
    def __init__(self, upstream_url: str, *, fault_rate: float = 0.0,
                 faults=("503", "slowdown", "reset", "slow"), latency_ms: float = 0, seed: int = 0,
                 bearer: str | None = None, oauth_clients: dict | None = None, token_ttl_s: float = 3600,
                 slow_ms: float = 1000, flavor: str | None = None, fault_filter=None):
        u = urllib.parse.urlsplit(upstream_url)
        if u.scheme != "http" or not u.hostname:
            raise ValueError(f"FaultProxy: upstream must be an http://host:port URL, got {upstream_url!r}")
        for f in faults:
            if f not in FAULT_KINDS:
                raise ValueError(f"FaultProxy: unknown fault {f!r}; known: {', '.join(FAULT_KINDS)}")
        self.upstream_url = upstream_url
        self.upstream_host = u.hostname
        self.upstream_port = u.port or 80
        self.base_path = u.path.rstrip("/")
        self.fault_rate = fault_rate
        self.faults = tuple(faults)
        self.latency_ms = latency_ms
        self.seed = seed
        self.bearer = bearer
        self.oauth_clients = dict(oauth_clients) if oauth_clients else None
        self.token_ttl_s = token_ttl_s
        self.slow_ms = slow_ms
        self.flavor = flavor
        self.fault_filter = fault_filter
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._tokens: dict[str, float] = {}   # token -> expiry (time.monotonic())
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.reset_stats()

    # ---- lifecycle ---------------------------------------------------------------------------------------
    def start(self) -> "FaultProxy":
        proxy = self

        class Handler(_Handler):
            pass

        Handler.proxy = proxy

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False
            request_queue_size = 256
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=f"FaultProxy:{self.port}", daemon=True)
        self._thread.start()
        return self

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FaultProxy: not started")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The proxy's base URL, with the upstream's base path (use it wherever the upstream URL went)."""
        return f"http://127.0.0.1:{self.port}{self.base_path}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=10)
            self._server = None

    def __enter__(self):
        return self.start() if self._server is None else self

    def __exit__(self, *exc):
        self.stop()

    # ---- statistics --------------------------------------------------------------------------------------
    def reset_stats(self) -> None:
        with getattr(self, "_lock", threading.Lock()):
            self._requests = 0
            self._by_path = collections.Counter()
            self._by_method = collections.Counter()
            self._faults = collections.Counter()
            self._auth_failures = 0
            self._tokens_issued = 0
            self._bytes_out = 0
            self._by_status = collections.Counter()

    def stats(self) -> dict:
        with self._lock:
            return {
                "requests": self._requests,
                "by_path": dict(self._by_path),
                "by_method": dict(self._by_method),
                "faults": dict(self._faults),
                "faults_total": sum(self._faults.values()),
                "auth_failures": self._auth_failures,
                "tokens_issued": self._tokens_issued,
                "bytes_out": self._bytes_out,
                "by_status": dict(self._by_status),
            }

    def requests_matching(self, substring: str, method: str | None = None) -> int:
        """Requests whose path contains `substring` (and whose method is `method`, if given)."""
        with self._lock:
            return sum(n for key, n in self._by_path.items()
                       if substring in key.split(" ", 1)[1] and (method is None or key.startswith(method + " ")))

    # ---- decisions (called by the handler threads) -------------------------------------------------------
    def _record(self, method: str, path: str) -> None:
        with self._lock:
            self._requests += 1
            self._by_path[f"{method} {path}"] += 1
            self._by_method[method] += 1

    def _choose_fault(self, method: str, path: str) -> str | None:
        if self.fault_filter is not None and not self.fault_filter(method, path):
            return None
        with self._lock:
            draw = self._rng.random()
            if draw >= self.fault_rate or not self.faults:
                return None
            fault = self._rng.choice(self.faults)
            self._faults[fault] += 1
            return fault

    def _flavor_for(self, path: str) -> str:
        if self.flavor:
            return self.flavor
        rel = path[len(self.base_path):] if path.startswith(self.base_path) else path
        return "rest" if rel.startswith("/v1/") else "s3"

    def _auth_required(self) -> bool:
        return self.bearer is not None or self.oauth_clients is not None

    def _check_token(self, header: str | None) -> str | None:
        """None when the Authorization header is accepted, else why not."""
        if not header:
            return "missing Authorization header (expected 'Bearer <token>')"
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return "Authorization header is not 'Bearer <token>'"
        token = token.strip()
        if self.bearer is not None and secrets.compare_digest(token, self.bearer):
            return None
        with self._lock:
            expiry = self._tokens.get(token)
        if expiry is None:
            return "unknown bearer token"
        if time.monotonic() >= expiry:
            return "bearer token expired"
        return None

    def _issue_token(self) -> str:
        token = "tok-" + secrets.token_urlsafe(24)
        with self._lock:
            self._tokens[token] = time.monotonic() + self.token_ttl_s
            self._tokens_issued += 1
        return token

    def _auth_failed(self) -> None:
        with self._lock:
            self._auth_failures += 1

    def _answered(self, status: int) -> None:
        with self._lock:
            self._by_status[status] += 1

    def _sent(self, n: int) -> None:
        with self._lock:
            self._bytes_out += n


def _s3_error(status: int, code: str, message: str, resource: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
            f"<Resource>{_xml_escape(resource)}</Resource><RequestId>{uuid.uuid4().hex[:16]}</RequestId>"
            "</Error>").encode()


def _xml_escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _rest_error(status: int, type_: str, message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": type_, "code": status}}).encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    proxy: FaultProxy = None  # set on the per-proxy subclass

    def log_message(self, format, *args):  # noqa: A002 - quiet: tests read stats(), not logs
        pass

    def _dispatch(self):
        p = self.proxy
        path = urllib.parse.urlsplit(self.path).path
        p._record(self.command, path)
        if p.latency_ms:
            time.sleep(p.latency_ms / 1000.0)
        fault = p._choose_fault(self.command, path)
        flavor = p._flavor_for(path)
        # Consume the request body first so that the connection stays usable for the next request.
        body = self._read_body()
        if fault in ("503", "slowdown", "429"):
            self._send_fault(fault, flavor, path)
            return
        if fault == "slow":
            time.sleep(p.slow_ms / 1000.0)
        if path == p.base_path + TOKEN_PATH and p.oauth_clients is not None:
            self._token_endpoint(body)
            return
        if p._auth_required():
            why = p._check_token(self.headers.get("Authorization"))
            if why is not None:
                p._auth_failed()
                self._send(401, "application/json",
                           _rest_error(401, "NotAuthorizedException", f"Not authorized: {why}"),
                           extra={"WWW-Authenticate": 'Bearer error="invalid_token"'})
                return
        self._forward(body, reset=(fault == "reset"))

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_PATCH = do_OPTIONS = _dispatch

    # ---- request body: kept byte for byte (chunk framing included) -------------------------------------
    def _read_body(self) -> bytes:
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            out = bytearray()
            while True:
                line = self.rfile.readline(65537)
                out += line
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while True:  # trailers up to the empty line
                        t = self.rfile.readline(65537)
                        out += t
                        if t in (b"\r\n", b"\n", b""):
                            return bytes(out)
                out += self.rfile.read(size)
                out += self.rfile.readline(65537)  # CRLF after the chunk
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    # ---- answers made by the proxy ----------------------------------------------------------------------
    def _send(self, status: int, ctype: str, body: bytes, extra: dict | None = None):
        self.proxy._answered(status)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if self.command == "HEAD":
            body = b""
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)
        self.proxy._sent(len(body))

    def _send_fault(self, fault: str, flavor: str, path: str):
        note = "(injected by the test's fault proxy)"
        if flavor == "rest":
            if fault == "503":
                self._send(503, "application/json",
                           _rest_error(503, "ServiceUnavailableException", f"Service unavailable {note}"))
            else:
                self._send(429, "application/json",
                           _rest_error(429, "TooManyRequestsException", f"Too many requests {note}"))
            return
        if fault == "503":
            self._send(503, "application/xml",
                       _s3_error(503, "ServiceUnavailable", f"Service is unable to handle request {note}", path))
        elif fault == "slowdown":
            self._send(503, "application/xml",
                       _s3_error(503, "SlowDown", f"Please reduce your request rate {note}", path))
        else:
            self._send(429, "application/xml",
                       _s3_error(429, "TooManyRequests", f"Too many requests {note}", path))

    def _token_endpoint(self, body: bytes):
        p = self.proxy
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        grant = form.get("grant_type", [""])[0]
        cid = form.get("client_id", [None])[0]
        secret = form.get("client_secret", [None])[0]
        auth = self.headers.get("Authorization", "")
        if cid is None and auth.lower().startswith("basic "):
            try:
                cid, _, secret = base64.b64decode(auth[6:].strip()).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                cid = secret = None
        if self.command != "POST":
            self._send(405, "application/json", json.dumps(
                {"error": "invalid_request", "error_description": "use POST"}).encode())
            return
        if grant != "client_credentials":
            self._send(400, "application/json", json.dumps(
                {"error": "unsupported_grant_type",
                 "error_description": f"grant_type {grant!r} is not supported; use client_credentials"}).encode())
            return
        expected = p.oauth_clients.get(cid) if cid is not None else None
        if expected is None or secret is None or not secrets.compare_digest(secret, expected):
            p._auth_failed()
            self._send(401, "application/json", json.dumps(
                {"error": "invalid_client", "error_description": "unknown client_id or wrong client_secret"}).encode())
            return
        token = p._issue_token()
        self._send(200, "application/json", json.dumps({
            "access_token": token,
            "token_type": "bearer",
            "expires_in": int(p.token_ttl_s) if float(p.token_ttl_s).is_integer() else p.token_ttl_s,
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
        }).encode())

    # ---- forwarding -----------------------------------------------------------------------------------
    def _forward(self, body: bytes, reset: bool):
        p = self.proxy
        conn = http.client.HTTPConnection(p.upstream_host, p.upstream_port, timeout=300)
        try:
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for k, v in self.headers.items():  # order and spelling as the client sent them (Host included)
                conn.putheader(k, v)
            conn.endheaders()
            if body:
                conn.send(body)
            resp = conn.getresponse()
        except OSError as e:
            conn.close()
            msg = f"fault proxy: upstream {p.upstream_url} unreachable: {e}"
            if p._flavor_for(urllib.parse.urlsplit(self.path).path) == "rest":
                self._send(502, "application/json", _rest_error(502, "BadGatewayException", msg))
            else:
                self._send(502, "application/xml", _s3_error(502, "BadGateway", msg, self.path))
            return
        try:
            self._relay(resp, reset)
        finally:
            conn.close()

    def _relay(self, resp: http.client.HTTPResponse, reset: bool):
        head_like = self.command == "HEAD" or resp.status in (204, 304) or 100 <= resp.status < 200
        length = resp.getheader("Content-Length")
        chunked = "chunked" in (resp.getheader("Transfer-Encoding") or "").lower()
        if head_like:
            data = None
        elif chunked or length is None:
            data = resp.read()
            length = str(len(data))
        else:
            data = None
        self.proxy._answered(resp.status)
        self.send_response_only(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in _DROP_RESPONSE_HEADERS:
                self.send_header(k, v)
        if length is not None:
            self.send_header("Content-Length", length)
        self.end_headers()
        total = 0 if head_like else int(length or 0)
        if reset:
            self._reset_after(resp, data, total // 2)
            return
        if head_like:
            return
        if data is not None:
            self.wfile.write(data)
            self.proxy._sent(len(data))
            return
        left = total
        while left > 0:
            chunk = resp.read(min(_COPY_CHUNK, left))
            if not chunk:
                break  # upstream died; the client sees a short body
            self.wfile.write(chunk)
            left -= len(chunk)
            self.proxy._sent(len(chunk))
        if left > 0:
            self.close_connection = True

    def _reset_after(self, resp, data, n: int):
        """Send `n` body bytes, then reset the connection (RST, not FIN)."""
        if n > 0:
            chunk = data[:n] if data is not None else resp.read(n)
            self.wfile.write(chunk)
        self.wfile.flush()
        self.close_connection = True
        sock = self.connection
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.rfile.close()  # drop the makefile reference so close() really closes (with RST)
            sock.close()
        except OSError:
            pass

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (ConnectionError, BrokenPipeError, socket.timeout, ValueError):
            # The client went away (or the socket was reset on purpose): end this connection quietly.
            self.close_connection = True

    def finish(self):
        try:
            super().finish()
        except (OSError, ValueError):
            pass
