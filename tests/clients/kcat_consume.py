#!/usr/bin/env python3
"""kcat (Debian's, librdkafka 2.0.2) as a consumer driver: runs kcat with -J
and prints each record in the format of jsonl.py.

    kcat_consume.py -b HOST:PORT -t TOPIC [-p P] [--start beginning|OFFSET|s@MS]
                    [--group G] [--count N] [--timeout S] [-X prop=value]...
    kcat_consume.py -b HOST:PORT --metadata [-t TOPIC]     (kcat -L -J, printed as is)

Without --group: `kcat -C -t TOPIC [-p P] -o START -e -J` reads every
partition to its end (-e) and exits. With --group: `kcat -G GROUP TOPIC`
(balanced consumer group, librdkafka's default assignors, offsets committed by
kcat's auto commit, auto.offset.reset=earliest); -e makes it exit once every
assigned partition is at its end; --count N stops after N records (-c N).

Limits of kcat -J, and how they are handled:
  * key and payload are printed as JSON strings holding the raw bytes (only
    quotes, backslashes and control characters escaped), not valid UTF-8 for
    binary data; the line is decoded with errors="surrogateescape" and each
    string encoded back the same way, which restores the bytes exactly.
  * null and empty are distinct in -J ("key": null vs ""); headers are a flat
    [k1, v1, k2, v2, ...] list with null values kept. (kcat -f '%k' / '%h'
    print a null key as nothing and a null header value as "NULL", so -f
    cannot tell them from empty / the literal text; this driver never uses -f.)
  * "tstype" is "create", "logappend" or "none".
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonl import emit, fail  # noqa: E402

TS_TYPES = {"create": "CreateTime", "logappend": "LogAppendTime", "none": None}


def raw(s):
    return None if s is None else s.encode("utf-8", "surrogateescape")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-b", "--bootstrap", required=True)
    ap.add_argument("-t", "--topic", action="append", default=[])
    ap.add_argument("-p", "--partition", type=int)
    ap.add_argument("--start", default="beginning", help="beginning | end | OFFSET | s@MS (kcat -o)")
    ap.add_argument("--group")
    ap.add_argument("--count", type=int, help="stop after N records (kcat -c)")
    ap.add_argument("--no-eof-exit", action="store_true", help="do not pass -e (tail until --count)")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--metadata", action="store_true")
    ap.add_argument("-X", action="append", default=[])
    a = ap.parse_args()

    base = ["kcat", "-b", a.bootstrap, "-q"] + [x for p in a.X for x in ("-X", p)]
    if a.metadata:
        cmd = base + ["-L", "-J"] + (["-t", a.topic[0]] if a.topic else [])
        p = subprocess.run(cmd, capture_output=True, timeout=a.timeout)
        if p.returncode != 0:
            fail(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode(errors='replace')}")
        sys.stdout.write(p.stdout.decode() + ("\n" if not p.stdout.endswith(b"\n") else ""))
        return
    if not a.topic:
        fail("--topic is required")
    if a.group:
        cmd = base + ["-G", a.group, *a.topic, "-J", "-X", "auto.offset.reset=earliest"]
    else:
        if len(a.topic) != 1:
            fail("without --group kcat reads one topic (-t)")
        cmd = base + ["-C", "-t", a.topic[0], "-o", a.start, "-J"]
        if a.partition is not None:
            cmd += ["-p", str(a.partition)]
    if not a.no_eof_exit:
        cmd.append("-e")
    if a.count is not None:
        cmd += ["-c", str(a.count)]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=a.timeout)
    except subprocess.TimeoutExpired as e:
        fail(f"{' '.join(cmd)} did not finish within {a.timeout} s; stderr: "
             f"{(e.stderr or b'').decode(errors='replace')[-2000:]}")
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.decode(errors='replace')[-4000:]}")
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        j = json.loads(line.decode("utf-8", "surrogateescape"))
        h = j.get("headers") or []
        headers = [(h[i].encode("utf-8", "surrogateescape").decode("utf-8"), raw(h[i + 1]))
                   for i in range(0, len(h), 2)]
        ts = j.get("ts")
        tt = TS_TYPES.get(j.get("tstype"))
        emit(j["topic"], j["partition"], j["offset"], ts if tt else None, tt, raw(j.get("key")),
             raw(j.get("payload")), headers)
    if a.group and p.stderr:
        sys.stderr.write(p.stderr.decode(errors="replace"))


if __name__ == "__main__":
    main()
