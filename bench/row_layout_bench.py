#!/usr/bin/env python3
"""`thaw archive --layout row` against the canonical layout on the same JSON
topic: wall time, CPU seconds, peak RSS, MB/s of value bytes, and how many
values kept value_raw.

    THAW_BIN=build/bin/thaw .deps/venv/bin/python bench/row_layout_bench.py [RECORDS]

Starts its own broker (scripts/kafka.sh), produces RECORDS (default 200,000)
JSON objects of about 300 bytes over 4 partitions -- nested object, array,
strings, numbers; every 10th with extra whitespace (so it keeps value_raw) --
then archives the topic twice into new tables of one SQLite catalog. Prints
one JSON line.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))

from kafka_broker import KafkaBroker  # noqa: E402

import fixtures  # noqa: E402


def value(i: int) -> bytes:
    doc = {"id": i, "user": f"user-{i % 977}", "amount": (i % 10000) / 8, "ok": i % 3 == 0,
           "tags": [f"t{i % 7}", f"t{i % 11}"], "addr": {"city": f"city-{i % 101}", "zip": 10000 + i % 89999},
           "note": "x" * (120 + i % 50)}
    if i % 10 == 9:
        return json.dumps(doc).encode()  # ", " and ": ": not what the reader re-encodes
    return json.dumps(doc, separators=(",", ":")).encode()


def timed_archive(args: list[str], d: str, name: str):
    """Runs one `thaw archive ... --json` (output in D/NAME.out, .err); returns (wall seconds, its rusage
    from wait4, the JSON summary, stderr bytes), or None after printing the end of stderr when it failed."""
    out_path, err_path = os.path.join(d, f"{name}.out"), os.path.join(d, f"{name}.err")
    t = time.monotonic()
    with open(out_path, "wb") as o, open(err_path, "wb") as e:
        p = subprocess.Popen(args, stdout=o, stderr=e, stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    stdout, stderr = open(out_path, "rb").read(), open(err_path, "rb").read()
    if os.waitstatus_to_exitcode(status) != 0:
        print(stderr.decode(errors="replace")[-3000:], file=sys.stderr)
        return None
    return wall, ru, json.loads(stdout), stderr


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    thaw = os.environ.get("THAW_BIN", str(REPO / "build" / "bin" / "thaw"))
    with tempfile.TemporaryDirectory() as d:
        broker = KafkaBroker.start(os.path.join(d, "kafka"))
        try:
            topic = "rowbench"
            broker.create_topic(topic, 4)
            prod = broker.producer(linger_ms=20)
            value_bytes = 0
            for i in range(n):
                v = value(i)
                value_bytes += len(v)
                prod.produce(topic, key=str(i).encode(), value=v, partition=i % 4)
                if i % 1000 == 999:
                    prod.poll(0)
            prod.flush(120)
            wh = os.path.join(d, "wh")
            os.makedirs(wh)
            fixtures.open_catalog(wh)
            uri = fixtures.catalog_uri(wh)
            out = {"records": n, "value_mb": round(value_bytes / 1e6, 1)}
            for layout in ("thaw", "row"):
                args = [thaw, "archive", "--brokers", broker.bootstrap, "--topic", topic, "--catalog", uri,
                        "--table", f"ns.{layout}", "--create", "--warehouse", wh, "--layout", layout, "--json"]
                run = timed_archive(args, d, layout)
                if run is None:
                    return 1
                wall, ru, summary, stderr = run
                out[layout] = {"wall_s": round(wall, 2), "mb_per_s": round(value_bytes / 1e6 / wall, 1),
                               "cpu_s": round(ru.ru_utime + ru.ru_stime, 2), "peak_rss_mib": ru.ru_maxrss // 1024,
                               "records": summary.get("records")}
                log = [ln for ln in stderr.decode(errors="replace").splitlines() if "value_raw" in ln]
                if log:
                    out[layout]["log"] = log[-1][-160:]
            print(json.dumps(out))
        finally:
            broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
