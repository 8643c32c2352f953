"""`make package`: the Debian package installs, runs and goes away cleanly.

The .deb is built from the build tree the tests use (`make package
BUILD=<dir of $THAW_BIN>`: the binary is already built, so this is the man
pages and cpack, some 20 seconds), or taken from $THAW_DEB. It is installed on
this machine with `dpkg -i`, so the test needs root (CI runs as root); it
checks the files, the systemd units (`systemd-analyze verify`), the man pages,
`thaw --version` and a real replay into Kafka from /usr/bin/thaw with an
empty environment, runs the serve unit's command as systemd would (user,
environment, config and state directory; not the sandbox, as there is no
running systemd here) and reads the served topic with kcat, then `dpkg -r` and
`dpkg -P` leave nothing behind. Whatever fails, the package is purged at the
end, what the test wrote to /etc/thaw and /var/lib/thaw is removed, and the
system user the postinst adds is deleted unless it was there before.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from fixtures import json_bytes
from serve_harness import free_port, wait_port

REPO = Path(__file__).resolve().parents[2]
COMMANDS = ["inspect", "replay", "serve", "archive", "maintain"]
MAN_PAGES = ["thaw"] + [f"thaw-{c}" for c in COMMANDS]
UNITS = ["thaw-serve@.service", "thaw-archive@.service"]
UNIT_DIR = Path("/lib/systemd/system")


def run(*args, check=True, timeout=300, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kw)
    if check:
        assert r.returncode == 0, f"{' '.join(map(str, args))} exited {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def package_status() -> str | None:
    """dpkg's status of the package thaw ("install ok installed", "deinstall ok
    config-files", ...), None when dpkg knows nothing of it."""
    r = run("dpkg-query", "-W", "-f=${Status}", "thaw", check=False)
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


def user_exists(name: str) -> bool:
    return run("getent", "passwd", name, check=False).returncode == 0


def purge() -> None:
    if package_status() is not None:
        run("dpkg", "--purge", "thaw", check=False)


@pytest.fixture(scope="module")
def deb(thaw_bin) -> Path:
    if given := os.environ.get("THAW_DEB"):
        p = Path(given)
        assert p.is_file(), f"THAW_DEB={given} is not a file"
        return p
    build_dir = Path(thaw_bin).resolve().parents[1]
    r = run("make", "-s", "-C", REPO, "package", f"BUILD={build_dir}", timeout=1200)
    p = Path(r.stdout.strip().splitlines()[-1])
    assert p.is_file() and p.name.endswith(".deb"), r.stdout
    return p


class Machine:
    """What the test made outside the package, removed at the end."""

    def __init__(self):
        self.made: list[Path] = []

    def make_dir(self, path: Path, owner: str) -> Path:
        if not path.exists():
            self.made.append(path)
        run("install", "-d", "-o", owner, "-g", owner, "-m", "0750", path)
        return path

    def write(self, path: Path, text: str, group: str) -> Path:
        self.made.append(path)
        path.write_text(text)
        run("chown", f"root:{group}", path)
        path.chmod(0o640)
        return path

    def clean(self) -> None:
        for p in reversed(self.made):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
        self.made.clear()


@pytest.fixture
def machine():
    """Root, no unowned /usr/bin/thaw in the way; afterwards the machine as before."""
    if os.geteuid() != 0:
        pytest.skip("dpkg -i needs root (CI runs the tests as root)")
    if package_status() is not None:
        purge()  # a leftover of an interrupted run of this test
    assert not Path("/usr/bin/thaw").exists(), \
        "/usr/bin/thaw exists and no package owns it: the test would overwrite and then delete it"
    had_user = user_exists("thaw")
    m = Machine()
    try:
        yield m
    finally:
        m.clean()
        purge()
        if not had_user and user_exists("thaw"):
            run("deluser", "--system", "--quiet", "thaw", check=False)


def test_package_contents(deb, thaw_bin, tmp_path):
    fields = run("dpkg-deb", "--field", deb, "Package", "Version", "Architecture", "Depends").stdout
    f = dict(line.split(": ", 1) for line in fields.splitlines())
    version = run(thaw_bin, "--version").stdout.split()[1]  # "thaw 0.1.0 (commit …)"
    assert (f["Package"], f["Version"], f["Architecture"]) == ("thaw", version, "amd64"), f
    # Computed by dpkg-shlibdeps: Debian's runtime libraries, never the bundled Arrow.
    depends = [d.strip().split()[0] for d in f["Depends"].split(",")]
    for lib in ["adduser", "librdkafka1", "libcurl4", "libpq5", "libsqlite3-0", "libssl3", "libzstd1",
                "liblz4-1", "libsnappy1v5", "libyaml-cpp0.7", "libstdc++6", "libc6"]:
        assert lib in depends, f["Depends"]
    assert not any("arrow" in d or "parquet" in d for d in depends), f["Depends"]

    files = {line.split()[-1].removeprefix(".") for line in run("dpkg-deb", "--contents", deb).stdout.splitlines()}
    expected = {"/usr/bin/thaw", "/etc/thaw/example.toml", *(f"{UNIT_DIR}/{u}" for u in UNITS),
                *(f"/usr/share/man/man1/{p}.1.gz" for p in MAN_PAGES)}
    assert expected <= files, sorted(expected - files)
    libs = sorted(p for p in files if p.startswith("/usr/lib/thaw/"))
    for name in ["libarrow.so.", "libarrow_s3.so.", "libparquet.so."]:
        assert any(Path(p).name.startswith(name) for p in libs), libs
    # Nothing outside the package's own places (no build-tree or venv paths).
    for p in files:
        assert p.rstrip("/") in {"", "/etc", "/lib", "/lib/systemd", "/usr", "/usr/bin", "/usr/lib", "/usr/share",
                                 "/usr/share/man", "/usr/share/man/man1", str(UNIT_DIR)} \
            or p.startswith(("/usr/lib/thaw", "/etc/thaw", *(f"{UNIT_DIR}/{u}" for u in UNITS),
                             "/usr/share/man/man1/thaw", "/usr/bin/thaw")), p

    control = run("dpkg-deb", "--info", deb, "conffiles").stdout.split()
    assert control == ["/etc/thaw/example.toml"]
    # The example: every line commented out; uncommented, every setting is one
    # thaw serve and thaw archive take (they fail only on the example's
    # catalog and brokers, which do not exist).
    fsys = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], capture_output=True, check=True).stdout
    text = subprocess.run(["tar", "-xOf", "-", "./etc/thaw/example.toml"], input=fsys, capture_output=True,
                          check=True).stdout.decode()
    assert tomllib.loads(text) == {}
    example = tmp_path / "example.toml"
    example.write_text(uncomment_example(text))
    settings = tomllib.loads(example.read_text())
    assert {"catalog", "serve", "archive"} <= settings.keys(), settings
    (tmp_path / "password").write_text("secret\n")
    for command, extra, error in [
            ("serve", ["--state", tmp_path / "state"], "catalog database /var/lib/thaw/warehouse/catalog.db does not exist"),
            ("archive", ["--timeout", "1s", "-X", f"sasl.password=@{tmp_path / 'password'}"],
             "cannot reach Kafka brokers 'kafka-1:9092,kafka-2:9092'")]:
        r = run(thaw_bin, command, "--config", example, *extra, check=False, timeout=60)
        assert r.returncode == 1 and error in r.stderr, (command, r.returncode, r.stderr)


def uncomment_example(text: str) -> str:
    """example.toml with its settings uncommented: lines "# key = ...", "# [table]"
    and array continuations, but not the alternative REST [catalog] block."""
    out, alternative = [], False
    for line in text.splitlines():
        alternative = (alternative or line.startswith("# or a REST catalog")) and line.strip() != ""
        m = re.match(r'^# ((?:\[|[A-Za-z"][\w."-]* = |\s+").*)$', line)
        out.append(m.group(1) if m and not alternative else line)
    return "\n".join(out) + "\n"


def test_installed_package_runs_and_purges_cleanly(machine, deb, thaw_bin, tmp_path, request):
    kafka = request.getfixturevalue("kafka")  # not before `machine` has checked for root
    r = run("dpkg", "-i", deb)
    assert package_status() == "install ok installed", r.stdout + r.stderr

    listed = run("dpkg", "-L", "thaw").stdout.split("\n")
    for path in ["/usr/bin/thaw", "/etc/thaw/example.toml", *(f"{UNIT_DIR}/{u}" for u in UNITS),
                 *(f"/usr/share/man/man1/{p}.1.gz" for p in MAN_PAGES)]:
        assert path in listed, listed
        assert Path(path).is_file(), path
    assert any(p.startswith("/usr/lib/thaw/libarrow.so.") for p in listed), listed

    # postinst: the system user, and /etc/thaw for root and the group thaw only.
    assert user_exists("thaw")
    st = Path("/etc/thaw").stat()
    assert (oct(st.st_mode & 0o777), run("stat", "-c", "%G", "/etc/thaw").stdout.strip()) == ("0o750", "thaw")

    # The units: as installed (a template is checked as the instance
    # thaw-serve@i.service), and as an instance by name.
    for unit in UNITS:
        v = run("systemd-analyze", "verify", "--man=no", UNIT_DIR / unit, check=False)
        assert v.returncode == 0 and "thaw" not in v.stderr, v.stderr
        inst = unit.replace("@.", "@pkgtest.")
        v = run("systemd-analyze", "verify", "--man=no", inst, check=False)
        assert v.returncode == 0 and "thaw" not in v.stderr, v.stderr
        text = (UNIT_DIR / unit).read_text()
        cmd = unit.split("@")[0].removeprefix("thaw-")
        assert f"ExecStart=/usr/bin/thaw {cmd} --config /etc/thaw/%i.toml\n" in text
        assert "User=thaw\n" in text and "StateDirectory=thaw\n" in text
        # A stop by SIGTERM exits 128 + 15 (docs/cli.md#exit-codes): a clean stop, not a failure.
        assert "SuccessExitStatus=143\n" in text

    # The binary: its own Arrow libraries, nothing from the build tree or the venv, no environment needed.
    version = run("/usr/bin/thaw", "--version", env={}).stdout
    assert version == run(thaw_bin, "--version").stdout and version.startswith("thaw ")
    ldd = run("ldd", "/usr/bin/thaw", env={}).stdout
    assert "not found" not in ldd, ldd
    for line in ldd.splitlines():
        if "libarrow" in line or "libparquet" in line:
            assert Path(line.split("=>")[1].split("(")[0].strip()).resolve().parent == Path("/usr/lib/thaw"), line
    assert ".deps" not in ldd and "/build" not in ldd, ldd

    # The man pages: found by man, generated from each command's --help.
    for page in MAN_PAGES:
        where = run("man", "-w", page).stdout.strip()
        assert where == f"/usr/share/man/man1/{page}.1.gz", where
        troff = run("zcat", where).stdout
        assert f'.TH {page.upper()} "1"' in troff, troff[:300]
        if page != "thaw":
            assert "\\-\\-config" in troff, page  # an option of every command
    assert ".BR thaw-serve (1)" in run("zcat", "/usr/share/man/man1/thaw.1.gz").stdout

    # A real replay from the installed binary: the demo table into Kafka.
    wh = tmp_path / "wh"
    run(sys.executable, REPO / "tests/integration/make_demo_table.py", wh)
    catalog = f"sqlite:///{wh}/catalog.db"
    table_args = ["--catalog", catalog, "--table", "demo.orders"]
    records = run("/usr/bin/thaw", "inspect", *table_args, "--records", "--format", "json", env={}).stdout
    assert records == run(thaw_bin, "inspect", *table_args, "--records", "--format", "json").stdout
    want = defaultdict(list)
    for line in records.splitlines():
        r = json.loads(line)
        want[r["partition"]].append((r["timestamp"], json_bytes(r, "key"), json_bytes(r, "value")))
    assert sum(map(len, want.values())) == 2000

    topic = f"pkg-replayed-{os.getpid()}"
    run("/usr/bin/thaw", "replay", *table_args, "--brokers", kafka.bootstrap, "--topic", topic, "--create-topic",
        "--quiet", env={})
    got = defaultdict(list)
    for r in kafka.consume_all(topic):
        got[r["partition"]].append((r["timestamp"], r["key"], r["value"]))
    assert dict(got) == dict(want)

    # The serve unit's command as systemd runs it (but for the sandbox): user
    # thaw, its environment, /etc/thaw/NAME.toml readable through the group
    # only, state in the state directory, SIGTERM ends it with status 143.
    unit = (UNIT_DIR / "thaw-serve@.service").read_text()
    setting = lambda key: [l.split("=", 1)[1] for l in unit.splitlines() if l.startswith(key + "=")]
    expand = lambda v: v.replace("%i", "pkgtest").replace("%S", "/var/lib")
    state_dir = machine.make_dir(Path("/var/lib") / setting("StateDirectory")[0], "thaw")  # StateDirectory=
    served = machine.make_dir(state_dir / "pkgtest-warehouse", "root")
    run(sys.executable, REPO / "tests/integration/make_demo_table.py", served)
    run("chown", "-R", "thaw:thaw", served)
    port = free_port()
    machine.write(Path("/etc/thaw/pkgtest.toml"), f"""catalog = "sqlite:///{served}/catalog.db"
[serve]
listen = "127.0.0.1:{port}"
[[serve.topic]]
name = "orders"
table = "demo.orders"
""", group="thaw")
    machine.made.append(state_dir / f"serve-{port}")
    env = {"HOME": "/var/lib/thaw", "PATH": "/usr/bin:/bin"}
    env.update(expand(e).split("=", 1) for e in setting("Environment"))
    user = setting("User")[0]
    proc = subprocess.Popen(["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--",
                             *expand(setting("ExecStart")[0]).split()],
                            env=env, cwd=state_dir, stderr=subprocess.PIPE, text=True)
    try:
        wait_port(port, proc, 60, "thaw serve (as the unit runs it)")
        kc = run("kcat", "-b", f"127.0.0.1:{port}", "-C", "-t", "orders", "-e", "-q", "-f", "%p\n", timeout=120)
        counts = defaultdict(int)
        for line in kc.stdout.split():
            counts[int(line)] += 1
        assert dict(counts) == {p: len(v) for p, v in want.items()}
        proc.terminate()
        # SIGTERM stops serve cleanly with exit 143, which the unit counts as success.
        rc = proc.wait(timeout=60)
        assert rc == 128 + signal.SIGTERM and str(rc) in setting("SuccessExitStatus"), (rc, proc.stderr.read())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert run("stat", "-c", "%U", state_dir / f"serve-{port}").stdout.strip() == "thaw"
    machine.clean()

    # Remove: everything but the conffile goes; purge: that too, and /etc/thaw.
    files = [p for p in listed if p and Path(p).is_file()]
    run("dpkg", "-r", "thaw")
    assert package_status() == "deinstall ok config-files"
    left = [p for p in files if Path(p).exists()]
    assert left == ["/etc/thaw/example.toml"], left
    assert shutil.which("thaw", path="/usr/bin") is None
    run("dpkg", "-P", "thaw")
    assert package_status() is None
    assert run("dpkg", "-L", "thaw", check=False).returncode != 0
    left = [p for p in files if Path(p).exists()]
    assert left == [], left
    for d in ["/usr/lib/thaw", "/etc/thaw"]:
        assert not Path(d).exists(), d
