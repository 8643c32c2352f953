#!/usr/bin/env python3
"""Records the Kafka frames real clients send (and a real broker answers), as test vectors.

Simple mode: the first connection of kcat (`kcat -b 127.0.0.1:PORT -L`) and of
Kafka's Java admin client (TopicCommand `--list`, jars from .deps/kafka/lib):

    python3 tests/unit/kafka/protocol/capture_requests.py OUTDIR [--upstream HOST:PORT]

It listens on a free loopback port and runs each client against it. Without
--upstream the client gets no answer: only its first request (ApiVersions)
is recorded, then the client is stopped. With --upstream the listener relays
to that broker and records its replies too.

Session mode: every connection of a series of client commands, through a
relay on the port the broker advertises (so that the clients' connections to
the broker's node come through it too):

    P=<a free port>
    THAW_KAFKA_EXTRA_CONFIG="advertised.listeners=PLAINTEXT://127.0.0.1:$P" scripts/kafka.sh start /tmp/cb
    python3 tests/unit/kafka/protocol/capture_requests.py OUTDIR --upstream 127.0.0.1:<broker port> \
        --proxy-port $P --session session --command "CMD" --command "CMD" ...
    scripts/kafka.sh stop /tmp/cb

({bootstrap} in a command is the relay's address.) Each frame (without its
4-byte size prefix) is written as one line of lowercase hex to
OUTDIR/<client or session>[-c<connection>]-<n>-<Api>-v<version>.{req,resp}.hex;
--fuzz-corpus DIR also writes each request frame as a binary file.

The vectors in tests/unit/kafka/protocol/frames/ (decoded by frames_test.cc;
their request frames are the seeds in fuzz/corpus/kafka_request/) were made
with Debian's kcat 1.7.1 (librdkafka 2.0.2) and the Kafka 4.1.2 jars against a
broker started by scripts/kafka.sh: simple mode with --upstream, then session
mode with these commands (L=.deps/kafka/lib, absolute):

    java -cp 'L/*' org.apache.kafka.tools.TopicCommand --bootstrap-server {bootstrap} --create --topic orders \
        --partitions 2 --replication-factor 1
    printf 'k1:v1\nk2:v2\nk3:v3\n' | kcat -b {bootstrap} -P -t orders -K: -p 0
    timeout 40 kcat -b {bootstrap} -G kcatgroup -X auto.offset.reset=earliest -e orders; true
    echo jv | java -cp 'L/*' org.apache.kafka.tools.ConsoleProducer --bootstrap-server {bootstrap} --topic orders
    timeout 60 java -cp 'L/*' org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server {bootstrap} \
        --topic orders --from-beginning --max-messages 4 --group javagroup; true

Python 3 standard library only.
"""

import argparse
import os
import select
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
API_NAMES = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
             10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
             15: "DescribeGroups", 16: "ListGroups", 17: "SaslHandshake", 18: "ApiVersions", 19: "CreateTopics",
             20: "DeleteTopics", 22: "InitProducerId", 32: "DescribeConfigs", 36: "SaslAuthenticate",
             60: "DescribeCluster"}


def client_command(client, bootstrap):
    if client == "kcat":
        return ["kcat", "-b", bootstrap, "-L", "-m", "10"]
    if client == "java":
        libs = REPO / ".deps" / "kafka" / "lib"
        return ["java", "-cp", f"{libs}/*", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
                "--list"]
    raise SystemExit(f"unknown client {client!r} (kcat or java)")


class FrameBuffer:
    def __init__(self):
        self.buf = b""

    def feed(self, data):
        self.buf += data
        frames = []
        while len(self.buf) >= 4:
            (size,) = struct.unpack(">i", self.buf[:4])
            if size < 0 or len(self.buf) < 4 + size:
                break
            frames.append(self.buf[4:4 + size])
            self.buf = self.buf[4 + size:]
        return frames


def capture(client, upstream, timeout):
    """Frames of the client's first connection: [(direction, bytes)], direction 'req' or 'resp'."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    proc = subprocess.Popen(client_command(client, f"127.0.0.1:{port}"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    frames = []
    try:
        listener.settimeout(timeout)
        conn, _ = listener.accept()
        conn.settimeout(timeout)
        if upstream is None:
            fb = FrameBuffer()
            deadline = time.time() + timeout
            while not frames and time.time() < deadline:
                data = conn.recv(65536)
                if not data:
                    break
                frames = [("req", f) for f in fb.feed(data)][:1]
            conn.close()
            return frames
        host, p = upstream.rsplit(":", 1)
        up = socket.create_connection((host, int(p)), timeout=timeout)
        fbs = {conn: FrameBuffer(), up: FrameBuffer()}
        peer = {conn: up, up: conn}
        deadline = time.time() + timeout
        open_socks = [conn, up]
        while open_socks == [conn, up] and time.time() < deadline:
            ready, _, _ = select.select(open_socks, [], [], 0.5)
            for s in ready:
                data = s.recv(65536)
                if not data:
                    open_socks = []
                    break
                peer[s].sendall(data)
                for f in fbs[s].feed(data):
                    frames.append(("req" if s is conn else "resp", f))
        conn.close()
        up.close()
        return frames
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        listener.close()


def relay(conn, upstream, frames, lock, stop):
    """Relays one client connection to the broker; appends (direction, frame) in wire order."""
    host, p = upstream.rsplit(":", 1)
    try:
        up = socket.create_connection((host, int(p)), timeout=10)
    except OSError:
        conn.close()
        return
    fbs = {conn: FrameBuffer(), up: FrameBuffer()}
    peer = {conn: up, up: conn}
    try:
        while not stop.is_set():
            ready, _, _ = select.select([conn, up], [], [], 0.2)
            for s in ready:
                data = s.recv(1 << 20)
                if not data:
                    return
                peer[s].sendall(data)
                got = fbs[s].feed(data)
                with lock:
                    frames.extend(("req" if s is conn else "resp", f) for f in got)
    except OSError:
        return
    finally:
        conn.close()
        up.close()


def run_session(proxy_port, upstream, commands, timeout):
    """Listens on proxy_port (the port the broker advertises), relays every connection to
    upstream while the commands run one after the other; returns [[(direction, frame)]] per connection."""
    import threading

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", proxy_port))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()
    lock = threading.Lock()
    connections = []
    threads = []

    def accept_loop():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            frames = []
            connections.append(frames)
            t = threading.Thread(target=relay, args=(conn, upstream, frames, lock, stop), daemon=True)
            t.start()
            threads.append(t)

    acceptor = threading.Thread(target=accept_loop, daemon=True)
    acceptor.start()
    try:
        for cmd in commands:
            print(f"running: {cmd}", file=sys.stderr)
            subprocess.run(cmd, shell=True, timeout=timeout, check=True, stdout=subprocess.DEVNULL)
    finally:
        time.sleep(0.5)
        stop.set()
        acceptor.join()
        for t in threads:
            t.join()
        listener.close()
    return connections


def write_frames(out, prefix, frames, fuzz_corpus):
    pending = []  # (index, api key, version) of requests awaiting their response, in order
    count = 0
    for direction, frame in frames:
        if direction == "req":
            key, version = struct.unpack(">hh", frame[:4])
            n = count
            count += 1
            pending.append((n, key, version))
        else:
            if not pending:
                raise SystemExit(f"{prefix}: response without a request")
            n, key, version = pending.pop(0)
        name = f"{prefix}-{n:02d}-{API_NAMES.get(key, f'Api{key}')}-v{version}.{direction}.hex"
        (out / name).write_text(frame.hex() + "\n")
        print(f"{name}: {len(frame)} bytes")
        if direction == "req" and fuzz_corpus:
            Path(fuzz_corpus).mkdir(parents=True, exist_ok=True)
            (Path(fuzz_corpus) / name.replace(".req.hex", ".bin")).write_bytes(frame)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--upstream", help="HOST:PORT of a real broker to relay to (records responses too)")
    ap.add_argument("--clients", default="kcat,java")
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--fuzz-corpus", help="also write each request frame, binary, into this directory")
    ap.add_argument("--session", help="session mode: name of the recorded files (needs --proxy-port, --upstream)")
    ap.add_argument("--proxy-port", type=int, help="session mode: the port the broker advertises")
    ap.add_argument("--command", action="append", default=[],
                    help="session mode: a shell command to run ({bootstrap} is the proxy address); repeatable")
    args = ap.parse_args()
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    if args.session:
        if not (args.upstream and args.proxy_port):
            raise SystemExit("--session needs --upstream and --proxy-port")
        bootstrap = f"127.0.0.1:{args.proxy_port}"
        commands = [c.replace("{bootstrap}", bootstrap) for c in args.command]
        conns = run_session(args.proxy_port, args.upstream, commands, args.timeout)
        for i, frames in enumerate(conns):
            write_frames(out, f"{args.session}-c{i}", frames, args.fuzz_corpus)
        return 0
    for client in args.clients.split(","):
        frames = capture(client, args.upstream, args.timeout)
        if not frames:
            print(f"{client}: no frame received", file=sys.stderr)
            return 1
        write_frames(out, client, frames, args.fuzz_corpus)
    return 0


if __name__ == "__main__":
    sys.exit(main())
