"""`thaw replay` and `thaw archive` against a secured cluster (issue 22): a
single-node broker with a SASL_SSL listener (SCRAM-SHA-256/512 users written
at format time, the same users for PLAIN; scripts/kafka.sh
THAW_KAFKA_SASL_USERS), StandardAuthorizer, allow.everyone.if.no.acl.found=false,
ACLs granted through the Admin API by the super user `admin` over SASL_SSL
with SCRAM-SHA-512. Thaw connects with `-X security.protocol=SASL_SSL
-X sasl.mechanism=M -X sasl.username=U -X sasl.password=@FILE
-X ssl.ca.location=CA`: M is SCRAM-SHA-256 when the librdkafka Thaw links can
do SCRAM with a Kafka 4 broker (2.6.1 and later; before, every SCRAM proof is
refused, confluentinc/librdkafka#4895), else PLAIN (over TLS, as Kafka allows
it); test_scram_login checks Thaw's answer either way.

With the ACLs docs/replay.md and docs/archive.md list, records arrive and rows
are committed. Without one of them the command exits non-zero with a message
naming the user, the permission and the resource (and the kafka-acls.sh
command that grants it), and leaves nothing half-done: no record in the
topic (not even an aborted one), no table, no checkpoint. No password ever
appears in the output.

The harness itself (topic creation, reading topics back) uses the PLAINTEXT
listener, whose principal (ANONYMOUS) is a super user.
"""

from __future__ import annotations

import ctypes
import json
import re
import subprocess
import time
import uuid
from pathlib import Path

import pytest

import fixtures
from archive_cli import archive_args, committed_next_offsets, metadata_location, new_catalog
from kafka_broker import KafkaBroker
from tls_certs import make_certs

ADMIN_PW = "adm-" + uuid.uuid4().hex
# One user per scenario: ACLs only ever grow, so each keeps exactly its own.
USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory"]
PASSWORDS = {u: f"{u}-pw-{uuid.uuid4().hex}" for u in USERS}
COUNT = 40
SCRAM_FIXED = 0x020601ff  # librdkafka 2.6.1


def thaw_librdkafka(thaw_bin) -> tuple[int, str]:
    """The version of the librdkafka the thaw binary links (ldd, then its rd_kafka_version())."""
    out = subprocess.run(["ldd", str(thaw_bin)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"librdkafka\.so\S* => (\S+)", out)
    assert m, f"thaw does not link librdkafka dynamically:\n{out}"
    lib = ctypes.CDLL(m.group(1))
    lib.rd_kafka_version_str.restype = ctypes.c_char_p
    return lib.rd_kafka_version(), lib.rd_kafka_version_str().decode()


@pytest.fixture(scope="module")
def mechanism(thaw_bin) -> str:
    return "SCRAM-SHA-256" if thaw_librdkafka(thaw_bin)[0] >= SCRAM_FIXED else "PLAIN"


class Secured:
    def __init__(self, broker: KafkaBroker, certs: Path, root: Path, mechanism: str = "PLAIN"):
        self.mechanism = mechanism  # Thaw's
        self.broker = broker
        self.certs = certs
        self.root = root
        self._admin = None

    def client_conf(self, user: str, password: str) -> dict:
        return {"bootstrap.servers": self.broker.sasl_ssl_bootstrap, "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": password,
                "ssl.ca.location": str(self.certs / "ca.pem")}

    def admin(self):
        """The super user's AdminClient, over SASL_SSL (SCRAM-SHA-512)."""
        if self._admin is None:
            from confluent_kafka.admin import AdminClient
            self._admin = AdminClient(self.client_conf("admin", ADMIN_PW))
        return self._admin

    def grant(self, user: str, resource: str, name: str, *operations: str) -> None:
        """ACLs ALLOW User:user OPERATION on a literal TOPIC, GROUP or
        TRANSACTIONAL_ID (resource), granted by admin; waits until they apply."""
        from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, ResourcePatternType,
                                           ResourceType)
        bindings = [AclBinding(getattr(ResourceType, resource), name, ResourcePatternType.LITERAL, f"User:{user}",
                               "*", getattr(AclOperation, op), AclPermissionType.ALLOW) for op in operations]
        for f in self.admin().create_acls(bindings, request_timeout=30).values():
            f.result(timeout=30)
        time.sleep(0.3)  # a single node: the ACLs apply once its metadata log has them

    def create_topic(self, name: str, partitions: int = 1) -> None:
        self.broker.create_topic(name, partitions)

    def x_args(self, user: str, password: str | None = None, mechanism: str | None = None,
               inline: bool = False) -> list[str]:
        """Thaw's connection arguments; the password from a file (@FILE), or
        `inline` on the command line."""
        password = password if password is not None else PASSWORDS[user]
        pw = self.root / f"{user}-{uuid.uuid4().hex[:6]}.password"
        pw.write_text(password + "\n")
        return ["--brokers", self.broker.sasl_ssl_bootstrap, "-X", "security.protocol=SASL_SSL",
                "-X", f"sasl.mechanism={mechanism or self.mechanism}", "-X", f"sasl.username={user}",
                "-X", f"sasl.password={password if inline else '@' + str(pw)}",
                "-X", f"ssl.ca.location={self.certs / 'ca.pem'}"]

    def high_watermarks(self, topic: str) -> dict[int, int]:
        """Every record written, committed, aborted or open (read_uncommitted ends)."""
        return {p: hi for p, (_, hi) in self.broker.offsets(topic, "read_uncommitted", 30).items()}


@pytest.fixture(scope="module")
def secured(tmp_path_factory, mechanism):
    d = tmp_path_factory.mktemp("kafka-sasl")
    certs = make_certs(d / "certs")
    keystore = certs / "keystore.pem"
    keystore.write_bytes((certs / "server.key").read_bytes() + (certs / "server.pem").read_bytes())
    users = ",".join([f"admin:{ADMIN_PW}"] + [f"{u}:{PASSWORDS[u]}" for u in USERS])
    broker = KafkaBroker.start(str(d / "kafka"), env_extra={"THAW_KAFKA_SSL_KEYSTORE": str(keystore),
                                                            "THAW_KAFKA_SASL_USERS": users})
    try:
        assert broker.sasl_ssl_bootstrap, "scripts/kafka.sh opened no SASL_SSL listener"
        yield Secured(broker, certs, d, mechanism)
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A table of COUNT records (key kN, value "value N") to replay."""
    wh = str(tmp_path_factory.mktemp("wh-secured"))
    fixtures.value_table(wh, "ns.values", COUNT)
    return ["--catalog", fixtures.catalog_uri(wh), "--table", "ns.values"]


def run(thaw_bin, *args, timeout: float = 180) -> subprocess.CompletedProcess:
    p = subprocess.run([str(thaw_bin), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    out = p.stdout + p.stderr
    for secret in [ADMIN_PW, *PASSWORDS.values()]:
        assert secret not in out, f"a password is in thaw's output:\n{out[-3000:]}"
    return p


def ok(p: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout[-2000:]}\nstderr:\n{p.stderr[-4000:]}"
    return p


def refused(p: subprocess.CompletedProcess, user: str, operation: str, resource: str, grant: str) -> str:
    """The run failed, naming the user, the permission and the resource, and how to grant it."""
    assert p.returncode != 0, f"exit {p.returncode}\nstdout:\n{p.stdout[-2000:]}\nstderr:\n{p.stderr[-4000:]}"
    err = p.stderr
    assert f"user '{user}' may not {operation} {resource}" in err, err[-3000:]
    assert f"kafka-acls.sh --bootstrap-server" in err and f"--allow-principal User:{user}" in err, err[-3000:]
    assert grant in err, err[-3000:]
    return err


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def grant_replay(s: Secured, user: str, topic: str) -> None:
    """What an at-least-once replay into an existing topic needs."""
    s.grant(user, "TOPIC", topic, "DESCRIBE", "DESCRIBE_CONFIGS", "WRITE")


def grant_job(s: Secured, user: str, checkpoints: str) -> None:
    """A job's checkpoint topic: read at the start, created on first use, written."""
    s.grant(user, "TOPIC", checkpoints, "DESCRIBE", "READ", "WRITE", "CREATE")


# ---------------------------------------------------------------------------
# With the ACLs they need, replay (at-least-once and exactly-once) and
# archive work over SASL_SSL.

def test_replay_and_archive_with_their_acls(thaw_bin, secured, source, tmp_path):
    s = secured
    plain, eos, checkpoints = name("plain"), name("eos"), name("jobs")
    for t in (plain, eos):
        s.create_topic(t, 1)
    grant_replay(s, "alice", plain)
    p = ok(run(thaw_bin, "replay", *source, *s.x_args("alice"), "--topic", plain, "--json"))
    assert json.loads(p.stdout)["records"] == COUNT
    got = s.broker.consume_all(plain)
    assert [r["value"] for r in got] == [f"value {i}".encode() for i in range(COUNT)]

    # Exactly-once: a transactional id and the job's checkpoint topic.
    job = name("job")
    grant_replay(s, "alice", eos)
    grant_job(s, "alice", checkpoints)
    s.grant("alice", "TRANSACTIONAL_ID", f"thaw-replay-{job}", "DESCRIBE", "WRITE")
    p = ok(run(thaw_bin, "replay", *source, *s.x_args("alice"), "--topic", eos, "--exactly-once", "--job", job,
               "--checkpoint-topic", checkpoints, "--json"))
    assert json.loads(p.stdout)["records"] == COUNT
    assert len(s.broker.consume_all(eos)) == COUNT
    # The job is complete: a rerun reads its checkpoint (READ on the topic) and sends nothing.
    p = ok(run(thaw_bin, "replay", *source, *s.x_args("alice"), "--topic", eos, "--exactly-once", "--job", job,
               "--checkpoint-topic", checkpoints, "--json"))
    assert len(s.broker.consume_all(eos)) == COUNT

    # Archive what was replayed, committing the offsets to a consumer group too.
    group = name("group")
    s.grant("alice", "TOPIC", plain, "READ")
    s.grant("alice", "GROUP", group, "READ")
    uri = new_catalog(str(tmp_path / "wh"))
    args = archive_args(s.broker, uri, "ns.archived", plain, "--group", group, "--json")
    args[args.index("--brokers"):args.index("--brokers") + 2] = []
    p = ok(run(thaw_bin, *args, *s.x_args("alice", inline=True)))  # run() checks it is never printed
    assert json.loads(p.stdout)["records"] == COUNT
    assert committed_next_offsets(uri, "ns.archived", plain) == {0: COUNT}


# ---------------------------------------------------------------------------
# Each missing permission: a clear refusal, nothing half-done.

def test_replay_without_write_on_any_topic(thaw_bin, secured, source):
    """bob may see the topic but WRITE nothing: the brokers give his idempotent
    producer no producer id (CLUSTER_AUTHORIZATION_FAILED, KIP-679)."""
    s = secured
    topic = name("nowrite")
    s.create_topic(topic, 1)
    s.grant("bob", "TOPIC", topic, "DESCRIBE", "DESCRIBE_CONFIGS")
    p = run(thaw_bin, "replay", *source, *s.x_args("bob"), "--topic", topic)
    refused(p, "bob", "WRITE", f"topic '{topic}'", f"--operation Write --topic {topic}")
    assert s.high_watermarks(topic) == {0: 0}


def test_replay_without_write_on_the_target(thaw_bin, secured, source):
    """carol may WRITE another topic, not the target: the broker refuses the
    first batch (TOPIC_AUTHORIZATION_FAILED) and nothing lands."""
    s = secured
    topic, other = name("target"), name("other")
    s.create_topic(topic, 1)
    s.create_topic(other, 1)
    s.grant("carol", "TOPIC", other, "WRITE")
    s.grant("carol", "TOPIC", topic, "DESCRIBE", "DESCRIBE_CONFIGS")
    p = run(thaw_bin, "replay", *source, *s.x_args("carol"), "--topic", topic)
    refused(p, "carol", "WRITE", f"topic '{topic}'", f"--operation Write --topic {topic}")
    assert s.high_watermarks(topic) == {0: 0}
    # Exactly-once, with the transactional id and checkpoints allowed: the
    # transaction is refused the partition, nothing is written, no checkpoint.
    job, checkpoints = name("job"), name("jobs")
    grant_job(s, "carol", checkpoints)
    s.grant("carol", "TRANSACTIONAL_ID", f"thaw-replay-{job}", "DESCRIBE", "WRITE")
    p = run(thaw_bin, "replay", *source, *s.x_args("carol"), "--topic", topic, "--exactly-once", "--job", job,
            "--checkpoint-topic", checkpoints)
    refused(p, "carol", "WRITE", f"topic '{topic}'", f"--operation Write --topic {topic}")
    assert s.high_watermarks(topic) == {0: 0}
    assert s.broker.consume_all(checkpoints) == []


def test_exactly_once_replay_without_its_transactional_id(thaw_bin, secured, source):
    s = secured
    topic, job, checkpoints = name("eos"), name("job"), name("jobs")
    s.create_topic(topic, 1)
    grant_replay(s, "dave", topic)
    grant_job(s, "dave", checkpoints)
    p = run(thaw_bin, "replay", *source, *s.x_args("dave"), "--topic", topic, "--exactly-once", "--job", job,
            "--checkpoint-topic", checkpoints)
    refused(p, "dave", "WRITE", f"transactional id 'thaw-replay-{job}'",
            f"--operation Write --transactional-id thaw-replay-{job}")
    assert s.high_watermarks(topic) == {0: 0}
    # Refused before the checkpoint topic was even read or created.
    assert checkpoints not in s.broker.admin().list_topics(timeout=30).topics


def test_archive_without_read_on_the_topic(thaw_bin, secured, tmp_path):
    s = secured
    topic = name("src")
    s.create_topic(topic, 2)
    prod = s.broker.producer()
    for i in range(COUNT):
        prod.produce(topic, value=f"v{i}".encode(), partition=i % 2)
    prod.flush(30)
    s.grant("erin", "TOPIC", topic, "DESCRIBE")
    uri = new_catalog(str(tmp_path / "wh"))
    args = archive_args(s.broker, uri, "ns.noread", topic)
    args[args.index("--brokers"):args.index("--brokers") + 2] = []
    p = run(thaw_bin, *args, *s.x_args("erin"))
    refused(p, "erin", "READ", f"topic '{topic}'", f"--operation Read --topic {topic}")
    assert metadata_location(uri, "ns.noread") is None, "archive created the table before it could read"

    # No ACL at all on the topic: refused at its metadata (DESCRIBE).
    hidden = name("hidden")
    s.create_topic(hidden, 1)
    args = archive_args(s.broker, uri, "ns.hidden", hidden)
    args[args.index("--brokers"):args.index("--brokers") + 2] = []
    p = run(thaw_bin, *args, *s.x_args("erin"))
    refused(p, "erin", "DESCRIBE", f"topic '{hidden}'", f"--operation Describe --topic {hidden}")
    assert metadata_location(uri, "ns.hidden") is None


def test_archive_without_read_on_its_group(thaw_bin, secured, tmp_path):
    s = secured
    topic, group = name("src"), name("group")
    s.create_topic(topic, 1)
    prod = s.broker.producer()
    for i in range(COUNT):
        prod.produce(topic, value=f"v{i}".encode())
    prod.flush(30)
    s.grant("frank", "TOPIC", topic, "DESCRIBE", "READ")
    uri = new_catalog(str(tmp_path / "wh"))
    args = archive_args(s.broker, uri, "ns.nogroup", topic, "--group", group)
    args[args.index("--brokers"):args.index("--brokers") + 2] = []
    p = run(thaw_bin, *args, *s.x_args("frank"))
    refused(p, "frank", "READ", f"consumer group '{group}'", f"--operation Read --group {group}")
    assert metadata_location(uri, "ns.nogroup") is None, "archive created the table before it could commit to the group"
    # Without --group no group is used: the same user archives the topic.
    p = ok(run(thaw_bin, *args[:args.index("--group")], *args[args.index("--group") + 2:], "--json",
               *s.x_args("frank")))
    assert json.loads(p.stdout)["records"] == COUNT


def test_a_wrong_password_is_an_authentication_error(thaw_bin, secured, source, tmp_path):
    s = secured
    topic = name("auth")
    s.create_topic(topic, 1)
    grant_replay(s, "grace", topic)
    wrong = "wrong-" + uuid.uuid4().hex
    t0 = time.monotonic()
    p = run(thaw_bin, "replay", *source, *s.x_args("grace", wrong), "--topic", topic, timeout=120)
    took = time.monotonic() - t0
    assert p.returncode == 1, p.stderr[-3000:]
    assert "authentication" in p.stderr and "sasl.password" in p.stderr, p.stderr[-3000:]
    assert wrong not in p.stdout + p.stderr
    assert took < 30, f"took {took:.1f} s to report a failed authentication"
    assert s.high_watermarks(topic) == {0: 0}

    uri = new_catalog(str(tmp_path / "wh"))
    args = archive_args(s.broker, uri, "ns.auth", topic)
    args[args.index("--brokers"):args.index("--brokers") + 2] = []
    p = run(thaw_bin, *args, *s.x_args("grace", wrong, inline=True), timeout=120)
    assert p.returncode == 1, p.stderr[-3000:]
    assert "authentication" in p.stderr, p.stderr[-3000:]
    assert wrong not in p.stdout + p.stderr
    assert metadata_location(uri, "ns.auth") is None


def test_scram_login(thaw_bin, secured, source):
    """SCRAM-SHA-256 from Thaw: records arrive when its librdkafka can do
    SCRAM with Kafka 4; otherwise it fails at once and says why."""
    s = secured
    topic = name("scram")
    s.create_topic(topic, 1)
    grant_replay(s, "heidi", topic)
    version, version_str = thaw_librdkafka(thaw_bin)
    t0 = time.monotonic()
    p = run(thaw_bin, "replay", *source, *s.x_args("heidi", mechanism="SCRAM-SHA-256"), "--topic", topic)
    if version >= SCRAM_FIXED:
        ok(p)
        assert len(s.broker.consume_all(topic)) == COUNT
    else:
        assert p.returncode != 0 and time.monotonic() - t0 < 30, p.stderr[-3000:]
        assert "authentication to Kafka brokers" in p.stderr, p.stderr[-3000:]
        assert f"this Thaw uses librdkafka {version_str}" in p.stderr and "2.6.1" in p.stderr, p.stderr[-3000:]
        assert "sasl.mechanism=PLAIN" in p.stderr, p.stderr[-3000:]
        assert s.high_watermarks(topic) == {0: 0}


def read_through(conf: dict, topic: str, partitions: int, want: int, timeout: float = 90):
    """Records (and errors) a confluent-kafka consumer reads from every
    partition's offset 0 (assign, no group needed)."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({**conf, "group.id": conf.get("group.id", "unused"), "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got, errors = [], []
    deadline = time.monotonic() + timeout
    try:
        while len(got) < want and time.monotonic() < deadline:
            m = c.poll(1.0)
            if m is None:
                continue
            if m.error():
                errors.append(m.error())
                if not m.error().retriable() and len(errors) > 3:
                    break
                continue
            got.append(m)
    finally:
        c.close()
    return got, errors


def test_tiered_serve_in_front_of_the_secured_cluster(thaw_bin, secured, tmp_path):
    """`thaw serve --upstream` (issue 22, SASL in tiered mode) in front of the
    SASL_SSL broker with ACLs, TLS on both legs: Thaw's own connection (to
    learn the brokers) logs in as ivan with SCRAM-SHA-512 (Thaw's own SCRAM
    client, kafka/scram.h); each client authenticates to the broker through
    Thaw on its own connection, and the broker's ACLs decide every read,
    the history Thaw serves from the table included."""
    from upstream_harness import Tiered, _b64, diff, norm_broker

    s = secured
    ca = str(s.certs / "ca.pem")
    t = Tiered(thaw_bin, s.broker, tmp_path, partitions=2, truncate="delete_records")
    try:
        s.grant("judy", "TOPIC", t.topic, "READ")
        pw = tmp_path / "ivan.password"
        pw.write_text(PASSWORDS["ivan"] + "\n")
        own = ["-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanism=SCRAM-SHA-512", "-X", "sasl.username=ivan",
               "-X", f"sasl.password=@{pw}", "-X", f"ssl.ca.location={ca}"]
        tls = ["--tls-cert", str(s.certs / "server.pem"), "--tls-key", str(s.certs / "server.key")]
        boot = t.start_another(*own, *tls, upstream=s.broker.sasl_ssl_bootstrap)
        deadline = time.monotonic() + 30
        while "is reachable through" not in t.log_of(boot):  # Thaw's own Metadata, after its SCRAM login
            assert time.monotonic() < deadline, t.log_of(boot)[-3000:]
            time.sleep(0.2)

        client = {"bootstrap.servers": boot, "security.protocol": "SASL_SSL", "ssl.ca.location": ca,
                  "sasl.mechanism": "SCRAM-SHA-512"}
        expected = t.expected()
        got, errors = read_through({**client, "sasl.username": "judy", "sasl.password": PASSWORDS["judy"]},
                                   t.topic, t.partitions, len(expected))
        rows = sorted((m.partition(), m.offset(), m.timestamp()[1], _b64(m.key()), _b64(m.value()),
                       tuple((k, _b64(v)) for k, v in (m.headers() or []))) for m in got)
        assert rows == expected, (diff(expected, rows), errors)
        assert min(r[1] for r in rows) == 0  # the history only the table holds

        # mallory logs in, may use her group and DESCRIBE the topic (so she
        # fetches), but no ACL lets her READ it: each Fetch refused, the part
        # Thaw would answer from the table too.
        s.grant("mallory", "GROUP", "mallory-g", "READ")
        s.grant("mallory", "TOPIC", t.topic, "DESCRIBE")
        got, errors = read_through({**client, "sasl.username": "mallory", "sasl.password": PASSWORDS["mallory"],
                                    "group.id": "mallory-g"}, t.topic, t.partitions, 1, timeout=30)
        assert not got, [(m.partition(), m.offset()) for m in got]
        assert any("TOPIC_AUTHORIZATION_FAILED" in e.name() for e in errors), errors

        # A wrong password for Thaw's own login: said once, naming the user, never the password.
        bad_pw = tmp_path / "bad.password"
        bad_pw.write_text("not-ivans-password\n")
        bad = t.start_another(*[x if not x.startswith("sasl.password=") else f"sasl.password=@{bad_pw}" for x in own],
                              upstream=s.broker.sasl_ssl_bootstrap)
        deadline = time.monotonic() + 30
        while "SASL_AUTHENTICATION_FAILED" not in t.log_of(bad):
            assert time.monotonic() < deadline, t.log_of(bad)[-3000:]
            time.sleep(0.2)
        log = t.log_of(bad)
        assert "as user 'ivan'" in log, log[-2000:]
        for secret in ("not-ivans-password", PASSWORDS["ivan"], PASSWORDS["judy"], PASSWORDS["mallory"]):
            assert secret not in log and secret not in t.log_of(boot)
    finally:
        t.stop()
