#!/usr/bin/env python3
"""`thaw maintain` on a table of many small commits: wall time of --compact,
--expire-snapshots-older-than 0s and --remove-orphans --dry-run.

    THAW_BIN=build/bin/thaw .deps/venv/bin/python bench/maintain_small_files.py [APPENDS]

The table is tests/integration/test_maintain.py's: 3 Kafka partitions, 40
records each, written by pyiceberg in APPENDS appends (default 100; one data
file per partition per append). Prints one JSON line.
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

import fixtures  # noqa: E402
import test_maintain as tm  # noqa: E402


def main() -> int:
    appends = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    thaw = os.environ.get("THAW_BIN", str(REPO / "build" / "bin" / "thaw"))
    with tempfile.TemporaryDirectory() as d:
        wh, cat, name, want = tm.build(pathlib.Path(d), appends=appends)
        files = len(tm.live_data_files(cat, name))

        def run(*args):
            t = time.monotonic()
            p = subprocess.run([thaw, "maintain", "--catalog", fixtures.catalog_uri(wh), "--table", name, *args,
                                "--json"], capture_output=True, check=True)
            return json.loads(p.stdout), time.monotonic() - t

        c, cs = run("--compact")
        e, es = run("--expire-snapshots-older-than", "0s")
        o, os_ = run("--remove-orphans", "--orphan-older-than", "0s", "--dry-run")
        print(json.dumps({
            "appends": appends, "records": len(want), "data_files_before": files,
            "compact": {"files_rewritten": c["compaction"]["files_rewritten"],
                        "files_written": c["compaction"]["files_written"], "wall_s": round(cs, 2)},
            "expire": {"snapshots": e["expire"]["snapshots_expired"], "files_deleted": e["expire"]["files_deleted"],
                       "wall_s": round(es, 2)},
            "orphans_dry_run": {"found": len(o["orphans"]["files"]), "wall_s": round(os_, 2)},
        }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
