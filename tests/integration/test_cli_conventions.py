"""Command-line conventions (issue 7): exit codes exactly as docs/cli.md
documents them, a real TOML --config, checked time values, one partition
syntax, the Kafka options every Kafka tool user expects (-b/--bootstrap-server,
-X, -F), `inspect --records --json`, and --format checked.

Each test here failed before the change it covers."""

from __future__ import annotations

import re
import uuid
import json
import os
import signal
import subprocess
import time

import pytest

import fixtures
from test_replay import topic_name

NAME = "ns.conv"
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def make_records():
    # Three partitions, 1200 records each, 200-byte values: enough text to fill a pipe.
    return [fixtures.rec(p, o, T0 + o * 1000, f"k{o}".encode(), bytes([65 + p]) * 200) for p in (0, 1, 2)
            for o in range(1200)]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    wh = str(tmp_path_factory.mktemp("conv"))
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists("ns")
    t = fixtures.create(cat, wh, NAME, fixtures.canonical_schema(), spec=fixtures.CANONICAL_SPEC,
                        properties=fixtures.thaw_props("src"))
    fixtures.append_rows(t, [fixtures.canonical_row(r) for r in make_records()])
    return fixtures.catalog_uri(wh)


def tbl(uri):
    return ["--catalog", uri, "--table", NAME]


def json_records(stdout: bytes):
    return [json.loads(line) for line in stdout.decode().splitlines()]


def usage_error(p, *words):
    err = p.stderr.decode()
    assert p.returncode == 2, (p.returncode, err)
    for w in words:
        assert w in err, (w, err)
    return err


# --------------------------------------------------------------------------- exit codes

@pytest.mark.parametrize("args, words", [
    (["--bogus"], ["--bogus"]),                               # unknown option (CLI11: 109)
    (["--limit"], ["--limit"]),                               # missing value (CLI11: 114)
    (["--limit", "many"], ["--limit", "many"]),               # not a number (CLI11: 104)
    (["--partitions", "3-1"], ["--partitions '3-1'"]),        # malformed partition list
    (["--format", "%p %Q"], ["unknown token '%Q'"]),
    (["--format", "jsno"], ["unknown format 'jsno'"]),
    (["--to-time", "9223372036854775807"], ["out of range"]),
    (["--from-time", "2026-02-31"], ["2026-02 has days 01 to 28"]),
    (["--from-time", "2026-01-01T00:00+99:99"], ["offset +99:99"]),
    (["--from-time", "1767225600"], ["looks like epoch seconds", "1767225600s"]),
    (["--as-of", "2026-13-01"], ["no month 13"]),
    (["--records", "--json", "--format", "%o"], ["--json", "--format '%o'"]),
])
def test_inspect_usage_errors_exit_2(thaw, table, args, words):
    usage_error(thaw("inspect", *tbl(table), *args), *words)
    # Found while parsing the command line, before the table is read.
    usage_error(thaw("inspect", "--metadata", "/nonexistent/v1.metadata.json", *args), *words)


def test_exit_codes_help_version_and_missing_command(thaw, table):
    assert thaw("--help").returncode == 0
    assert thaw("--version").returncode == 0
    p = thaw("inspect", "--help")
    assert p.returncode == 0 and b"--config" in p.stdout and b"--partitions" in p.stdout
    p = thaw("replay", "--help")
    out = p.stdout.decode()
    assert p.returncode == 0
    for opt in ("--config", "-b,--brokers,--bootstrap-server", "-X", "-F"):
        assert opt in out, opt
    usage_error(thaw(), "")
    usage_error(thaw("frobnicate"), "frobnicate")
    # An error that is not bad usage: 1.
    p = thaw("inspect", "--catalog", table, "--table", "ns.missing")
    assert p.returncode == 1, p.stderr.decode()


@pytest.mark.parametrize("args, words", [
    (["--bogus"], ["--bogus"]),
    (["--parallelism", "two"], ["--parallelism"]),
    (["--checkpoint-every"], ["--checkpoint-every"]),
    (["--partitions", "0,x"], ["--partitions '0,x': 'x' is not a partition"]),
    (["-X", "novalue"], ["-X 'novalue'"]),
    (["-F", "/nonexistent/client.properties"], ["-F /nonexistent/client.properties"]),
    (["-X", "no.such.property=1"], ["-X: Kafka client property 'no.such.property'"]),
    (["--to-time", "9223372036854775807"], ["--to-time: '9223372036854775807' is out of range"]),
    (["--as-of", "2026-02-31"], ["--as-of: '2026-02-31' is not a time (2026-02 has days 01 to 28)"]),
    (["--from-time", "1767225600"], ["looks like epoch seconds"]),
])
def test_replay_usage_errors_exit_2_before_contacting_kafka(thaw, table, args, words):
    # Port 1: nothing listens; every one of these fails before any connection.
    p = thaw("replay", *tbl(table), "--brokers", "127.0.0.1:1", "--topic", "t", "--dry-run", *args, timeout=60)
    usage_error(p, *words)


def test_interrupted_inspect_exits_130(thaw, table, tmp_path):
    # stdout is a pipe nobody reads: inspect blocks writing, then gets SIGINT.
    p = subprocess.Popen([str(thaw.binary), "inspect", *tbl(table), "--records"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    time.sleep(3)
    assert p.poll() is None, "inspect finished before it could be interrupted"
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=30)
    finally:
        p.kill()
    assert p.returncode == 130, p.returncode


@pytest.mark.parametrize("command,signo", [
    ("inspect", signal.SIGTERM), ("serve", signal.SIGINT), ("serve", signal.SIGTERM),
    ("archive", signal.SIGINT), ("archive", signal.SIGTERM), ("replay", signal.SIGTERM),
])
def test_a_stop_by_signal_exits_128_plus_its_number_on_every_command(thaw, table, kafka, tmp_path, command, signo):
    """One rule (docs/cli.md#exit-codes): whatever the command was doing (a one-shot read, serving, following a
    topic), the first SIGINT or SIGTERM stops it cleanly and it exits 128 + N: 130 or 143."""
    topic = topic_name()
    if command in ("archive", "replay"):
        kafka.create_topic(topic, 3)
    args = {
        "inspect": ["inspect", *tbl(table), "--records"],  # stdout is a pipe nobody reads: it blocks writing
        "serve": ["serve", "--catalog", table, "--topic", f"t={NAME}", "--listen", "127.0.0.1:0",
                  "--state", str(tmp_path / "state")],
        "archive": ["archive", "--brokers", kafka.bootstrap, "--topic", topic, "--catalog", table,
                    "--table", f"ns.sig{os.getpid()}{signo}", "--create", "--warehouse", str(tmp_path), "--follow"],
        "replay": ["replay", *tbl(table), "--brokers", kafka.bootstrap, "--topic", topic, "--follow"],
    }[command]
    p = subprocess.Popen([str(thaw.binary), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(4)
        assert p.poll() is None, p.communicate()
        p.send_signal(signo)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 128 + signo, (p.returncode, p.stderr.read().decode()[-3000:])


# --------------------------------------------------------------------------- --config

def test_config_is_real_toml_and_the_command_line_wins(thaw, table, tmp_path):
    cfg = tmp_path / "inspect.toml"
    cfg.write_text(f'''# inspect settings
catalog = "{table}"   # an inline comment
table = "{NAME}"
records = true
json = true
limit = 1_0           # ten
[replay]
topic = "only-for-replay"
''')
    p = thaw.ok("inspect", "--config", str(cfg))
    got = json_records(p.stdout)
    assert len(got) == 10 and got[0]["offset"] == 0
    # A boolean set in the file, turned off on the command line: text records.
    p = thaw.ok("inspect", "--config", str(cfg), "--json=false", "--limit", "2")
    lines = p.stdout.decode().splitlines()
    assert len(lines) == 2 and lines[0].startswith("0:0\t"), lines
    # A TOML date-time is a time.
    cfg2 = tmp_path / "time.toml"
    cfg2.write_text(f'catalog = "{table}"\ntable = "{NAME}"\nfrom-time = 2026-01-01T00:19:59Z\nlimit = 1\n'
                    'format = "json"\npartitions = "1"\n')
    got = json_records(thaw.ok("inspect", "--config", str(cfg2)).stdout)
    assert [(r["partition"], r["offset"]) for r in got] == [(1, 1199)]


def test_config_errors_name_file_line_and_key(thaw, table, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(f'catalog = "{table}"\ntable = "{NAME}"\n\nlimt = 3\n')
    usage_error(thaw("inspect", "--config", str(bad)),
                f"--config {bad} line 4 key 'limt': `thaw inspect` has no option --limt")
    bad.write_text(f'catalog = "{table}"\nlimit = "many"\n')
    usage_error(thaw("inspect", "--config", str(bad)), f"(set by --config {bad} line 2 key 'limit')")
    bad.write_text("catalog = \n")
    usage_error(thaw("inspect", "--config", str(bad)), f"--config {bad} line 1 column")
    bad.write_text("json = 1\n")
    usage_error(thaw("inspect", "--config", str(bad)), "line 1 key 'json': --json is a flag; give true or false")


# --------------------------------------------------------------------------- times, partitions, formats

def test_epoch_seconds_with_s_and_iso_agree_with_milliseconds(thaw, table):
    base = ["inspect", *tbl(table), "--records", "--format", "%p:%o\\n", "--partitions", "0"]
    ms = thaw.ok(*base, "--from-time", str(T0 + 1_000_000), "--to-time", str(T0 + 1_010_000)).stdout
    assert ms.decode().splitlines() == [f"0:{o}" for o in range(1000, 1010)]
    assert thaw.ok(*base, "--from-time", f"{(T0 + 1_000_000) // 1000}s", "--to-time",
                   f"{T0 + 1_010_000}ms").stdout == ms
    assert thaw.ok(*base, "--from-time", "2026-01-01T00:16:40+00:00", "--to-time",
                   "2026-01-01T01:16:50+01:00").stdout == ms
    # The extremes of the accepted range are no bound at all (before: 9223372036854775807 wrapped to 0 records).
    everything = thaw.ok(*base).stdout
    assert len(everything.split()) == 1200
    for args in (["--to-time", "9999-12-31T23:59:59.999Z"], ["--to-time", "253402300799999"],
                 ["--from-time", "0000-01-01", "--to-time", "9999-12-31"]):
        assert thaw.ok(*base, *args).stdout == everything, args
    # A --where bound at the int64 limit is no bound either (its exclusive end must not wrap around).
    assert thaw.ok(*base, "--where", "timestamp <= 9223372036854775807").stdout == everything


def test_one_partition_syntax(thaw, table):
    def parts(*args):
        p = thaw.ok("inspect", *tbl(table), "--records", "--format", "%p\\n", *args)
        return sorted(set(p.stdout.decode().split()))
    assert parts("--partitions", "0,2") == ["0", "2"]
    assert parts("--partitions", "1-2") == ["1", "2"]
    assert parts("--partition", "1", "--partition", "2") == ["1", "2"]  # the old spelling still works
    out = thaw.ok("replay", *tbl(table), "--brokers", "127.0.0.1:1", "--topic", "t", "--dry-run",
                  "--partitions", "0,2-2").stdout.decode()
    assert "partitions  0,2\n" in out, out


def test_repeated_options_add_up_or_are_usage_errors(thaw, table, tmp_path):
    """Issue 20: --partitions 0 --partitions 1 planned partition 1 alone; a second --where or --topic silently won."""
    dry = ["replay", *tbl(table), "--brokers", "127.0.0.1:1", "--dry-run"]
    out = thaw.ok(*dry, "--topic", "t", "--partitions", "0", "--partitions", "2").stdout.decode()
    assert "partitions  0,2\n" in out, out
    for flag, twice in (("--topic", ["--topic", "t", "--topic", "u"]),
                        ("--where", ["--topic", "t", "--where", "offset < 5", "--where", "offset > 7"])):
        usage_error(thaw(*dry, *twice), f"{flag} is given more than once, and it takes one value")
    usage_error(thaw(*dry, "--topic", "t", "--dry-run"), "--dry-run is given more than once: give it once")
    usage_error(thaw("inspect", *tbl(table), "--limit", "1", "--limit", "2"), "--limit is given more than once")
    # A --config value and one on the command line: the command line's alone, never both.
    cfg = tmp_path / "replay.toml"
    cfg.write_text('topic = "from-file"\npartitions = ["0", "1"]\n')
    out = thaw.ok(*dry, "--config", str(cfg), "--partitions", "2", "--topic", "t").stdout.decode()
    assert "partitions  2\n" in out, out
    out = thaw.ok(*dry, "--config", str(cfg)).stdout.decode()
    assert "partitions  0,1\n" in out and "from-file" in out, out


def test_records_json_is_one_object_per_record(thaw, table):
    # Before: --records --json printed the text format.
    a = thaw.ok("inspect", *tbl(table), "--records", "--json", "--partitions", "2", "--limit", "3").stdout
    b = thaw.ok("inspect", *tbl(table), "--records", "--format", "json", "--partitions", "2", "--limit", "3").stdout
    assert a == b
    got = json_records(a)
    assert [(r["partition"], r["offset"]) for r in got] == [(2, 0), (2, 1), (2, 2)]
    assert got[0]["topic"] == "src" and got[0]["value_encoding"] == "utf8"
    assert fixtures.json_bytes(got[0]) == b"C" * 200


# --------------------------------------------------------------------------- Kafka options

def test_bootstrap_server_alias_and_properties_file_with_x_override(thaw, table, kafka, tmp_path):
    props = tmp_path / "client.properties"
    # A Java-style file: comments, `:` separator, continuation line; bootstrap.servers from the file.
    props.write_text(f"# client settings\n! also a comment\nbootstrap.servers={kafka.bootstrap}\n"
                     "compression.type : bogus\nclient.id = thaw-\\\n    conventions\n")
    topic = topic_name()
    base = ["replay", *tbl(table), "--topic", topic, "--create-topic", "--partitions", "1", "--quiet", "-F", str(props)]
    # The file alone: its bogus compression.type is refused as bad usage, naming the file (the file is used).
    p = thaw(*base, timeout=120)
    usage_error(p, f"-F {props}: Kafka client property 'compression.type'")
    assert topic not in kafka.admin().list_topics(timeout=10).topics
    # -X wins over -F.
    p = thaw(*base, "-X", "compression.type=lz4", timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    got = kafka.consume_all(topic)
    assert len(got) == 1200 and {r["partition"] for r in got} == {1}
    # --bootstrap-server and -b are --brokers.
    for flag in ("--bootstrap-server", "-b"):
        t2 = topic_name()
        p = thaw("replay", *tbl(table), flag, kafka.bootstrap, "--topic", t2, "--create-topic", "--partitions", "0",
                 "--quiet", timeout=120)
        assert p.returncode == 0, p.stderr.decode()
        assert len(kafka.consume_all(t2)) == 1200


def test_secrets_by_reference_stay_out_of_the_command_line_and_errors(thaw, table, kafka, tmp_path):
    """-X sasl.password=@FILE and ${env:NAME}: the value is read from the file
    or the environment (a missing one is bad usage naming the reference), and
    neither the plan nor an error shows the secret."""
    secret = "not-in-argv-" + topic_name()
    pw = tmp_path / "pw"
    pw.write_text(secret + "\n")
    base = ["replay", *tbl(table), "-b", kafka.bootstrap, "--topic", topic_name(), "--create-topic", "--quiet",
            "--dry-run"]
    p = thaw(*base, "-X", f"sasl.password=@{tmp_path / 'missing'}", timeout=120)
    usage_error(p, f"-X: sasl.password=@{tmp_path / 'missing'}: cannot read the file")
    p = thaw(*base, "-X", "sasl.password=${env:THAW_TEST_NO_SUCH_VAR}", timeout=120)
    usage_error(p, "the environment variable THAW_TEST_NO_SUCH_VAR is not set")
    env = {**os.environ, "THAW_TEST_KAFKA_SECRET": secret}
    for ref in (f"@{pw}", "${env:THAW_TEST_KAFKA_SECRET}"):
        p = subprocess.run([str(thaw.binary), *base, "-X", f"sasl.password={ref}"], capture_output=True,
                           timeout=120, env=env)
        out = (p.stdout + p.stderr).decode()
        assert p.returncode == 0 and secret not in out, out
        p = subprocess.run([str(thaw.binary), *base, "-X", f"sasl.password={ref}", "-X", "security.protocol=bogus"],
                           capture_output=True, timeout=120, env=env)
        out = (p.stdout + p.stderr).decode()
        assert p.returncode == 2 and "security.protocol" in out, out
        assert secret not in out, out


def interrupted_slow_replay(thaw, args):
    """`thaw ARGS --rate 0.1` (~0.8 MB at 0.1 MB/s: still running) interrupted by SIGINT after 4 s; asserts the
    documented exit code 130 and returns (stdout, stderr)."""
    p = subprocess.Popen([str(thaw.binary), *args, "--rate", "0.1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(4)
    assert p.poll() is None, p.communicate()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, (p.returncode, err.decode())
    return out, err


def test_interrupted_replay_exits_130_and_says_how_to_resume(thaw, table, kafka):
    topic = topic_name()
    out, err = interrupted_slow_replay(thaw, ["replay", *tbl(table), "-b", kafka.bootstrap, "--topic", topic,
                                              "--create-topic", "--job", topic, "--quiet"])
    assert b"stopped by signal" in out, out


def test_exactly_once_without_job_is_resumed_by_the_same_command(thaw, table, kafka):
    """Issue 20: `--exactly-once` without `--job` was exactly once per transaction only: a rerun after Ctrl-C
    started over and sent everything again, while the message said the job could be resumed. The job is now
    named after what defines the replay, shown, and resumed by the same command."""
    topic = topic_name()
    cmd = ["replay", *tbl(table), "-b", kafka.bootstrap, "--topic", topic, "--create-topic", "--exactly-once",
           "--checkpoint-every", "100", "--quiet"]
    out, err = interrupted_slow_replay(thaw, cmd)
    assert b"the job can be resumed with the same command" in out, out
    job = err.decode().split("thaw replay: job ", 1)[1].split(" ", 1)[0]
    assert job.startswith("auto-"), err.decode()
    again = thaw.ok(*cmd, "--json")
    assert f"thaw replay: job {job} " in again.stderr.decode()
    summary = json.loads(again.stdout)
    assert summary["job"] == job and summary["resumed"] is True, summary
    got = kafka.consume_all(topic, "read_committed")
    sources = [(dict(g["headers"])["thaw.source.partition"], dict(g["headers"])["thaw.source.offset"]) for g in got]
    assert len(sources) == len(set(sources)) == 3 * 1200, f"{len(sources) - len(set(sources))} sent twice"
    # Another range is another job: not refused as "started with other settings", not resumed.
    other = thaw.ok(*cmd[:-1], "--partitions", "0", "--json")
    assert json.loads(other.stdout)["job"] not in (None, job)


# --------------------------------------------------------------------------- sizes (issue 19)

@pytest.mark.parametrize("value", ["512MiB", "2GiB", "64", "1GB"])
def test_memory_budget_takes_sizes_a_bare_number_is_mib(thaw, table, value):
    p = thaw("inspect", *tbl(table), "--records", "--limit", "3", "--format", "%o\\n", "--memory-budget", value)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode().split() == ["0", "1", "2"]


@pytest.mark.parametrize("command, args, words", [
    ("inspect", ["--memory-budget", "lots"], ["--memory-budget", "lots"]),
    ("inspect", ["--memory-budget", "1KiB"], ["--memory-budget '1KiB' is too small", "1MiB"]),
    ("replay", ["--brokers", "127.0.0.1:1", "--topic", "t", "--dry-run", "--memory-budget", "0"], ["--memory-budget"]),
    ("replay", ["--brokers", "127.0.0.1:1", "--topic", "t", "--dry-run", "--checkpoint-bytes", "64Q"],
     ["--checkpoint-bytes", "64Q"]),
])
def test_size_options_refuse_what_is_not_a_size(thaw, table, command, args, words):
    usage_error(thaw(command, *tbl(table), *args, timeout=60), *words)


def test_serve_memory_budget_and_cache_size_are_sizes(thaw, table, tmp_path):
    for args, words in ((["--memory-budget", "lots"], ["--memory-budget", "lots"]),
                        (["--cache-size", "1Q"], ["--cache-size", "1Q"])):
        p = thaw("serve", "--catalog", table, "--topic", f"t={NAME}", "--listen", "127.0.0.1:0",
                 "--state", str(tmp_path / "state"), *args, timeout=60)
        usage_error(p, *words)


def test_serve_state_defaults_to_the_users_state_home_wherever_it_starts(thaw, table, tmp_path):
    """Issue 20: --state defaulted to ./thaw-serve-state, so serve started from another directory had a new
    cluster id and had lost every group's committed offsets."""
    from serve_harness import free_port
    home = tmp_path / "home"
    home.mkdir()

    def start(cwd, port=None, **env_extra):
        cwd.mkdir(exist_ok=True)
        port = port or free_port()
        env = {k: v for k, v in os.environ.items() if k != "XDG_STATE_HOME"}
        env.update(HOME=str(home), **env_extra)
        p = subprocess.Popen([str(thaw.binary), "serve", "--catalog", table, "--topic", f"t={NAME}", "--listen",
                              f"127.0.0.1:{port}"], cwd=cwd, env=env, stderr=subprocess.PIPE)
        err = b""
        deadline = time.monotonic() + 60
        while b"listening on" not in err and time.monotonic() < deadline and p.poll() is None:
            err += p.stderr.readline()
        p.send_signal(signal.SIGTERM)
        rest = p.communicate(timeout=60)[1]
        assert b"listening on" in err, (err + rest).decode()
        return port, err.decode()

    port, log = start(tmp_path / "a")
    state = home / ".local" / "state" / "thaw" / f"serve-{port}"
    assert f"state (group offsets, leader epochs, cluster id) in {state}" in log, log
    assert (state / "cluster.id").is_file() and not (tmp_path / "a" / "thaw-serve-state").exists()
    cluster_id = (state / "cluster.id").read_text()
    start(tmp_path / "c", port=port)  # the same server started from elsewhere: the same state
    assert (state / "cluster.id").read_text() == cluster_id
    xdg = tmp_path / "xdg"
    port, log = start(tmp_path / "b", XDG_STATE_HOME=str(xdg))
    assert f"in {xdg / 'thaw' / f'serve-{port}'}" in log, log
    assert (xdg / "thaw" / f"serve-{port}" / "cluster.id").is_file()


# --------------------------------------------------------------------------- one grammar (issue 24)

COMMANDS = ("inspect", "replay", "serve", "archive", "maintain")


def reaching_log_setup(command: str, table: str, tmp_path) -> list[str]:
    """Arguments with which `command` gets past parsing to where it sets up logging, without contacting
    anything (port 1: nothing listens; the checks under test come first)."""
    return {
        "inspect": tbl(table),
        "replay": [*tbl(table), "--brokers", "127.0.0.1:1", "--topic", "t", "--dry-run"],
        "serve": ["--catalog", table, "--topic", f"t={NAME}", "--listen", "127.0.0.1:0",
                  "--state", str(tmp_path / "state")],
        "archive": ["--brokers", "127.0.0.1:1", "--topic", "t", "--catalog", table, "--table", "ns.archived"],
        "maintain": [*tbl(table), "--expire-snapshots-older-than", "7d", "--dry-run"],
    }[command]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_the_same_logging_options(thaw, table, command, tmp_path):
    """Issue 24: --verbose on three commands, --log-level on serve only, nothing on inspect."""
    out = thaw(command, "--help").stdout.decode()
    for opt in ("--log-level LEVEL", "-v,--verbose", "-q,--quiet"):
        assert opt in out, (command, opt, out)
    args = reaching_log_setup(command, table, tmp_path)
    usage_error(thaw(command, *args, "-v", "-q", timeout=60), "-v/--verbose and -q/--quiet contradict")
    usage_error(thaw(command, *args, "--log-level", "loud", timeout=60), "--log-level 'loud'",
                "debug, info, warn or error")


def serve_log(thaw, table, port: int, *args: str, then=None, topic: str = f"t={NAME}") -> str:
    """Starts serve, waits until it listens, runs then(), stops it; its stderr."""
    from serve_harness import wait_port
    p = subprocess.Popen([str(thaw.binary), "serve", "--catalog", table, "--topic", topic, *args],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        wait_port(port, p, 60, "thaw serve")
        if then:
            then()
    finally:
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=60)[1].decode()
    assert p.returncode == 128 + signal.SIGTERM, err
    return err


def test_quiet_keeps_warnings_only_and_log_level_wins(thaw, table, tmp_path):
    from serve_harness import free_port
    port = free_port()
    common = ["--listen", f"127.0.0.1:{port}", "--state", str(tmp_path / "state")]
    assert "thaw serve: info: listening on" in serve_log(thaw, table, port, *common)
    quiet = serve_log(thaw, table, port, *common, "-q")
    assert ": info:" not in quiet and "listening on" not in quiet, quiet
    assert "thaw serve: info: listening on" in serve_log(thaw, table, port, *common, "-q", "--log-level", "info")

    def join_a_group():  # the group coordinator logs its rebalances at debug level
        from confluent_kafka import Consumer
        c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "g-verbose",
                      "auto.offset.reset": "earliest"})
        c.subscribe(["t"])
        deadline = time.monotonic() + 30
        while not c.assignment() and time.monotonic() < deadline:
            c.poll(0.2)
        assert c.assignment(), "no assignment from thaw serve within 30 s"
        c.close()

    verbose = serve_log(thaw, table, port, *common, "-v", "--group-initial-rebalance-delay", "0s", then=join_a_group)
    assert "thaw serve: debug: group 'g-verbose'" in verbose, verbose
    quiet = serve_log(thaw, table, port, *common, "-q", "--group-initial-rebalance-delay", "0s", then=join_a_group)
    assert "debug" not in quiet and "info" not in quiet, quiet


def test_serve_listens_on_9192_by_default_not_a_brokers_9092(thaw, table, tmp_path):
    """Issue 24: replay or archive pointed at localhost:9092 reached serve when it had started first."""
    import socket
    out = thaw("serve", "--help").stdout.decode()
    assert "default 127.0.0.1:9192" in out, out
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", 9192))
            free = True
        except OSError:
            free = False
    if free:
        log = serve_log(thaw, table, 9192, "--state", str(tmp_path / "state"))
        assert "listening on 127.0.0.1:9192" in log, log
    else:  # taken on this machine: serve says which address it could not take
        p = thaw("serve", "--catalog", table, "--topic", f"t={NAME}", "--state", str(tmp_path / "state"),
                 timeout=60)
        assert p.returncode != 0 and "9192" in p.stderr.decode(), p.stderr.decode()


def test_link_headers_is_a_flag_like_the_others(thaw, table, kafka):
    topic = topic_name()
    base = ["replay", *tbl(table), "--brokers", kafka.bootstrap, "--topic", topic, "--create-topic",
            "--partitions", "0", "--to-offset", "5", "--json"]
    p = thaw(*base, "--link-headers=false", timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout.decode().splitlines()[-1])["records"] == 5
    # Refused where it needs the headers, naming the flag.
    usage_error(thaw(*base, "--link-headers=false", "--verify", timeout=120), "--link-headers=false")
    # The old spelling's value is not taken for the flag's.
    usage_error(thaw(*base, "--link-headers", "off", timeout=60), "off")


def test_version_names_the_commit_and_the_libraries(thaw):
    """Issue 24: `--version` prints the commit and the versions of librdkafka, Arrow, OpenSSL and the Kafka specs
    the codec was generated from, as `kcat -V` does."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    p = thaw("--version")
    assert p.returncode == 0, p.stderr.decode()
    out = p.stdout.decode()
    assert thaw("-V").stdout.decode() == out
    lines = out.splitlines()
    m = re.fullmatch(r"thaw \d+\.\d+\.\d+ \(commit ([0-9a-f]{12})(-dirty)?\)", lines[0])
    assert m, out
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:
        assert head.stdout.startswith(m.group(1)), (out, head.stdout)
    assert re.fullmatch(r"librdkafka \d+\.\d+\.\d+", lines[1]), out
    assert re.fullmatch(r"Apache Arrow \d+\.\d+\.\d+ .*", lines[2]), out
    assert re.match(r"OpenSSL \d+\.\d+\.\d+", lines[3]), out
    pinned = re.search(r'^version="([^"]+)"', (root / "scripts/deps/install-kafka-specs.sh").read_text(), re.M)
    assert lines[4].endswith(f"message specs of kafka-clients {pinned.group(1)}"), out


@pytest.mark.parametrize("command, option", [
    ("replay", "--progress-interval"), ("replay", "--poll-interval"), ("replay", "--checkpoint-interval"),
    ("serve", "--refresh"), ("serve", "--metrics-sample-interval"),
    ("archive", "--commit-interval"), ("archive", "--timeout"),
    ("maintain", "--expire-snapshots-older-than"), ("maintain", "--orphan-older-than"),
])
def test_durations_take_units_everywhere_and_a_bare_number_is_refused(thaw, table, command, option, tmp_path):
    """Issue 24: replay's intervals were float seconds that refused `5s`; elsewhere a bare number was seconds."""
    args = reaching_log_setup(command, table, tmp_path)
    if command == "maintain":
        args = [*tbl(table), "--dry-run"] + (["--remove-orphans"] if option == "--orphan-older-than" else [])
    if option == "--metrics-sample-interval":
        args = [*args, "--metrics", "127.0.0.1:0"]
    usage_error(thaw(command, *args, option, "30", timeout=60), f"{option} '30' has no unit", "30s for seconds")
    usage_error(thaw(command, *args, option, "30y", timeout=60), "unknown unit 'y'", "ms, s, m, h, d or w")
    out = thaw(command, "--help").stdout.decode()
    assert f"{option} DURATION" in out, (option, out)


def test_a_kafka_millisecond_option_takes_a_bare_number_as_milliseconds(thaw, table, tmp_path):
    """--group-initial-rebalance-delay is Kafka's group.initial.rebalance.delay.ms: 3000 waited 50 minutes."""
    from serve_harness import free_port
    port = free_port()
    joined = {}

    def join():
        from confluent_kafka import Consumer
        c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "g-delay", "auto.offset.reset": "earliest"})
        start = time.monotonic()
        c.subscribe(["t"])
        while not c.assignment() and time.monotonic() - start < 60:
            c.poll(0.1)
        joined["seconds"] = time.monotonic() - start
        c.close()

    serve_log(thaw, table, port, "--listen", f"127.0.0.1:{port}", "--state", str(tmp_path / "state"),
              "--group-initial-rebalance-delay", "1500", then=join)
    # 1.5 s of delay (plus the client's own join): not 1500 seconds, and not nothing.
    assert 1.4 < joined["seconds"] < 20, joined


def test_create_topic_takes_a_replication_factor(thaw, table, kafka):
    """Issue 24: --create-topic made topics with the broker's default replication only."""
    topic = topic_name()
    base = ["replay", *tbl(table), "--brokers", kafka.bootstrap, "--topic", topic, "--partitions", "0",
            "--to-offset", "3"]
    usage_error(thaw(*base, "--replication-factor", "1", timeout=60), "--replication-factor applies to a topic made "
                "by --create-topic")
    usage_error(thaw(*base, "--create-topic", "--replication-factor", "0", timeout=60), "between 1 and 32767")
    # The test cluster has one broker: three replicas cannot be placed. The broker's refusal is the error (so the
    # value reached it), and no topic is left behind.
    p = thaw(*base, "--create-topic", "--replication-factor", "3", timeout=120)
    err = p.stderr.decode()
    assert p.returncode == 1 and "replication factor" in err.lower(), err
    assert topic not in kafka.admin().list_topics(timeout=10).topics
    p = thaw(*base, "--create-topic", "--replication-factor", "1", timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    md = kafka.admin().list_topics(topic, timeout=10).topics[topic]
    assert [len(pm.replicas) for pm in md.partitions.values()] == [1]
    assert len(kafka.consume_all(topic)) == 3


def test_serve_topic_settings_are_written_with_dashes_like_every_option(thaw, table, tmp_path):
    """Issue 24: `source_topic` was the one underscore among dashes. The dashed names are the documented ones;
    the first spellings still read the same."""
    from serve_harness import free_port
    p = thaw("serve", "--catalog", table, "--topic", f"t={NAME}:bogus_key=1", "--listen", "127.0.0.1:0",
             "--state", str(tmp_path / "state"), timeout=60)
    usage_error(p, "unknown setting 'bogus_key'", "source-topic, prefer, cold-suffix, value-format")
    for spelling in ("source-topic", "source_topic"):
        port = free_port()
        got = {}

        def metadata():
            from confluent_kafka.admin import AdminClient
            md = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"}).list_topics(timeout=20)
            got["partitions"] = len(md.topics["t"].partitions)

        serve_log(thaw, table, port, "--listen", f"127.0.0.1:{port}", "--state", str(tmp_path / spelling),
                  topic=f"t={NAME}:{spelling}=src", then=metadata)
        assert got == {"partitions": 3}, (spelling, got)
    help_text = thaw("serve", "--help").stdout.decode()
    assert ":source-topic=T" in help_text and "source_topic" not in help_text


def docs_config_example() -> str:
    """The TOML example of docs/cli.md's `--config FILE` section, as printed there."""
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    section = text[text.index("### `--config FILE`"):]
    return section[section.index("```toml\n") + 8:section.index("\n```", section.index("```toml"))]


@pytest.mark.parametrize("command", COMMANDS)
def test_one_config_file_serves_every_command(thaw, command, tmp_path):
    """Issue 24: `thaw inspect --config` on docs/cli.md's own example failed ("has no option -X"). Keys of any
    command are taken by the commands that have them and passed over by the others; a key no command has is
    still an error with the file and line."""
    shared = tmp_path / "thaw.toml"
    shared.write_text(docs_config_example() + "\n" + "\n".join([
        "[serve]", 'refresh = "5s"', "[maintain]", 'orphan-older-than = "3d"', "",
    ]))
    extra = tmp_path / "more.toml"
    extra.write_text("\n".join([
        'commit-interval = "10s"',            # archive's
        'refresh = "5s"',                     # serve's
        'orphan-older-than = "3d"',           # maintain's
        "records = true" if command == "inspect" else 'log-format = "text"',
        "[upstream]", 'bootstrap = "kafka:9092"',  # serve's
        "[[topic]]", 'name = "orders"', 'table = "archive.orders"',  # serve's
        "",
    ]))
    # The files are read; the command then stops at a bad --log-level given on the command line (exit 2), so
    # nothing is contacted: a config error would have been reported first.
    p = thaw(command, "--config", str(shared), "--config", str(extra), "--log-level", "loud", timeout=60)
    err = p.stderr.decode()
    assert p.returncode == 2 and "--log-level 'loud'" in err and "--config" not in err, err
    bad = tmp_path / "bad.toml"
    bad.write_text('catalog = "sqlite:///x.db"\nlimt = 10\n')
    usage_error(thaw(command, "--config", str(bad), timeout=60), f"--config {bad} line 2 key 'limt'",
                f"`thaw {command}` has no option --limt")


def test_default_config_file_and_thaw_environment_variables(thaw, table, tmp_path):
    """Issue 24: a default config location ($THAW_CONFIG, else ~/.config/thaw/thaw.toml) and THAW_* variables for
    every option, so that secrets stay out of the process list. Order: command line, environment, file."""
    home = tmp_path / "home"
    (home / ".config" / "thaw").mkdir(parents=True)
    (home / ".config" / "thaw" / "thaw.toml").write_text(f'catalog = "{table}"\ntable = "{NAME}"\n'
                                                         "[inspect]\nlimit = 5\n")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("THAW_", "XDG_CONFIG"))}
    base_env["HOME"] = str(home)
    base_env["THAW_BIN"] = os.environ.get("THAW_BIN", "")

    def records(*args, **env):
        p = subprocess.run([str(thaw.binary), "inspect", "--records", *args], capture_output=True, timeout=60,
                           env={**base_env, **env})
        assert p.returncode == 0, p.stderr.decode()
        return len(p.stdout.decode().splitlines())

    assert records() == 5                               # ~/.config/thaw/thaw.toml
    assert records(THAW_LIMIT="3") == 3                 # the environment over the file
    assert records("--limit", "1", THAW_LIMIT="3") == 1  # the command line over both
    other = tmp_path / "other.toml"
    other.write_text(f'catalog = "{table}"\ntable = "{NAME}"\nlimit = 2\n')
    assert records(THAW_CONFIG=str(other)) == 2         # $THAW_CONFIG instead of the default
    # THAW_CONFIG= turns the default file off: no table then.
    p = subprocess.run([str(thaw.binary), "inspect"], capture_output=True, timeout=60,
                       env={**base_env, "THAW_CONFIG": ""})
    assert p.returncode == 2 and "--table" in p.stderr.decode(), p.stderr.decode()
    # A bad value names the variable it came from.
    p = subprocess.run([str(thaw.binary), "inspect", "--records"], capture_output=True, timeout=60,
                       env={**base_env, "THAW_LIMIT": "many"})
    assert p.returncode == 2 and "set by environment variable THAW_LIMIT" in p.stderr.decode(), p.stderr.decode()
    # A missing $THAW_CONFIG file is an error naming it, not silently nothing.
    p = subprocess.run([str(thaw.binary), "inspect"], capture_output=True, timeout=60,
                       env={**base_env, "THAW_CONFIG": str(tmp_path / "missing.toml")})
    assert p.returncode == 2 and "missing.toml" in p.stderr.decode(), p.stderr.decode()


def test_layout_names_are_the_same_for_the_writer_and_the_readers(thaw, table, tmp_path):
    """Issue 24: archive called its row layout `row`, the readers `thaw-row`; `auto` was the readers' unlisted
    default."""
    for command in ("inspect", "replay"):
        out = thaw(command, "--help").stdout.decode()
        assert "auto (default" in out and "thaw-row" in out, out
    assert "thaw-row" in thaw("archive", "--help").stdout.decode()
    p = thaw("inspect", *tbl(table), "--layout", "auto", "--json", timeout=60)
    assert p.returncode == 0 and json.loads(p.stdout)["layout"] == "thaw", p.stderr.decode()
    usage_error(thaw("inspect", *tbl(table), "--layout", "rows", timeout=60),
                "unknown --layout 'rows': valid layouts are auto (the default), thaw,", "thaw-row")
    usage_error(thaw("archive", "--brokers", "127.0.0.1:1", "--topic", "t", "--catalog", table, "--table", "ns.a",
                     "--layout", "rows", timeout=60), "--layout 'rows': use thaw (the default) or thaw-row")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_in_help_is_documented(thaw, command):
    """Each option `thaw COMMAND --help` lists is written up in the command's page (docs/COMMAND.md) or in a page
    of the options several commands share (cli.md's conventions, catalogs.md, schema-registry.md), so a new option
    cannot ship undocumented. The page's generated options table (its --help in Markdown) does not count."""
    import re
    from pathlib import Path
    docs = Path(__file__).resolve().parents[2] / "docs"
    text = "".join(re.sub(r"<!-- options:begin .*?<!-- options:end -->", "", p.read_text(), flags=re.S)
                   for p in (docs / f"{command}.md", docs / "cli.md", docs / "catalogs.md",
                             docs / "schema-registry.md"))
    help_text = thaw(command, "--help").stdout.decode()
    options = sorted(set(re.findall(r"^\s+(?:-\w,)?(--[a-z][a-z0-9-]+)", help_text, re.M)) - {"--help"})
    assert len(options) > 5, help_text
    undocumented = [o for o in options if not re.search(re.escape(o) + r"(?![a-z0-9-])", text)]
    assert not undocumented, f"thaw {command}: options in --help that no page documents: {undocumented}"


def test_options_tables_are_the_ones_help_prints(thaw):
    """Each command's page has a table of its options generated from its --help (scripts/gen-options-tables.py):
    an option added, renamed or described anew without the tables regenerated fails here, with the diff."""
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parents[2] / "scripts" / "gen-options-tables.py"
    p = subprocess.run([sys.executable, str(script), "--check", str(thaw.binary)], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, (f"{p.stderr}{p.stdout[-6000:]}\nregenerate the tables: "
                               f"scripts/gen-options-tables.py {thaw.binary}")


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_page_opens_with_its_synopsis_and_options(command):
    """docs/COMMAND.md: the title and a few words of prose, then "## Synopsis" (a ```text block of the command line)
    and "## Options" (the generated table), before any other section, example or table."""
    from pathlib import Path
    page = Path(__file__).resolve().parents[2] / "docs" / f"{command}.md"
    text = page.read_text()
    assert text.startswith(f"# `thaw {command}`"), text[:200]
    intro, _, rest = text.split("\n", 1)[1].partition("\n## ")
    assert "```" not in intro and not re.search(r"^\|", intro, re.M), f"{page}: a block before the synopsis"
    assert rest.startswith("Synopsis\n\n```text\nthaw " + command), rest[:200]
    synopsis, _, rest = rest.partition("\n## ")
    assert synopsis.rstrip().endswith("```"), synopsis
    assert rest.startswith("Options\n\n<!-- options:begin (generated by scripts/gen-options-tables.py; do not "
                           "edit) -->\n| option | value | default | description |\n"), rest[:300]


def test_serve_says_at_info_level_what_changes(thaw, tmp_path):
    """Issue 24: serve logs snapshot refreshes, group rebalances and the cache's hit rate at info level, briefly."""
    from serve_harness import free_port
    from confluent_kafka import Consumer
    (tmp_path / "wh").mkdir()
    wh = str(tmp_path / "wh")
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists("ns")
    t = fixtures.create(cat, wh, "ns.told", fixtures.canonical_schema(), spec=fixtures.CANONICAL_SPEC,
                        properties=fixtures.thaw_props("src"))
    fixtures.append_rows(t, [fixtures.canonical_row(fixtures.rec(0, o, T0 + o, b"k", b"v" * 100)) for o in range(50)])
    first = t.refresh().current_snapshot().snapshot_id
    port = free_port()

    def read_in_group(group: str, want: int = 50) -> int:
        c = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": group, "auto.offset.reset": "earliest"})
        c.subscribe(["told"])
        got, deadline = 0, time.monotonic() + 60
        while got < want and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got += 1
        c.close()
        return got

    def consume_in_a_group_then_grow_the_table():
        assert read_in_group("g-told") == 50
        fixtures.append_rows(t.refresh(), [fixtures.canonical_row(fixtures.rec(0, o, T0 + o, b"k", b"v"))
                                           for o in range(50, 60)])
        for _ in range(2):  # read again from the cache
            read_in_group(f"g-{uuid.uuid4().hex[:6]}")
        time.sleep(12)  # the cache's line comes every ten refresh intervals at most (10 s here)

    log = serve_log(thaw, fixtures.catalog_uri(wh), port, "--listen", f"127.0.0.1:{port}", "--state",
                    str(tmp_path / "state"), "--refresh", "1s", "--group-initial-rebalance-delay", "0",
                    topic="told=ns.told", then=consume_in_a_group_then_grow_the_table)
    now = t.refresh().current_snapshot().snapshot_id
    assert f"thaw serve: info: topic 'told' (table ns.told): serving snapshot {now} (was {first})" in log, log
    assert "thaw serve: info: group 'g-told': generation 1 with 1 members" in log, log
    assert re.search(r"thaw serve: info: batch cache: \d+ segments, .* of 1024 MiB; \d+% of \d+ segment lookups", log), log


def test_replay_json_fields_are_the_documented_ones(thaw, table, kafka):
    """Issue 24: `replay --json` documented field by field (docs/replay.md, "The `--json` summary")."""
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "replay.md").read_text()
    section = text[text.index("## The `--json` summary"):]
    section = section[:section.index("\n## ", 5)]
    documented = re.findall(r"^\| `([a-z_]+)` \|", section, re.M)
    p = thaw("replay", *tbl(table), "--brokers", kafka.bootstrap, "--topic", topic_name(), "--create-topic",
             "--partitions", "1", "--to-offset", "4", "--json", "--verify", timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    got = json.loads(p.stdout.decode().splitlines()[-1])
    assert list(got) == documented, (list(got), documented)
    assert got["records"] == 4 and got["next_offsets"] == {"1": 4} and got["verify"]["ok"] is True


def documented_fields(page: str, heading: str) -> list[str]:
    """The `| `field` | ... |` rows of one section of a docs page."""
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / page).read_text()
    section = text[text.index(heading):]
    section = section[:section.index("\n## ", 5)] if "\n## " in section[5:] else section
    return re.findall(r"^\| `([a-z_]+)` \|", section, re.M)


def test_replay_dry_run_json_fields_are_the_documented_ones(thaw, table):
    """`replay --dry-run --json`: one object whose fields are docs/replay.md's table, in its order; no broker is
    contacted (port 1 listens to nothing)."""
    documented = documented_fields("replay.md", "## The `--dry-run --json` plan")
    p = thaw("replay", *tbl(table), "--brokers", "127.0.0.1:1", "--topic", "t", "--partitions", "1", "--from-offset",
             "5", "--dry-run", "--json", timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    got = json.loads(p.stdout.decode())
    assert list(got) == documented, (list(got), documented)
    assert got["dry_run"] is True and got["partitions"] == [1] and got["range"] == "partitions=1 from-offset=5"
    assert got["records_at_most"] >= 1195 and got["topic"] == "t" and got["warnings"] == []


def test_archive_dry_run_plans_and_writes_nothing(thaw, table, kafka, tmp_path):
    """`archive --dry-run`: each partition's start (the table's offset, else --from-offset) and end; no table is
    created, nothing is committed; `--json` fields are docs/archive.md's table."""
    topic = topic_name()
    kafka.create_topic(topic, 2)
    def produce(records):
        pr = kafka.producer()
        for key, value, part in records:
            pr.produce(topic, key=key, value=value, partition=part)
        assert pr.flush(30) == 0

    produce([(f"k{i}".encode(), f"v{i}".encode(), i % 2) for i in range(10)])
    base = ["archive", "--brokers", kafka.bootstrap, "--topic", topic, "--catalog", table, "--table", f"ns.dry{os.getpid()}"]
    create = ["--create", "--warehouse", str(tmp_path)]
    p = thaw(*base, *create, "--dry-run", "--json", timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    got = json.loads(p.stdout.decode())
    assert list(got) == documented_fields("archive.md", "## Dry run"), got
    assert got["table_exists"] is False and got["offsets_at_most"] == 10
    assert [(e["partition"], e["from_offset"], e["to_offset"], e["from"]) for e in got["partitions"]] == \
        [(0, 0, 5, "from-offset"), (1, 0, 5, "from-offset")]
    assert not list(tmp_path.iterdir()), "a dry run wrote files"
    text = thaw(*base, "--dry-run", timeout=120)
    assert text.returncode == 1 and "--create" in text.stderr.decode(), text.stderr.decode()
    # After a real run, a dry run starts where the table ends.
    assert thaw(*base, *create, timeout=120).returncode == 0
    produce([(b"k", b"later", 0)])
    p = thaw(*base, "--dry-run", timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    out = p.stdout.decode()
    assert f"partition   {topic}/0: from 5 (the table's next offset) to 6 (1 offsets)" in out, out
    assert "offsets     at most 1 " in out, out


def test_from_offset_reads_as_kcats_o(thaw, table, kafka):
    """Issue 24: --from-offset means the same on inspect, replay and archive (earliest, latest, N), and on inspect
    kcat's relative -N from the end."""
    def offsets(*args):
        p = thaw("inspect", *tbl(table), "--records", "--format", r"%p:%o\n", *args, timeout=60)
        assert p.returncode == 0, p.stderr.decode()
        return p.stdout.decode().split()

    assert offsets("--from-offset", "-2") == ["0:1198", "0:1199", "1:1198", "1:1199", "2:1198", "2:1199"]
    assert offsets("--from-offset=-1", "--partitions", "1") == ["1:1199"]
    assert offsets("--from-offset", "-5000", "--partitions", "2", "--limit", "1") == ["2:0"]  # more than there is
    assert offsets("--from-offset", "latest") == []
    assert offsets("--from-offset", "earliest", "--limit", "1") == ["0:0"]
    assert offsets("--from-offset", "1198", "--partitions", "0") == ["0:1198", "0:1199"]
    usage_error(thaw("inspect", *tbl(table), "--from-offset", "-x", timeout=60), "--from-offset -N: N 'x'")
    # replay takes earliest as from the start, and latest only with --follow (test_follow.py has the run).
    usage_error(thaw("replay", *tbl(table), "--brokers", "127.0.0.1:1", "--topic", "t", "--from-offset", "latest",
                     timeout=60), "without --follow it selects nothing: add --follow")
    topic = topic_name()
    p = thaw("replay", *tbl(table), "--brokers", kafka.bootstrap, "--topic", topic, "--create-topic", "--partitions",
             "0", "--from-offset", "earliest", "--to-offset", "3", "--json", timeout=120)
    assert p.returncode == 0 and json.loads(p.stdout.decode().splitlines()[-1])["records"] == 3, p.stderr.decode()
