#!/usr/bin/env python3
"""The benchmarks at a glance (issue 19): one table of figures against their peers and targets.

Each bench section appends rows, one JSON object a line, to a rows file (scripts/bench.sh: THAW_BENCH_RESULTS,
default bench/.work/bench-results.jsonl, emptied at its start). A row:

  {"key": "serve.cold", "measure": ..., "peer": ..., "thaw": "245.2 MB/s", "peer_value": "638.0 MB/s",
   "ratio": "0.38×", "ratio_x": 0.384, "value": null, "target": "≥ 0.7×", "met": "no",
   "date": "2026-11-30", "command": "bench/serve_bench.sh", "qualifier": null, "note": null}

The measures, their peers and their targets live in one place, bench/targets.json, keyed by "key"; "met" is
worked out from its "check" when the row is recorded. The table rendered from the rows (--markdown) is the one
docs/benchmarks.md opens with, and `make bench` prints it at its end.

  summary.py --markdown ROWS [--missing]   the table as Markdown (--missing: a "not measured" row for every
                                           measure make bench runs that has no row in ROWS)
  summary.py --text ROWS [--missing]       the same, as aligned plain text
  summary.py parse KIND LOG [--rows ROWS] [--command CMD] [--env-prefix PREFIX]
                                           append the rows found in the output LOG of a bench script that does
                                           not write rows itself: KIND is replay (bench/replay_bench.sh), serve
                                           (bench/serve_bench.sh), objstore (bench/object_store_bench.sh),
                                           archive (bench/.work/archive_bench.results of bench/archive_bench.sh),
                                           tiered (bench/.work/tiered_bench.results of bench/tiered_bench.sh)
                                           or overlap (bench/overlap_memory.py); CMD, with the PREFIX* variables
                                           set in the environment before it, is the row's command

From Python (the snippets in scripts/bench.sh, with bench/ on sys.path):

  import summary; summary.record("read.seek", thaw="86.5 ms", value=86.5, command="make bench")

Python standard library only.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import shlex
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGETS_FILE = HERE / "targets.json"
DEFAULT_ROWS = HERE / ".work" / "bench-results.jsonl"
COLUMNS = ("measure", "peer", "Thaw", "peer figure", "ratio", "target", "met?", "date", "command")


def load_targets() -> dict:
    with open(TARGETS_FILE, encoding="utf-8") as f:
        return {m["key"]: m for m in json.load(f)["measures"]}


TARGETS = load_targets()


def rows_path(rows=None) -> Path:
    return Path(rows or os.environ.get("THAW_BENCH_RESULTS") or DEFAULT_ROWS)


def fmt_ratio(x: float) -> str:
    return f"{x:.3f}×" if abs(x) < 0.1 else f"{x:.2f}×"


def judge(key: str, ratio_x=None, value=None, limit=None) -> str:
    """'yes' / 'no' against the measure's target, 'not measured' without the figure the check needs, '—' when
    no target is set."""
    check = TARGETS[key].get("check")
    if not check:
        return "—"
    if check["on"] == "given":
        return "not measured"
    x = ratio_x if check["on"] == "ratio" else value
    lim = check.get("limit") if limit is None else limit
    if x is None or lim is None or (isinstance(x, float) and math.isnan(x)):
        return "not measured"
    ok = x >= lim if check["op"] == ">=" else x <= lim
    return "yes" if ok else "no"


def make_row(key: str, *, thaw: str, command: str, peer_value: str = "—", ratio=None, ratio_text=None,
             value=None, limit=None, met=None, qualifier=None, note=None, date=None) -> dict:
    t = TARGETS[key]
    return {"key": key, "measure": t["measure"], "peer": t["peer"], "thaw": thaw, "peer_value": peer_value,
            "ratio": ratio_text or (fmt_ratio(ratio) if ratio is not None else "—"),
            "ratio_x": ratio, "value": value, "target": t["target"],
            "met": met or judge(key, ratio, value, limit),
            "date": date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "command": command, "qualifier": qualifier, "note": note}


def record(key: str, *, rows=None, **kw) -> dict:
    """Appends one row (see make_row for the fields) to the rows file; returns it."""
    row = make_row(key, **kw)
    p = rows_path(rows)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "a", encoding="utf-8") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return row


# ------------------------------------------------------------------------------------------------ rendering
def read_rows(path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                print(f"summary: {path}:{n}: not a JSON row ({e}); skipped", file=sys.stderr)
    return rows


def ordered(rows: list[dict], missing: bool) -> list[dict]:
    """Rows in targets.json's order (a measure's rows in the order they were recorded), rows of unknown keys
    last; with missing, a 'not measured' row for each make-bench measure without one."""
    by_key: dict[str, list[dict]] = {}
    for r in rows:
        by_key.setdefault(r.get("key", ""), []).append(r)
    out = []
    for key, t in TARGETS.items():
        if key in by_key:
            out += by_key.pop(key)
        elif missing and t.get("make_bench"):
            out.append({"key": key, "thaw": "—", "peer_value": "—", "ratio": "—",
                        "met": "not measured" if t.get("check") else "—", "date": "—", "command": "make bench"})
    for rs in by_key.values():
        out += rs
    return out


def cells(r: dict) -> list[str]:
    t = TARGETS.get(r.get("key", ""), {})
    measure = t.get("measure") or r.get("measure") or r.get("key", "?")
    if r.get("qualifier"):
        measure += f" — {r['qualifier']}"
    return [measure, t.get("peer") or r.get("peer") or "—", r.get("thaw") or "—", r.get("peer_value") or "—",
            r.get("ratio") or "—", t.get("target") or r.get("target") or "—", r.get("met") or "—",
            r.get("date") or "—", r.get("command") or "—"]


def notes(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        if r.get("note"):
            c = cells(r)
            out.append(f"{c[0]}: {r['note']}")
    return out


def markdown(rows: list[dict]) -> str:
    def esc(s: str) -> str:
        return str(s).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(COLUMNS) + " |", "|---|---|---:|---:|---:|---|---|---|---|"]
    for r in rows:
        c = cells(r)
        if c[6] in ("yes", "no"):
            c[6] = f"**{c[6]}**" if c[6] == "no" else c[6]
        # Commands are code; a cell holding an inline code span of its own is left as it is.
        if c[8] != "—" and "`" not in c[8]:
            c[8] = f"`{c[8]}`"
        lines.append("| " + " | ".join(esc(x) for x in c) + " |")
    ns = notes(rows)
    if ns:
        lines.append("")
        lines += [f"- {esc(n)}" for n in ns]
    return "\n".join(lines)


def text(rows: list[dict]) -> str:
    table = [list(COLUMNS)] + [cells(r) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip() for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    ns = notes(rows)
    if ns:
        lines.append("")
        lines += [f"- {n}" for n in ns]
    return "\n".join(lines)


# ------------------------------------------------------------------- rows from the bench scripts' output
def _f(s: str) -> float:
    return float(s.replace(",", ""))


def _span(xs, unit: str, digits: int = 1) -> str:
    lo, hi = min(xs), max(xs)
    return f"{lo:.{digits}f} {unit}" if lo == hi else f"{lo:.{digits}f}–{hi:.{digits}f} {unit}"


def parse_replay(log: str) -> list[dict]:
    """bench/replay_bench.sh's summary: per case, the three producers' lines and the ratios."""
    out, case = [], None
    label_re = re.compile(r"^  (kafka-producer-perf-test \(a\)|thaw replay \(b\)|pyiceberg \+ confluent-kafka \(c\)|"
                          r"thaw replay, unpartitioned table)\s+([\d.]+)\s+([\d,]+)\s+([\d.]+)\s+(\d+) MiB\s+"
                          r"([\d.]+)\s+([\d.]+)")
    cases = []
    for line in log.splitlines():
        m = re.match(r"^replay (\S+): ([\d,]+) records", line)
        if m:
            size = re.sub(r"^(\d+)(KiB|B)$", r"\1 \2", m.group(1))
            case = {"name": f"{m.group(2)} × {size}", "tools": {}}
            cases.append(case)
            continue
        if case is None:
            continue
        m = label_re.match(line)
        if m:
            case["tools"][m.group(1).split(" (")[0]] = {
                "mb_s": _f(m.group(2)), "rss": _f(m.group(5)), "cpu_gb": _f(m.group(7)),
                "limited": "records only" in line}
            continue
        if m := re.search(r"thaw / perf-test: ([\d.]+)x MB/s", line):
            case["perf_x"] = _f(m.group(1))
        if m := re.search(r"thaw / script:\s+([\d.]+)x MB/s.*CPU per GB ([\d.]+)x", line):
            case["script_x"], case["cpu_x"] = _f(m.group(1)), _f(m.group(2))
        if m := re.search(r"unpartitioned / partitioned: ([\d.]+)x MB/s", line):
            case["unpart_x"] = _f(m.group(1))
        if m := re.search(r"thaw peak RSS:\s+(\d+) MiB \(max over runs (\d+) MiB\)", line.replace("   (", " (")):
            case["rss"], case["rss_max"] = _f(m.group(1)), _f(m.group(2))
    for c in cases:
        t = c["tools"]
        th, pf, sc = t.get("thaw replay"), t.get("kafka-producer-perf-test"), t.get("pyiceberg + confluent-kafka")
        q = c["name"]
        if th and pf and "perf_x" in c:
            out.append(dict(key="replay.perf", qualifier=q, thaw=f"{th['mb_s']:.1f} MB/s",
                            peer_value=f"{pf['mb_s']:.1f} MB/s", ratio=c["perf_x"]))
        if th and sc and "script_x" in c:
            lim = "; the script on its first records only (REPLAY_SCRIPT_LIMIT)" if sc["limited"] else ""
            out.append(dict(key="replay.script", qualifier=q, thaw=f"{th['mb_s']:.1f} MB/s",
                            peer_value=f"{sc['mb_s']:.1f} MB/s", ratio=c["script_x"], note=lim[2:] or None))
            out.append(dict(key="replay.cpu", qualifier=q, thaw=f"{th['cpu_gb']:.1f} CPU s/GB",
                            peer_value=f"{sc['cpu_gb']:.1f} CPU s/GB", ratio=c["cpu_x"], note=lim[2:] or None))
        if th and pf:
            rss = c.get("rss", th["rss"])
            out.append(dict(key="replay.peak_rss", qualifier=q, thaw=f"{rss:.0f} MiB",
                            peer_value=f"{pf['rss']:.0f} MiB", ratio=rss / pf["rss"] if pf["rss"] else None,
                            value=rss,
                            note=f"max over runs {c['rss_max']:.0f} MiB" if c.get("rss_max", rss) > rss else None))
        un = t.get("thaw replay, unpartitioned table")
        if th and un and "unpart_x" in c:
            out.append(dict(key="replay.unpart", thaw=f"{un['mb_s']:.1f} MB/s", peer_value=f"{th['mb_s']:.1f} MB/s",
                            ratio=c["unpart_x"]))
    return out


def parse_size_mib(s: str):
    m = re.fullmatch(r"\s*([\d.]+)\s*(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB|k|K|m|M|g|G)?\s*", s or "")
    if not m:
        return None
    mult = {None: 1 / 2**20, "B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024, "TiB": 2**20,
            "KB": 1e3 / 2**20, "MB": 1e6 / 2**20, "GB": 1e9 / 2**20, "TB": 1e12 / 2**20,
            "k": 1 / 1024, "K": 1 / 1024, "m": 1, "M": 1, "g": 1024, "G": 1024}[m.group(2)]
    return float(m.group(1)) * mult


def parse_serve(log: str) -> list[dict]:
    """bench/serve_bench.sh's summary."""
    srv, seek, conc = {}, {}, {}
    r = {}
    for line in log.splitlines():
        m = re.match(r"^  (Kafka broker \(b\)|thaw serve, cold cache \(a\)|thaw serve, warm cache \(a\))\s+([\d.]+)\s+"
                     r"[\d,]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+errors (\d+)", line)
        if m:
            k = "kafka" if m.group(1).startswith("Kafka") else ("cold" if "cold" in m.group(1) else "warm")
            srv[k] = {"mb_s": _f(m.group(2)), "cpu_gb": _f(m.group(3)), "errors": int(m.group(4))}
            continue
        if m := re.search(r"warm / broker: ([\d.]+)x MB/s.*cold / broker: ([\d.]+)x", line):
            r["warm"], r["cold"] = _f(m.group(1)), _f(m.group(2))
        if m := re.search(r"CPU per GB, thaw / broker: warm ([\d.]+)x, cold ([\d.]+)x", line):
            r["cpu_warm"], r["cpu_cold"] = _f(m.group(1)), _f(m.group(2))
        if m := re.search(r"first record after a seek into the middle, (Kafka broker|thaw serve \(new process\)"
                          r"( on the table thaw archive wrote)?): median ([\d.]+) ms", line):
            seek["kafka" if m.group(1).startswith("Kafka") else ("archived" if m.group(2) else "thaw")] = _f(m.group(3))
        if m := re.search(r"(\d+) concurrent consumers, (Kafka broker|thaw serve \(new process\)): ([\d.]+) MB/s "
                          r"aggregate, .*?errors (\d+), server peak RSS (\d+) MiB", line):
            c = {"n": int(m.group(1)), "mb_s": _f(m.group(3)), "errors": int(m.group(4)), "rss": _f(m.group(5))}
            if t := re.search(r"\(target <= 512 MiB \+ the cache ?([^)]*)\)", line):
                c["cache"] = t.group(1).strip()
            conc["kafka" if m.group(2).startswith("Kafka") else "thaw"] = c
    out = []
    k = srv.get("kafka")
    for mode in ("warm", "cold"):
        if k and mode in srv and mode in r:
            out.append(dict(key=f"serve.{mode}", thaw=f"{srv[mode]['mb_s']:.1f} MB/s", peer_value=f"{k['mb_s']:.1f} MB/s",
                            ratio=r[mode], note=f"{srv[mode]['errors']} consumer errors" if srv[mode]["errors"] else None))
        if k and mode in srv and f"cpu_{mode}" in r:
            out.append(dict(key=f"serve.cpu_{mode}", thaw=f"{srv[mode]['cpu_gb']:.2f} CPU s/GB",
                            peer_value=f"{k['cpu_gb']:.2f} CPU s/GB", ratio=r[f"cpu_{mode}"]))
    if "thaw" in seek:
        out.append(dict(key="serve.seek", thaw=f"{seek['thaw']:.1f} ms",
                        peer_value=f"{seek['kafka']:.1f} ms" if "kafka" in seek else "—", value=seek["thaw"]))
    if "archived" in seek:
        out.append(dict(key="serve.seek_archived", thaw=f"{seek['archived']:.1f} ms",
                        peer_value=f"{seek['kafka']:.1f} ms" if "kafka" in seek else "—", value=seek["archived"]))
    if "thaw" in conc:
        t, kc = conc["thaw"], conc.get("kafka")
        cache = t.get("cache")
        # An empty SERVE_BENCH_CACHE leaves thaw serve's default --cache-size, 1 GiB (docs/serve.md).
        cache_mib = parse_size_mib(cache) if cache else 1024.0
        limit = 512 + cache_mib if cache_mib is not None else None
        errs = t["errors"] + (kc["errors"] if kc else 0)
        out.append(dict(key="serve.concurrent",
                        thaw=f"{t['rss']:.0f} MiB; {t['mb_s']:.1f} MB/s, {t['errors']} errors",
                        peer_value=f"{kc['rss']:.0f} MiB; {kc['mb_s']:.1f} MB/s, {kc['errors']} errors" if kc else "—",
                        ratio=t["mb_s"] / kc["mb_s"] if kc and kc["mb_s"] else None,
                        ratio_text=f"{fmt_ratio(t['mb_s'] / kc['mb_s'])} MB/s" if kc and kc["mb_s"] else None,
                        value=t["rss"], limit=limit,
                        met=("no" if t["errors"] else None),
                        note=(f"{t['n']} consumers; cache {cache or '1GiB (default)'}: limit {limit:.0f} MiB"
                              if limit else f"cache size {cache!r} not understood") + (
                            f"; {errs} consumer errors" if errs else "")))
    return out


def parse_objstore(log: str) -> list[dict]:
    """bench/object_store_bench.sh's summaries (one per value kind and placement)."""
    cases = []  # (op, store, kind, placement, ratio, streaming, thaw MB/s, local MB/s)
    reqs = []   # (source, HEAD counts, GET counts, expected GETs per file)
    peer = []   # issue 19: {"key", "qualifier", "ratio", "thaw", "peer", "desc"}: the peers, serve, the latency
    duckdb_missing = None
    blk = op = None
    mbs = {}
    for line in log.splitlines():
        m = re.match(r"^object store: ([\d,]+) records \((.*?)\) in (\d+) data files \(.*?([\d,]+)-row row groups\).*"
                     r"placement (shared|split)", line)
        if m:
            n, files, rg = _f(m.group(1)), int(m.group(3)), _f(m.group(4))
            blk = {"kind": "JSON" if "JSON" in m.group(2) else "random", "placement": m.group(5),
                   "gets": 1 + math.ceil(n / files / rg) if files and rg else None,
                   "mb": None}
            if mm := re.search(r"\((\d+) MB of Parquet", line):
                blk["mb"] = int(mm.group(1))
            op, mbs = None, {}
            continue
        if blk is None:
            continue
        if line.startswith("  thaw replay into"):
            op, mbs = "replay", {}
            continue
        if line.startswith("  full read"):
            op, mbs = "read", {}
            continue
        # Issue 19's blocks: the read's peers, thaw serve, the targets against them and the latency's cost.
        for head, o in (("  peer: pyarrow", "pyarrow"), ("  peer: DuckDB", "duckdb"), ("  thaw serve, cold", "serve"),
                        ("  targets against the peers", "peers"), ("  targets, the latency's cost", "latency")):
            if line.startswith(head):
                op = o
                break
        else:
            o = None
        if o:
            continue
        if op in ("serve", "peers", "latency"):
            _objstore_peer_line(line, op, blk, peer)
            if m := re.match(r"^    target thaw/duckdb from the stores: not measured \((.*)\)$", line):
                duckdb_missing = m.group(1)
            continue
        if op not in ("replay", "read"):
            continue
        if m := re.match(r"^    target (\S+?)\+relay\+([\d.]+)ms: ([\d.]+)x local", line):
            st = re.search(r"once streaming ([\d.]+)x", line)
            src = f"{m.group(1)}+relay+{m.group(2)}ms"
            cases.append({"op": op, "store": m.group(1), "latency": m.group(2), **blk, "ratio": _f(m.group(3)),
                          "streaming": _f(st.group(1)) if st else None, "thaw": mbs.get(src),
                          "local": mbs.get("local")})
            continue
        if m := re.match(r"^    (\S+)\s+([\d.]+) MB/s\s+[\d.]+ s\s+x local", line):
            mbs[m.group(1)] = _f(m.group(2))
            if rq := re.search(r"per data file \[([\d, ]*)\] \(HEAD \[([\d, ]*)\], GET \[([\d, ]*)\]\)", line):
                ints = [[int(x) for x in g.split(",") if x.strip()] for g in rq.groups()]
                reqs.append((m.group(1), ints[1], ints[2], blk["gets"]))
    out = []
    for o in ("replay", "read"):
        for store in dict.fromkeys(c["store"] for c in cases if c["op"] == o):
            cs = [c for c in cases if c["op"] == o and c["store"] == store]
            lo = min(c["ratio"] for c in cs)
            hi = max(c["ratio"] for c in cs)
            missed = [c for c in cs if c["ratio"] < 0.8]
            rt = (f"{lo:.2f}×" if lo == hi else f"{lo:.2f}–{hi:.2f}×") + (f" ({len(cs)} cases)" if len(cs) > 1 else "")
            th = [c["thaw"] for c in cs if c["thaw"] is not None]
            lc = [c["local"] for c in cs if c["local"] is not None]
            desc = lambda c: f"{c['mb'] or '?'} MB {c['kind']}/{c['placement']}"  # noqa: E731
            note = []
            if missed:
                note.append(f"met in {len(cs) - len(missed)} of {len(cs)} cases; missed: "
                            + ", ".join(f"{desc(c)} {c['ratio']:.2f}×" for c in missed))
            if o == "read" and any(c["streaming"] is not None for c in cs):
                sts = [c["streaming"] for c in cs if c["streaming"] is not None]
                note.append("once streaming " + (f"{min(sts):.2f}×" if min(sts) == max(sts)
                                                 else f"{min(sts):.2f}–{max(sts):.2f}×"))
            lat = cs[0]["latency"]
            q = f"{store}" + ("" if lat == "20" else f" (+{lat} ms, not the target's 20 ms)")
            out.append(dict(key=f"objstore.{o}", qualifier=q, thaw=_span(th, "MB/s") if th else "—",
                            peer_value=_span(lc, "MB/s") if lc else "—", ratio=lo, ratio_text=rt,
                            met=None if lat == "20" else "not measured", note="; ".join(note) or None))
    if reqs:
        heads = sorted({h for _, hs, _, _ in reqs for h in hs})
        gets = sorted({g for _, _, gs, _ in reqs for g in gs})
        extra = [(s, gs, e) for s, hs, gs, e in reqs if any(hs) or (e is not None and any(g > e for g in gs))]
        unknown = any(e is None for *_, e in reqs)
        out.append(dict(key="objstore.requests",
                        thaw=f"GET {'/'.join(map(str, gets))}, HEAD {'/'.join(map(str, heads))} per data file",
                        met="no" if extra else ("not measured" if unknown else "yes"),
                        note=("expected 1 footer GET + 1 GET per row group, no HEAD"
                              + (f"; more in {len(extra)} of {len(reqs)} proxied rows" if extra else ""))))
    out += _objstore_peer_rows(peer)
    if duckdb_missing and not any(p["key"] == "objstore.read_duckdb" and p["qualifier"] != "local" for p in peer):
        out.append(dict(key="objstore.read_duckdb", thaw="—", met="not measured",
                        note=f"DuckDB from the stores not measured: {duckdb_missing}"))
    return out


def _objstore_peer_line(line: str, op: str, blk: dict, peer: list) -> None:
    """One line of object_store_bench.py's issue 19 target blocks, into `peer`."""
    desc = f"{blk['mb'] or '?'} MB {blk['kind']}/{blk['placement']}"

    def source(s: str):
        """(store, variant): variant "" for the store directly, "+N ms" behind the relay with N ms, None else."""
        if m := re.fullmatch(r"(\S+?)\+relay\+([\d.]+)ms", s):
            return m.group(1), m.group(2)
        if s == "local" or s.endswith("+relay"):
            return None, None
        return s, ""

    def add(key, qualifier, ratio, thaw, other):
        peer.append({"key": key, "qualifier": qualifier, "ratio": ratio, "thaw": thaw, "peer": other, "desc": desc})

    if op == "serve" and (m := re.match(r"^    target serve (\S+): ([\d.]+)x local cold.*?; ([\d.]+) MB/s vs "
                                        r"([\d.]+) MB/s", line)):
        st, lat = source(m.group(1))
        if st:
            add("objstore.serve_cold", st + (f" + {lat} ms per request" if lat else ""), _f(m.group(2)),
                _f(m.group(3)), _f(m.group(4)))
    elif op == "peers" and (m := re.match(r"^    target thaw/(pyarrow|duckdb) (\S+): ([\d.]+)x .*?thaw ([\d.]+) MB/s"
                                          r".*?, (?:pyarrow|duckdb) ([\d.]+) MB/s", line)):
        st, lat = source(m.group(2))
        if st:
            add(f"objstore.read_{m.group(1)}", st + (f" + {lat} ms per request" if lat else ""), _f(m.group(3)),
                _f(m.group(4)), _f(m.group(5)))
    elif op == "latency" and (m := re.match(r"^    target latency (\S+) (replay|read|serve): ([\d.]+)x without.*?; "
                                            r"([\d.]+) MB/s vs ([\d.]+) MB/s", line)):
        what = {"replay": "thaw replay", "read": "full read", "serve": "thaw serve cold"}[m.group(2)]
        add("objstore.latency", f"{what} — {m.group(1)}", _f(m.group(3)), _f(m.group(4)), _f(m.group(5)))


def _objstore_peer_rows(peer: list) -> list[dict]:
    """Rows of the issue 19 measures: one per (measure, qualifier), ranges over the cases (tables, placements)."""
    out = []
    for key, q in dict.fromkeys((p["key"], p["qualifier"]) for p in peer):
        cs = [p for p in peer if p["key"] == key and p["qualifier"] == q]
        lo, hi = min(c["ratio"] for c in cs), max(c["ratio"] for c in cs)
        check = TARGETS[key].get("check") or {}
        lim = check.get("limit")
        missed = [c for c in cs if lim is not None and c["ratio"] < lim] if check.get("op") == ">=" else []
        rt = (f"{lo:.2f}×" if lo == hi else f"{lo:.2f}–{hi:.2f}×") + (f" ({len(cs)} cases)" if len(cs) > 1 else "")
        note = None
        if missed and len(missed) < len(cs):
            note = (f"met in {len(cs) - len(missed)} of {len(cs)} cases; missed: "
                    + ", ".join(f"{c['desc']} {c['ratio']:.2f}×" for c in missed))
        elif len(cs) > 1:
            note = "cases: " + ", ".join(f"{c['desc']} {c['ratio']:.2f}×" for c in cs)
        out.append(dict(key=key, qualifier=q, thaw=_span([c["thaw"] for c in cs], "MB/s"),
                        peer_value=_span([c["peer"] for c in cs], "MB/s"), ratio=lo, ratio_text=rt, note=note))
    return out


def parse_archive(log: str) -> list[dict]:
    """The RESULT lines bench/archive_bench.sh keeps in bench/.work/archive_bench.results."""
    rs = []
    for line in log.splitlines():
        if line.startswith("RESULT "):
            try:
                rs.append(json.loads(line[len("RESULT "):]))
            except json.JSONDecodeError:
                pass

    def median(xs):
        return sorted(xs, key=lambda r: r["seconds"])[len(xs) // 2] if xs else None
    tp = {t: median([r for r in rs if r.get("phase") == "throughput" and r.get("tool") == t])
          for t in ("thaw", "connect")}
    out = []
    th, co = tp["thaw"], tp["connect"]
    if th:
        mb = lambda r: r["bytes"] / r["seconds"] / 1e6  # noqa: E731
        runs = len([r for r in rs if r.get("phase") == "throughput" and r.get("tool") == "thaw"])
        if co:
            out.append(dict(key="archive.throughput", thaw=f"{mb(th):.1f} MB/s", peer_value=f"{mb(co):.1f} MB/s",
                            ratio=co["seconds"] / th["seconds"],
                            note=f"{th['records']:,} records; median of {runs} run{'s' if runs > 1 else ''}"))
        out.append(dict(key="archive.peak_rss", thaw=f"{th['peak_rss_mib']:.0f} MiB",
                        peer_value=f"{co['peak_rss_mib']:.0f} MiB" if co else "—",
                        ratio=th["peak_rss_mib"] / co["peak_rss_mib"] if co else None, value=th["peak_rss_mib"]))
    fr = {r["tool"]: r for r in rs if r.get("phase") == "freshness"}
    if "thaw" in fr:
        t, c = fr["thaw"], fr.get("connect")
        p99 = t.get("p99_s")
        out.append(dict(key="archive.freshness", thaw=f"p99 {p99:.2f} s" if p99 is not None else "no record visible",
                        peer_value=(f"p99 {c['p99_s']:.2f} s" if c and c.get("p99_s") is not None
                                    else ("no record visible" if c else "—")),
                        ratio=p99 / c["p99_s"] if p99 is not None and c and c.get("p99_s") else None,
                        value=p99, met="no" if p99 is None else None,
                        note=f"{t['rate']} records/s for {t['seconds']:.0f} s; p50 {t['p50_s']:.2f} s"
                        if t.get("p50_s") is not None else None))
    return out


def parse_overlap(log: str) -> list[dict]:
    """bench/overlap_memory.py's summary."""
    runs = {}
    ratio = None
    for line in log.splitlines():
        if m := re.match(r"^  (thaw|pyiceberg)\s+peak RSS\s+(\d+) MiB\s+([\d.]+) s", line):
            runs[m.group(1)] = (_f(m.group(2)), _f(m.group(3)))
        if m := re.search(r"ratio pyiceberg/thaw peak RSS ([\d.]+)x", line):
            ratio = _f(m.group(1))
    if "thaw" not in runs:
        return []
    (t, ts), peer = runs["thaw"], runs.get("pyiceberg")
    return [dict(key="overlap.peak_rss", thaw=f"{t:.0f} MiB ({ts:.1f} s)",
                 peer_value=f"{peer[0]:.0f} MiB ({peer[1]:.1f} s)" if peer else "—",
                 ratio=t / peer[0] if peer else None,
                 ratio_text=(f"{fmt_ratio(t / peer[0])} ({ratio:.1f}× less)" if peer and ratio else None),
                 value=t, note="best of 2 runs by peak RSS")]


def parse_tiered(log: str) -> list[dict]:
    """The RESULT lines of bench/tiered_bench.sh (bench/.work/tiered_bench.results): its "summary" rows."""
    s = {}
    for line in log.splitlines():
        if line.startswith("RESULT "):
            try:
                r = json.loads(line[len("RESULT "):])
            except json.JSONDecodeError:
                continue
            if r.get("phase") == "summary":
                s[r["kind"]] = r
    out = []

    def busy(r, note=None):
        b = r.get("busy") or 0
        parts = [x for x in (note, f"other work (tests, compilers) on the machine for up to {b:.0%} of a run"
                             if b else None) if x]
        return "; ".join(parts) or None
    for kind in ("produce", "consume"):
        if r := s.get(kind):
            out.append(dict(key=f"tiered.{kind}", thaw=f"{r['thaw']:.1f} MB/s", peer_value=f"{r['direct']:.1f} MB/s",
                            ratio=r["ratio"], note=busy(r, f"median of {r['runs']} runs" if r["runs"] > 1 else None)))
    for kind in ("produce", "consume"):
        if r := s.get(kind):
            out.append(dict(key="tiered.cpu", qualifier=kind, thaw=f"{r['thaw_cpu_gb']:.2f} CPU s/GB",
                            peer_value=f"{r['broker_cpu_gb']:.2f} CPU s/GB",
                            ratio=r["thaw_cpu_gb"] / r["broker_cpu_gb"]))
    if r := s.get("latency"):
        out.append(dict(key="tiered.latency", thaw=f"{r['added_p99']:+.2f} ms (p99 {r['thaw_p99']:.2f} ms)",
                        peer_value=f"p99 {r['direct_p99']:.2f} ms", value=r["added_p99"],
                        note=busy(r, f"p50 {r['thaw_p50']:.2f} ms via Thaw, {r['direct_p50']:.2f} ms direct")))
    if r := s.get("history"):
        bad = r["records"] != r.get("expected", r["records"]) or r.get("verify") is False
        out.append(dict(key="tiered.history", thaw=f"{r['thaw']:.1f} MB/s", peer_value=f"{r['direct']:.1f} MB/s",
                        ratio=r["ratio"], met="no" if bad else None,
                        note=busy(r, f"warm cache: {', '.join(f'{x:.1f}' for x in r['warm'])} MB/s"
                                  if r.get("warm") else None)))
    if r := s.get("memory"):
        out.append(dict(key="tiered.memory", thaw=f"{r['per_conn_kib']:.1f} KiB",
                        note=f"RSS {r['rss0_mib']:.1f} MiB idle, {r['rss_n_mib']:.1f} MiB with {r['connections']} "
                             f"connections; peak {r['peak_mib']:.0f} MiB (history read included)"))
    return out


PARSERS = {"replay": parse_replay, "serve": parse_serve, "objstore": parse_objstore, "archive": parse_archive,
           "overlap": parse_overlap, "tiered": parse_tiered}


def with_env(command: str, prefixes: list[str]) -> str:
    env = [f"{k}={shlex.quote(v)}" for k, v in sorted(os.environ.items())
           if any(p and k.startswith(p) for p in prefixes)]
    return " ".join(env + [command])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        sys.stdout.reconfigure(encoding="utf-8")
    except (AttributeError, ValueError):
        pass
    if argv and argv[0] == "parse":
        ap = argparse.ArgumentParser(prog="summary.py parse")
        ap.add_argument("kind", choices=sorted(PARSERS))
        ap.add_argument("log")
        ap.add_argument("--rows", help="rows file (default: $THAW_BENCH_RESULTS or bench/.work/bench-results.jsonl)")
        ap.add_argument("--command", default="make bench")
        ap.add_argument("--env-prefix", action="append", default=[],
                        help="put the environment variables starting with this before the command (repeatable)")
        a = ap.parse_args(argv[1:])
        log = Path(a.log).read_text(encoding="utf-8", errors="replace") if Path(a.log).exists() else ""
        found = PARSERS[a.kind](log)
        if not found:
            print(f"summary: no figures found in {a.log} ({a.kind}); its measures show as not measured",
                  file=sys.stderr)
        cmd = with_env(a.command, a.env_prefix)
        for kw in found:
            record(kw.pop("key"), rows=a.rows, command=cmd, **kw)
        return 0
    ap = argparse.ArgumentParser(description="Render benchmark rows as one table (see the module docstring).")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--markdown", metavar="ROWS", help="print the table as Markdown")
    g.add_argument("--text", metavar="ROWS", help="print the table as aligned plain text")
    ap.add_argument("--missing", action="store_true",
                    help="add a 'not measured' row for every make-bench measure without a row")
    a = ap.parse_args(argv)
    path = a.markdown or a.text
    rows = ordered(read_rows(path) if Path(path).exists() else [], a.missing)
    print(markdown(rows) if a.markdown else text(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
