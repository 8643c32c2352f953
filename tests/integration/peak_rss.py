"""Peak RSS of a command, as the kernel counts it, for the memory tests.

run_measured(cmd, stdout, stderr_path, timeout, abort_rss) runs `cmd` and
returns (exit code, peak RSS in bytes, seconds, why it was killed or None)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


# ru_maxrss of a process counts the memory of the process it was forked from: Linux keeps, across
# execve, the high-water mark of the address space the child had before (the parent's pages, copied or
# shared by vfork). Started from pytest -- which holds the gigabyte it built the tables with -- thaw's
# ru_maxrss would be pytest's RSS. So a fresh small Python starts thaw and reports thaw's rusage
# (os.wait4, the kernel's own figure) into a file.
_SPAWN = r"""
import os, subprocess, sys, threading, time
out, timeout, abort_rss, cmd = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
p = subprocess.Popen(cmd)
why = []
def watch():
    deadline = time.monotonic() + timeout
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                rss = next((int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS:")), 0)
        except OSError:
            return
        if rss > abort_rss or time.monotonic() > deadline:
            why.append("rss" if rss > abort_rss else "timeout")
            p.kill()
            return
        time.sleep(0.1)
threading.Thread(target=watch, daemon=True).start()
_, status, ru = os.wait4(p.pid, 0)
with open(out, "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {ru.ru_maxrss * 1024} {why[0] if why else '-'}\n")
"""


def run_measured(cmd: list[str], stdout, stderr_path: Path, timeout: float,
                 abort_rss: int = 4 << 30) -> tuple[int, int, float, str | None]:
    """Runs cmd (through _SPAWN); returns (exit code, peak RSS bytes from wait4, seconds, why it was killed:
    None, "timeout" after `timeout` seconds, or "rss" past abort_rss)."""
    rusage = stderr_path.with_suffix(".rusage")
    t0 = time.monotonic()
    with open(stderr_path, "wb") as err:
        p = subprocess.Popen([sys.executable, "-c", _SPAWN, str(rusage), str(timeout), str(abort_rss), *cmd],
                             stdout=stdout, stderr=err, stdin=subprocess.DEVNULL)
        try:
            p.wait(timeout + 60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    seconds = time.monotonic() - t0
    if p.returncode != 0 or not rusage.exists():
        raise AssertionError(f"the spawner of {cmd[:2]} exited {p.returncode}:\n"
                             f"{stderr_path.read_text(errors='replace')[-3000:]}")
    rc, peak, killed = rusage.read_text().split()
    return int(rc), int(peak), seconds, None if killed == "-" else killed
