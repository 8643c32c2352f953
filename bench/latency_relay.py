"""A TCP relay for HTTP/1.1 that adds a fixed latency to every request, for the object-store benchmark.

tests/integration/fault_proxy.py is the test suite's fault injector: it parses every response, buffers its body in
Python and opens a new upstream connection per request. That makes it a bandwidth limit of its own (about
450 MB/s on the bench machine, less than the S3 servers it fronts), which the benchmark must not measure. This
relay adds only what it is asked to add:

  * each client connection gets its own upstream connection, kept alive as long as the client keeps its own;
  * client -> upstream: request heads are parsed (request line, Content-Length) so that every request waits
    ``latency_ms`` once before it is forwarded (concurrent connections wait concurrently), and is counted per
    "METHOD /path" (query string dropped);
  * upstream -> client: bytes are moved by os.splice() through a pipe, never copied into Python, and counted.

Chunked request bodies are not parsed (the benchmark's reads are GETs; its writes go to the store directly); a
connection that sends one is relayed without further latency or counting, and ``stats()["unparsed"]`` says so.

    relay = LatencyRelay("http://127.0.0.1:9000", latency_ms=20).start()
    ... s3.endpoint = relay.url ...
    relay.stats()   # {"requests": n, "by_path": {...}, "by_method": {...}, "bytes_out": n, "unparsed": n}
    relay.stop()
"""

from __future__ import annotations

import collections
import fcntl
import os
import socket
import threading
import time
from urllib.parse import urlsplit

_CHUNK = 1 << 20


class LatencyRelay:
    def __init__(self, upstream: str, latency_ms: float = 0.0):
        u = urlsplit(upstream)
        if u.scheme != "http" or not u.hostname or not u.port:
            raise ValueError(f"LatencyRelay: upstream must be http://HOST:PORT, got {upstream!r}")
        self.upstream = (u.hostname, u.port)
        self.latency_ms = latency_ms
        self.log: list | None = None   # set to [] to record (monotonic time, method, path, Range) per request
        self._lock = threading.Lock()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._stopping = False
        self._conns: set[socket.socket] = set()
        self.reset_stats()

    def start(self) -> "LatencyRelay":
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping = True
        try:
            self._sock.close()
        except OSError:
            pass
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def reset_stats(self) -> None:
        with self._lock:
            self._requests = 0
            self._by_path: collections.Counter = collections.Counter()
            self._by_method: collections.Counter = collections.Counter()
            self._bytes_out = 0
            self._unparsed = 0

    def stats(self) -> dict:
        with self._lock:
            return {"requests": self._requests, "by_path": dict(self._by_path), "by_method": dict(self._by_method),
                    "bytes_out": self._bytes_out, "unparsed": self._unparsed}

    # -- internals --

    def _accept(self) -> None:
        while not self._stopping:
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._conns.update((client, upstream))
            pair = [client, upstream, 2]     # the sockets, and how many of the two directions still run
            threading.Thread(target=self._requests_up, args=(pair,), daemon=True).start()
            threading.Thread(target=self._responses_down, args=(pair,), daemon=True).start()

    def _count(self, head: bytes) -> int:
        """Counts one request head; returns its Content-Length (-1 for a chunked body)."""
        lines = head.split(b"\r\n")
        parts = lines[0].decode("latin-1").split(" ")
        method, target = (parts[0], parts[1]) if len(parts) >= 2 else ("?", "?")
        length = 0
        rng = ""
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"range":
                rng = value.strip().decode("latin-1")
            elif name == b"content-length":
                length = int(value.strip())
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                length = -1
        with self._lock:
            self._requests += 1
            self._by_path[f"{method} {target.split('?', 1)[0]}"] += 1
            self._by_method[method] += 1
            if self.log is not None:
                self.log.append((time.monotonic(), method, target.split("?", 1)[0], rng))
        return length

    def _requests_up(self, pair: list) -> None:
        client, upstream = pair[0], pair[1]
        buf = b""
        body_left = 0      # bytes of the current request's body still to forward
        parsing = True
        try:
            while True:
                data = client.recv(_CHUNK)
                if not data:
                    break
                if not parsing:
                    upstream.sendall(data)
                    continue
                buf += data
                out = []
                while buf:
                    if body_left:
                        n = min(body_left, len(buf))
                        out.append(buf[:n])
                        buf, body_left = buf[n:], body_left - n
                        continue
                    end = buf.find(b"\r\n\r\n")
                    if end < 0:
                        break
                    head, buf = buf[:end + 4], buf[end + 4:]
                    length = self._count(head)
                    if self.latency_ms:
                        # Forward what came before this request, then hold this one back.
                        if out:
                            upstream.sendall(b"".join(out))
                            out = []
                        time.sleep(self.latency_ms / 1000.0)
                    out.append(head)
                    if length < 0:
                        parsing = False
                        with self._lock:
                            self._unparsed += 1
                        out.append(buf)
                        buf = b""
                        break
                    body_left = length
                if out:
                    upstream.sendall(b"".join(out))
        except OSError:
            pass
        finally:
            self._done(pair)

    def _responses_down(self, pair: list) -> None:
        client, upstream = pair[0], pair[1]
        r, w = os.pipe()
        try:
            fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, _CHUNK)
        except OSError:
            pass          # the pipe keeps its default size (64 KiB): more splice calls, same bytes
        try:
            while True:
                n = os.splice(upstream.fileno(), w, _CHUNK)
                if n == 0:
                    break
                left = n
                while left:
                    left -= os.splice(r, client.fileno(), left)
                with self._lock:
                    self._bytes_out += n
        except OSError:
            pass
        finally:
            os.close(r)
            os.close(w)
            self._done(pair)

    def _done(self, pair: list) -> None:
        """One direction ended: wake the other one (shutdown); the last one closes both sockets."""
        for s in pair[:2]:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        with self._lock:
            pair[2] -= 1
            last = pair[2] == 0
            if last:
                self._conns.difference_update(pair[:2])
        if last:
            for s in pair[:2]:
                s.close()
