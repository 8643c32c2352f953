"""`make install PREFIX=...`: the installed binary runs on its own.

It is installed into one directory, moved to another (the rpath must be
relative), and run with an empty environment: no build tree, no venv on any
path it could find. It must read a real table, record for record the same as
the build tree's binary.
"""
import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_installed_binary_runs_without_build_tree_or_venv(thaw_bin, small_table, tmp_path):
    build_dir = Path(thaw_bin).resolve().parents[1]
    first = tmp_path / "first"
    r = subprocess.run(["make", "-s", "-C", str(REPO), "install", f"PREFIX={first}", f"BUILD={build_dir}"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    moved = tmp_path / "moved"
    shutil.move(str(first), str(moved))

    binary = moved / "bin" / "thaw"
    libs = sorted(p.name for p in (moved / "lib" / "thaw").iterdir())
    assert any(n.startswith("libarrow.so.") for n in libs), libs
    assert any(n.startswith("libparquet.so.") for n in libs), libs

    # Every library it loads resolves, none from the venv or the build tree.
    ldd = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, env={}).stdout
    assert "not found" not in ldd, ldd
    for line in ldd.splitlines():
        if "libarrow" in line or "libparquet" in line:
            path = Path(line.split("=>")[1].split("(")[0].strip())
            assert path.resolve().parent == moved / "lib" / "thaw", line
    assert ".deps" not in ldd and str(build_dir) not in ldd, ldd

    args = ["inspect", "--catalog", small_table.uri, "--table", small_table.name, "--records", "--format", "json"]
    installed = subprocess.run([str(binary), *args], capture_output=True, env={}, timeout=120)
    assert installed.returncode == 0, installed.stderr
    built = subprocess.run([str(thaw_bin), *args], capture_output=True, timeout=120)
    assert built.returncode == 0, built.stderr
    assert installed.stdout == built.stdout
    assert len(installed.stdout.splitlines()) > 0
