"""`--metrics` on serve, archive and replay (issue 22): Debian's Prometheus
server scrapes the three faces while they work, and PromQL over what it
scraped gives the counts the test produced; /healthz and /readyz; the
status page rendered by headless Chromium (its charts hold the points the
sampler took; the screenshot is kept under tests/.work/artifacts/);
`--log-format json`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import signal
import subprocess
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest

import archive_cli
import fixtures
from serve_harness import Topic, thaw_serve  # noqa: F401  (fixture)

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
COUNT = 400
ARTIFACTS = Path(__file__).resolve().parents[1] / ".work" / "artifacts"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url: str, timeout: float = 10.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def wait_until(what: str, fn, timeout: float = 90.0, every: float = 0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = fn()
            if last:
                return last
        except Exception as e:  # a server still starting
            last = e
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout} s (last: {last!r})")


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    def up():
        assert proc.poll() is None, f"exited {proc.returncode}"
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    wait_until(f"port {port}", up, timeout)


@contextlib.contextmanager
def prometheus(tmp_path: Path, targets: dict[str, int]):
    """Debian's Prometheus scraping each job's 127.0.0.1:PORT every second."""
    assert os.path.exists(PROMETHEUS), "prometheus is not installed: make deps-test installs it"
    d = tmp_path / "prometheus"
    d.mkdir()
    jobs = "".join(f"  - job_name: {job}\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
                   for job, port in targets.items())
    (d / "prometheus.yml").write_text(f"global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n{jobs}")
    port = free_port()
    log = open(d / "prometheus.log", "w")
    proc = subprocess.Popen([PROMETHEUS, f"--config.file={d / 'prometheus.yml'}", f"--storage.tsdb.path={d / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until("prometheus ready", lambda: http_get(base + "/-/ready")[0] == 200, 60)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def promql(base: str, query: str) -> float | None:
    status, body = http_get(base + "/api/v1/query?" + urllib.parse.urlencode({"query": query}))
    assert status == 200, body
    result = json.loads(body)["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def consume_with_group(bootstrap: str, topic: str, group: str, count: int) -> list[int]:
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    offsets = []
    deadline = time.monotonic() + 90
    try:
        while len(offsets) < count and time.monotonic() < deadline:
            m = c.poll(1.0)
            if m is None or m.error():
                continue
            offsets.append(m.offset())
        c.commit(asynchronous=False)
    finally:
        c.close()
    return offsets


def start(thaw_bin, args: list[str], stderr: Path) -> subprocess.Popen:
    with open(stderr, "w") as err:
        return subprocess.Popen([str(thaw_bin), *args], stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_prometheus_scrapes_serve_archive_and_replay(thaw_serve, thaw_bin, kafka, tmp_path):
    wh = str(tmp_path / "wh")
    fixtures.value_table(wh, "ns.metrics", COUNT)
    uri = fixtures.catalog_uri(wh)
    target = f"metrics-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(target, 1)
    serve_port, replay_port, archive_port = free_port(), free_port(), free_port()
    procs = []
    try:
        with thaw_serve(uri, [Topic("metrics", "ns.metrics", "thaw")],
                        extra=["--metrics", f"127.0.0.1:{serve_port}"]) as (bootstrap, _serve):
            # replay --follow keeps running (and serving /metrics) after the range.
            replay = start(thaw_bin, ["replay", "--catalog", uri, "--table", "ns.metrics", "--brokers",
                                      kafka.bootstrap, "--topic", target, "--job", f"j-{target}", "--follow",
                                      "--poll-interval", "1s", "--metrics", str(replay_port)],
                           tmp_path / "replay.stderr")
            procs.append(replay)
            archive_uri = archive_cli.new_catalog(str(tmp_path / "archive-wh"))
            archive = start(thaw_bin, archive_cli.archive_args(kafka, archive_uri, "ns.archived", target, "--follow",
                                                               "--commit-interval", "1s", "--metrics",
                                                               f"127.0.0.1:{archive_port}"),
                            tmp_path / "archive.stderr")
            procs.append(archive)
            for port, proc in ((replay_port, replay), (archive_port, archive)):
                wait_port(port, proc)
            assert sorted(consume_with_group(bootstrap, "metrics", "g1", COUNT)) == list(range(COUNT))

            with prometheus(tmp_path, {"serve": serve_port, "replay": replay_port, "archive": archive_port}) as prom:
                def counts():
                    got = {
                        "served": promql(prom, 'sum(thaw_served_records_total{job="serve",topic="metrics"})'),
                        "replayed": promql(prom, f'sum(thaw_replayed_records_total{{job="replay",topic="{target}"}})'),
                        "archived": promql(prom, f'sum(thaw_archived_records_total{{job="archive",topic="{target}"}})'),
                        "archive_lag": promql(prom, f'max(thaw_archive_lag_records{{topic="{target}"}})'),
                        "consumer_lag": promql(prom, 'max(thaw_consumer_lag_records{group="g1",topic="metrics"})'),
                        "replay_lag": promql(prom, 'max(thaw_replay_lag_records{table="ns.metrics"})'),
                        "up": promql(prom, "sum(up)"),
                    }
                    want = {"served": COUNT, "replayed": COUNT, "archived": COUNT, "archive_lag": 0,
                            "consumer_lag": 0, "replay_lag": 0, "up": 3}
                    return got if got == want else print(got)
                got = wait_until("PromQL gives the counts the test produced", counts, 120)
                print(got)
                # The upstream-less serve's table bounds, and a latency histogram with samples.
                assert promql(prom, 'thaw_end_offset{job="serve",topic="metrics",tier="table"}') == COUNT
                assert promql(prom, 'thaw_log_start_offset{job="serve",topic="metrics",tier="table"}') == 0
                assert promql(prom, 'sum(thaw_fetch_latency_seconds_count{job="serve",tier="table"})') >= 1
                assert promql(prom, f'thaw_archive_next_offset{{topic="{target}"}}') == COUNT
                assert promql(prom, 'sum(thaw_commits_total{job="archive"})') >= 1
                assert promql(prom, f'thaw_archive_freshness_seconds{{topic="{target}"}}') is not None
                assert promql(prom, 'thaw_info{job="archive",face="archive"}') == 1
                # g1's consumer left when it closed: an empty group.
                assert promql(prom, 'thaw_group_members{job="serve",group="g1"}') == 0

            for port in (serve_port, replay_port, archive_port):
                assert http_get(f"http://127.0.0.1:{port}/healthz") == (200, "ok\n")
                status, body = http_get(f"http://127.0.0.1:{port}/readyz")
                assert status == 200, body
                assert http_get(f"http://127.0.0.1:{port}/nothing")[0] == 404
            assert "catalog: ok" in http_get(f"http://127.0.0.1:{serve_port}/readyz")[1]
            # Bounded requests: 8 KiB of headers at most.
            with socket.create_connection(("127.0.0.1", serve_port), timeout=10) as s:
                s.sendall(b"GET / HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n")
                assert s.recv(100).startswith(b"HTTP/1.1 431")
    finally:
        for p in procs:
            stop(p)
    archive_log = (tmp_path / "archive.stderr").read_text()
    assert f"metrics on http://127.0.0.1:{archive_port}/metrics" in archive_log, archive_log[-2000:]


def test_status_page_in_headless_chromium(thaw_serve, tmp_path):
    assert os.path.exists(CHROMIUM), "chromium is not installed: make deps-test installs it"
    wh = str(tmp_path / "wh")
    fixtures.value_table(wh, "ns.page", COUNT)
    port = free_port()
    with thaw_serve(fixtures.catalog_uri(wh), [Topic("page", "ns.page", "thaw")],
                    extra=["--metrics", str(port), "--metrics-sample-interval", "200ms"]) as (bootstrap, _proc):
        assert sorted(consume_with_group(bootstrap, "page", "viewer", COUNT)) == list(range(COUNT))
        time.sleep(2.5)  # more samples after the read
        url = f"http://127.0.0.1:{port}/"
        chrome = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  f"--user-data-dir={tmp_path / 'chromium'}"]
        dom = subprocess.run([*chrome, "--dump-dom", url], capture_output=True, text=True, timeout=120)
        assert dom.returncode == 0, dom.stderr[-2000:]
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "status-page.png"
        if shot.exists():
            shot.unlink()
        p = subprocess.run([*chrome, "--window-size=1280,900", "--hide-scrollbars", f"--screenshot={shot}", url],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr[-2000:]
    html = dom.stdout
    assert "<h1>thaw serve</h1>" in html, html[:2000]
    assert 'id="ready">ready<' in html
    # One row for the topic's partition; its charts: served records/s, log start, end offset.
    assert "topic=page partition=0" in html
    charts = re.findall(r'<svg[^>]*data-points="(\d+)"[^>]*>.*?<polyline[^>]*points="([^"]*)"', html, re.S)
    assert len(charts) >= 3, html[:3000]
    for n, pts in charts:
        assert int(n) == len(pts.split()) if pts else int(n) == 0
    # 200 ms samples over at least the 2.5 s wait: every chart has several points.
    assert min(int(n) for n, _ in charts) >= 5, charts
    assert "served records/s" in html and "end offset" in html
    # The read shows as throughput: the served rate's chart peaked above 0.
    peak = re.search(r'served records/s \(tier=table\).*?max ([0-9.e+]+) ·', html, re.S)
    assert peak and float(peak.group(1)) > 0, html[:4000]
    # No script and no external asset.
    assert "<script" not in html and "<link" not in html and not re.search(r'(src|href)="(https?:)?//', html)
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5000


def test_log_format_json_and_bad_options(thaw_bin, tmp_path):
    wh = str(tmp_path / "wh")
    fixtures.value_table(wh, "ns.logs", 3)
    port = free_port()
    proc = start(thaw_bin, ["serve", "--catalog", fixtures.catalog_uri(wh), "--topic", "logs=ns.logs", "--listen",
                            f"127.0.0.1:{port}", "--state", str(tmp_path / "state"), "--log-format", "json"],
                 tmp_path / "serve.stderr")
    try:
        wait_port(port, proc)
    finally:
        stop(proc)
    assert proc.returncode == 128 + signal.SIGTERM  # stopped by stop()'s SIGTERM (docs/cli.md#exit-codes)
    lines = [json.loads(x) for x in (tmp_path / "serve.stderr").read_text().splitlines() if x.strip()]
    assert lines and all(set(x) == {"time", "level", "logger", "message"} for x in lines), lines
    assert any(x["level"] == "info" and "listening on" in x["message"] for x in lines), lines
    assert all(x["logger"] == "thaw serve" for x in lines)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", lines[0]["time"])

    for args, message in ((["--metrics", "nope:x"], "--metrics 'nope:x'"),
                          (["--log-format", "xml"], "--log-format 'xml'"),
                          (["--metrics", "10.255.255.1:1"], "cannot listen")):
        p = subprocess.run([str(thaw_bin), "replay", "--catalog", fixtures.catalog_uri(wh), "--table", "ns.logs",
                            "--brokers", "127.0.0.1:1", "--topic", "x", *args], capture_output=True, text=True,
                           timeout=60)
        assert p.returncode != 0 and message in p.stderr, (args, p.returncode, p.stderr)
