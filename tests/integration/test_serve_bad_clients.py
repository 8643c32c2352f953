"""`thaw serve` and bad clients: truncated frames, absurd sizes, unknown API
keys and versions, a Produce to a served topic. After each, a good client is
still served every record (and `thaw serve` is still running).

What is asserted is what Apache Kafka's broker does, so that
THAW_SERVE_TARGET=kafka runs the same tests against the reference
(serve_harness.py): a frame the server will not read closes that connection
only; an ApiVersions request of an unknown version gets the KIP-511 answer (a
v0 response, UNSUPPORTED_VERSION, listing the ApiVersions range); a request
with an unknown API key closes the connection (or, allowed too, gets an
answer) and never hangs. A Produce to a served topic must end with an error
delivered to the producer, not a timeout (against the broker, whose topics are
writable, it succeeds: that branch checks only that it completes).
"""

from __future__ import annotations

import os
import socket
import struct
import time

import pytest

from serve_harness import (  # noqa: F401  (fixtures)
    Topic,
    _serve_broker,
    confluent_cmd,
    open_served,
    serve_target,
)

TOPICS = [Topic("good", "ns.redpanda", "redpanda", compression="lz4"),
          Topic("victim", "ns.canonical_v3", "thaw")]


@pytest.fixture(scope="module")
def served(thaw_bin, thaw, warehouse, tmp_path_factory, _serve_broker):
    with open_served(thaw_bin, thaw, tmp_path_factory.mktemp("serve-bad"), _serve_broker, warehouse.dir,
                     TOPICS) as s:
        yield s


def host_port(bootstrap: str) -> tuple[str, int]:
    h, p = bootstrap.rsplit(":", 1)
    return h, int(p)


def connect(served) -> socket.socket:
    s = socket.create_connection(host_port(served.bootstrap), timeout=10)
    s.settimeout(10)
    return s


def header(api_key: int, version: int, corr: int, client_id: bytes = b"thaw-bad-client") -> bytes:
    return struct.pack(">hhih", api_key, version, corr, len(client_id)) + client_id


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def read_frame(s: socket.socket) -> bytes | None:
    """One response frame, or None when the server closed the connection."""
    def exact(n):
        buf = b""
        while len(buf) < n:
            try:
                chunk = s.recv(n - len(buf))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            buf += chunk
        return buf
    h = exact(4)
    if h is None:
        return None
    (n,) = struct.unpack(">i", h)
    assert 0 <= n < 64 << 20, n
    return exact(n)


def assert_closed(s: socket.socket, what: str, timeout: float = 10.0) -> None:
    s.settimeout(timeout)
    try:
        data = s.recv(65536)
    except ConnectionResetError:
        return
    except socket.timeout:
        pytest.fail(f"{what}: the server neither answered nor closed the connection within {timeout} s",
                    pytrace=False)
    assert data == b"", f"{what}: expected the connection closed, got {data[:64]!r}"


def good_client_served(served) -> None:
    p = served.run(confluent_cmd("-b", served.bootstrap, "-t", served.topic("good"), "--timeout", "60"))
    served.check("good", served.parse(p.stdout), client="good client after a bad one")
    assert served.alive(), f"thaw serve exited\n{served.stderr()}"


def peak_rss_mib(served) -> float | None:
    if served.server is None or served.server.proc is None:
        return None
    with open(f"/proc/{served.server.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return None


def test_truncated_frames(served):
    # length prefix cut short; a frame cut short then closed; a frame cut
    # short and left open while a good client reads everything.
    s = connect(served)
    s.sendall(b"\x00\x00")
    s.close()
    s = connect(served)
    s.sendall(struct.pack(">i", 100) + header(18, 3, 1)[:6])
    s.close()
    hanging = connect(served)
    hanging.sendall(struct.pack(">i", 100) + header(3, 12, 7)[:8])
    try:
        good_client_served(served)
    finally:
        hanging.close()
    good_client_served(served)


@pytest.mark.parametrize("size", [0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 200 << 20], ids=["2GiB", "neg-min", "neg-1",
                                                                                       "200MiB"])
def test_absurd_frame_size(served, size):
    before = peak_rss_mib(served)
    s = connect(served)
    local = s.getsockname()
    s.sendall(struct.pack(">I", size) + header(18, 3, 5) + b"\x00" * 64)
    assert_closed(s, f"frame size {size}")
    s.close()
    good_client_served(served)
    if before is not None:
        after = peak_rss_mib(served)
        assert after < before + 64, \
            f"peak RSS went from {before:.0f} to {after:.0f} MiB after a {size}-byte frame header"
        time.sleep(0.2)
        log = served.stderr()
        assert f"{local[0]}:{local[1]}" in log, f"no log line naming the client {local}:\n{log[-2000:]}"


def test_unsupported_api_versions_version(served):
    """KIP-511: ApiVersions v99 -> a v0 response, UNSUPPORTED_VERSION (35),
    listing ApiVersions (key 18) with the versions the server supports."""
    s = connect(served)
    s.sendall(frame(header(18, 99, 4242) + b"\x00" * 8))
    body = read_frame(s)
    s.close()
    assert body is not None, "connection closed instead of the KIP-511 answer"
    corr, err, n = struct.unpack(">ihi", body[:10])
    assert (corr, err) == (4242, 35), (corr, err)
    keys = {}
    for i in range(n):
        k, lo, hi = struct.unpack(">hhh", body[10 + 6 * i:16 + 6 * i])
        keys[k] = (lo, hi)
    assert 18 in keys and keys[18][0] == 0 and keys[18][1] >= 3, keys
    good_client_served(served)


@pytest.mark.parametrize("api_key", [32000, 1000, -5])
def test_unknown_api_key(served, api_key):
    s = connect(served)
    s.sendall(frame(header(api_key, 0, 77) + b"\x00" * 16))
    s.settimeout(10)
    try:
        body = read_frame(s)
    except socket.timeout:
        pytest.fail(f"api key {api_key}: no answer and no close within 10 s", pytrace=False)
    if body is not None:  # an answer is allowed; it must be for this request
        assert struct.unpack(">i", body[:4])[0] == 77
    s.close()
    good_client_served(served)


def test_huge_array_count(served):
    # Metadata v4 (not flexible) with a topics array count of 2^31-1 and no
    # elements: must be refused before allocating.
    before = peak_rss_mib(served)
    s = connect(served)
    s.sendall(frame(header(3, 4, 9) + struct.pack(">i", 0x7FFFFFFF) + b"\x00"))
    s.settimeout(10)
    try:
        body = read_frame(s)
    except socket.timeout:
        pytest.fail("huge array count: no answer and no close within 10 s", pytrace=False)
    if body is not None:
        assert struct.unpack(">i", body[:4])[0] == 9
    s.close()
    good_client_served(served)
    if before is not None:
        assert peak_rss_mib(served) < before + 64


def test_produce_to_served_topic(served):
    from confluent_kafka import Producer

    results = []
    p = Producer({"bootstrap.servers": served.bootstrap, "message.timeout.ms": 20000, "acks": "all",
                  "enable.idempotence": False, "retries": 2, "retry.backoff.ms": 200})
    p.produce(served.topic("victim"), key=b"k", value=b"v", on_delivery=lambda err, msg: results.append(err))
    t0 = time.monotonic()
    left = p.flush(40)
    assert left == 0 and len(results) == 1, f"the Produce did not complete within 40 s ({left} in queue)"
    err = results[0]
    if served.mode == "thaw":
        assert err is not None, "a Produce to a served topic succeeded"
        from confluent_kafka import KafkaError
        assert err.code() != KafkaError._MSG_TIMED_OUT, \
            f"the Produce timed out instead of getting an error answer: {err}"
        assert time.monotonic() - t0 < 15, f"the error took {time.monotonic() - t0:.1f} s"
    else:
        assert err is None, err
    good_client_served(served)


def test_many_bad_connections_then_good(served):
    """A burst of garbage connections (random bytes) does not stop service."""
    rng = os.urandom
    for i in range(30):
        s = connect(served)
        try:
            s.sendall(rng(16 + i * 7))
        except OSError:
            pass
        s.close()
    good_client_served(served)


def test_frames_that_announce_100_mib_and_send_little_cost_little(served):
    """Eight clients each announce a 100 MiB request (the accepted maximum)
    and send 12 bytes of it: the buffer grows as bytes arrive, so they do
    not hold 800 MiB between them (they did: 34 -> 834 MB resident)."""
    before = peak_rss_mib(served)
    held = []
    try:
        for _ in range(8):
            s = connect(served)
            s.sendall(struct.pack(">i", 100 << 20) + header(3, 1, 7)[:8])
            held.append(s)
        time.sleep(1.0)
        after = peak_rss_mib(served)
        if before is not None and after is not None:
            assert after < before + 64, f"peak RSS went from {before:.0f} to {after:.0f} MiB"
    finally:
        for s in held:
            s.close()
    good_client_served(served)
