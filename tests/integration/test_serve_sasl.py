"""`thaw serve --sasl-users FILE` (issue 22): SASL on the listener, PLAIN and
SCRAM-SHA-256/512 as Kafka speaks them (SaslHandshake v1 + SaslAuthenticate),
against a file of salted SCRAM credentials written by `thaw serve --add-user`
(no password at rest). Read by kcat (librdkafka) and the Java console
consumer; SASL_SSL with --tls-cert.
"""

from __future__ import annotations

import subprocess

import fixtures
from serve_harness import CONSOLE_CONSUMER, Topic, java_tool, kcat_cmd, thaw_serve  # noqa: F401  (fixture)
from tls_certs import certs  # noqa: F401  (fixture)

TABLE = "ns.sasl"
COUNT = 30


def make_table(wh: str) -> None:
    fixtures.value_table(wh, TABLE, COUNT)


def add_user(thaw_bin, users, name: str, password: str) -> None:
    p = subprocess.run([str(thaw_bin), "serve", "--sasl-users", str(users), "--add-user", name],
                       input=password + "\n", capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert password not in users.read_text()  # salted credentials only


def offsets(stdout: str) -> list[int]:
    import json
    return sorted(json.loads(x)["offset"] for x in stdout.splitlines() if x.strip())


def kcat_sasl(bootstrap, mechanism, user, password, *extra, protocol="sasl_plaintext"):
    return subprocess.run(kcat_cmd("-b", bootstrap, "-t", "sasl", "--start", "beginning", "--timeout", "60",
                                   "-X", f"security.protocol={protocol}", "-X", f"sasl.mechanisms={mechanism}",
                                   "-X", f"sasl.username={user}", "-X", f"sasl.password={password}", *extra),
                          capture_output=True, text=True, timeout=120)


def test_plain_and_scram_users_read_and_others_are_refused(thaw_serve, thaw_bin, tmp_path):
    wh = str(tmp_path / "wh")
    make_table(wh)
    users = tmp_path / "users"
    add_user(thaw_bin, users, "alice", "alice-secret")
    add_user(thaw_bin, users, "bob", "bob-secret")
    add_user(thaw_bin, users, "alice", "alice-new")  # replaces alice's credentials
    assert oct(users.stat().st_mode & 0o777) == "0o600"
    with thaw_serve(fixtures.catalog_uri(wh), [Topic("sasl", TABLE, "thaw")],
                    extra=["--sasl-users", str(users)]) as (bootstrap, _proc):
        for mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            for user, pw in (("alice", "alice-new"), ("bob", "bob-secret")):
                p = kcat_sasl(bootstrap, mechanism, user, pw)
                assert p.returncode == 0, (mechanism, user, p.stderr)
                assert offsets(p.stdout) == list(range(COUNT)), (mechanism, user)
        # A wrong or old password, an unknown user: refused.
        for mechanism in ("PLAIN", "SCRAM-SHA-256"):
            for user, pw in (("alice", "alice-secret"), ("mallory", "x")):
                p = kcat_sasl(bootstrap, mechanism, user, pw)
                assert p.returncode != 0 and not p.stdout.strip(), (mechanism, user, p.stdout)
        # A client without SASL gets nothing.
        p = subprocess.run(kcat_cmd("-b", bootstrap, "-t", "sasl", "--start", "beginning", "--timeout", "20"),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode != 0 and not p.stdout.strip(), p.stdout
        # The Java client with SCRAM-SHA-512 (sasl.jaas.config).
        cfg = tmp_path / "java-sasl.properties"
        cfg.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                       "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                       'username="bob" password="bob-secret";\n')
        p = subprocess.run(java_tool(CONSOLE_CONSUMER, "--bootstrap-server", bootstrap, "--topic", "sasl",
                                     "--from-beginning", "--max-messages", str(COUNT), "--timeout-ms", "60000",
                                     "--consumer.config", str(cfg)), capture_output=True, text=True, timeout=180)
        assert p.returncode == 0, p.stderr[-3000:]
        assert p.stdout.splitlines() == [f"value {o}" for o in range(COUNT)]
    log = (tmp_path / "serve0" / "serve-1.stderr").read_text()
    assert "SASL authentication failed for user 'mallory'" in log, log[-3000:]
    assert "SASL authentication failed for user 'alice'" in log, log[-3000:]
    assert "alice-secret" not in log and "alice-new" not in log
    assert "before SASL authentication" in log, log[-3000:]


def test_sasl_ssl(thaw_serve, thaw_bin, tmp_path, certs):
    wh = str(tmp_path / "wh")
    make_table(wh)
    users = tmp_path / "users"
    add_user(thaw_bin, users, "carol", "carol-secret")
    with thaw_serve(fixtures.catalog_uri(wh), [Topic("sasl", TABLE, "thaw")],
                    extra=["--sasl-users", str(users), "--tls-cert", str(certs / "server.pem"),
                           "--tls-key", str(certs / "server.key")]) as (bootstrap, _proc):
        p = kcat_sasl(bootstrap, "SCRAM-SHA-256", "carol", "carol-secret", "-X", f"ssl.ca.location={certs / 'ca.pem'}",
                      protocol="sasl_ssl")
        assert p.returncode == 0, p.stderr
        assert offsets(p.stdout) == list(range(COUNT))


def test_bad_users_files_are_refused(thaw, tmp_path):
    wh = str(tmp_path / "wh")
    make_table(wh)
    base = ["serve", "--catalog", fixtures.catalog_uri(wh), "--topic", f"sasl={TABLE}", "--listen", "127.0.0.1:0",
            "--state", str(tmp_path / "state")]
    bad = tmp_path / "bad"
    bad.write_text("alice SCRAM-SHA-1 iterations=4096 salt=AA== stored_key=AA== server_key=AA==\n")
    empty = tmp_path / "empty"
    empty.write_text("# nobody\n")
    for extra, message in (
            (["--sasl-users", str(tmp_path / "missing")], "cannot read the file"),
            (["--sasl-users", str(bad)], "line 1: 'SCRAM-SHA-1' is not SCRAM-SHA-256 or SCRAM-SHA-512"),
            (["--sasl-users", str(empty)], "no users (add one with"),
            (["--sasl-users", str(empty), "--upstream", "127.0.0.1:1"], "no users"),
            (["--add-user", "x"], "--add-user needs --sasl-users FILE")):
        p = thaw(*base, *extra, timeout=60)
        err = p.stderr.decode(errors="replace")
        assert p.returncode == 2, (extra, p.returncode, err)
        assert message in err, (extra, err)
