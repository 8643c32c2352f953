"""`thaw serve --acl-file FILE` (issue 22): ACLs in Kafka's terms on a SASL
listener, read by confluent-kafka (librdkafka). alice may READ topic orders
and group g; bob may only DESCRIBE orders (and READ his group); nobody may
touch topic secret. What Kafka answers, Thaw answers: bob sees orders in
Metadata but his Fetch gets TOPIC_AUTHORIZATION_FAILED, secret is absent from
alice's topic list and named explicitly it is TOPIC_AUTHORIZATION_FAILED, a
group alice may not READ is GROUP_AUTHORIZATION_FAILED. A bad ACL file stops
serve with exit 2, naming the file and line.
"""

from __future__ import annotations

import subprocess
import time

import fixtures
import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient
from serve_harness import CONSOLE_CONSUMER, Topic, java_tool, thaw_serve  # noqa: F401  (fixture)

COUNT = 20
ACLS = """\
# alice reads orders in group g; bob may see orders but not read it
allow User:alice READ topic orders
allow User:alice READ group g
allow User:bob   DESCRIBE topic orders
allow User:bob   READ group prefixed:bob-
deny  User:*     ALL topic secret
"""


def add_user(thaw_bin, users, name: str, password: str) -> None:
    p = subprocess.run([str(thaw_bin), "serve", "--sasl-users", str(users), "--add-user", name],
                       input=password + "\n", capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def sasl(bootstrap: str, user: str, **extra) -> dict:
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanisms": "SCRAM-SHA-256", "sasl.username": user, "sasl.password": f"{user}-secret",
            "socket.timeout.ms": 10000, **extra}


def consumer(conf: dict, group: str) -> Consumer:
    return Consumer({**conf, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False,
                     "session.timeout.ms": 6000})


def poll_until(c: Consumer, want, timeout: float = 60.0):
    """Polls until `want(msg)` is true for a message or error; returns it."""
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        m = c.poll(1.0)
        if m is None:
            continue
        seen.append(m.error() or m.offset())
        if want(m):
            return m
    pytest.fail(f"nothing wanted within {timeout} s; saw {seen[-10:]}")


def error_code(m):
    return m.error().code() if m.error() else None


@pytest.fixture
def tables(tmp_path):
    wh = str(tmp_path / "wh")
    fixtures.value_table(wh, "ns.acl_orders", COUNT)
    fixtures.value_table(wh, "ns.acl_secret", COUNT)
    return wh


def test_acls_on_a_sasl_listener(thaw_serve, thaw_bin, tmp_path, tables):
    users = tmp_path / "users"
    for name in ("alice", "bob"):
        add_user(thaw_bin, users, name, f"{name}-secret")
    acls = tmp_path / "acls"
    acls.write_text(ACLS)
    with thaw_serve(fixtures.catalog_uri(tables), [Topic("orders", "ns.acl_orders", "thaw"),
                                                   Topic("secret", "ns.acl_secret", "thaw")],
                    extra=["--sasl-users", str(users), "--acl-file", str(acls), "--log-level", "debug"]) \
            as (bootstrap, _proc):
        alice, bob = sasl(bootstrap, "alice"), sasl(bootstrap, "bob")

        # alice: reads orders in group g and commits.
        c = consumer(alice, "g")
        try:
            md = c.list_topics(timeout=30)
            assert "orders" in md.topics and "secret" not in md.topics, sorted(md.topics)
            # Named explicitly: authorization failed, for a served topic and an unknown one alike.
            for name in ("secret", "nope"):
                t = c.list_topics(topic=name, timeout=30).topics[name]
                assert t.error is not None and t.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, (name, t.error)
            c.subscribe(["orders"])
            got = []
            while len(got) < COUNT:
                m = poll_until(c, lambda m: True)
                assert m.error() is None, m.error()
                got.append(m.offset())
            assert got == list(range(COUNT))
            c.commit(asynchronous=False)
            committed = c.committed([TopicPartition("orders", 0)], timeout=30)
            assert committed[0].error is None and committed[0].offset == COUNT, committed
        finally:
            c.close()

        # bob: sees orders and joins his group, but reading orders is refused.
        c = consumer(bob, "bob-1")
        try:
            md = c.list_topics(timeout=30)
            assert "orders" in md.topics and "secret" not in md.topics, sorted(md.topics)
            assert md.topics["orders"].error is None
            c.subscribe(["orders"])
            m = poll_until(c, lambda m: m.error() is not None or m.value() is not None)
            assert error_code(m) == KafkaError.TOPIC_AUTHORIZATION_FAILED, (m.error(), m.value())
            # Committing to a topic he may not READ: refused for that partition.
            try:
                errors = [tp.error for tp in c.commit(offsets=[TopicPartition("orders", 0, 5)], asynchronous=False)]
            except KafkaException as e:
                errors = [e.args[0]]
            assert [e.code() if e else None for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED], errors

            # Groups (g and bob-1 exist now): each lists and describes only his own.
            admin, bob_admin = AdminClient(alice), AdminClient(bob)
            listed = admin.list_consumer_groups(request_timeout=30).result(timeout=60)
            assert sorted(g.group_id for g in listed.valid) == ["g"], listed.valid
            bob_listed = bob_admin.list_consumer_groups(request_timeout=30).result(timeout=60)
            assert sorted(g.group_id for g in bob_listed.valid) == ["bob-1"], bob_listed.valid
            assert admin.describe_consumer_groups(["g"])["g"].result(timeout=60).group_id == "g"
            with pytest.raises(KafkaException) as e:
                bob_admin.describe_consumer_groups(["g"])["g"].result(timeout=60)
            assert e.value.args[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED, e.value
        finally:
            c.close()

        # The Java client as bob: the same refusal, in Java's words.
        cfg = tmp_path / "bob.properties"
        cfg.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                       "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                       'username="bob" password="bob-secret";\n')
        p = subprocess.run(java_tool(CONSOLE_CONSUMER, "--bootstrap-server", bootstrap, "--topic", "orders",
                                     "--group", "bob-java", "--from-beginning", "--max-messages", "1",
                                     "--timeout-ms", "30000", "--consumer.config", str(cfg)),
                           capture_output=True, text=True, timeout=180)
        out = p.stdout + p.stderr  # the tool logs to stdout and exits 0 having processed nothing
        assert "Processed a total of 0 messages" in out and "value " not in out, out[-3000:]
        assert "TopicAuthorizationException: Not authorized to access topics: [orders]" in out, out[-3000:]

        # A group alice may not use.
        c = consumer(alice, "not-hers")
        try:
            c.subscribe(["orders"])
            m = poll_until(c, lambda m: m.error() is not None or m.value() is not None)
            assert error_code(m) == KafkaError.GROUP_AUTHORIZATION_FAILED, (m.error(), m.value())
        finally:
            c.close()

    log = (tmp_path / "serve0" / "serve-1.stderr").read_text()
    assert "--acl-file" in log and "5 ACLs" in log, log[:3000]
    assert "User:bob denied READ on topic 'orders' (Fetch; --acl-file)" in log, log[-5000:]
    assert "User:alice denied DESCRIBE on group 'not-hers' (FindCoordinator; --acl-file)" in log, log[-5000:]
    assert "User:alice denied DESCRIBE on topic 'secret' (Metadata; --acl-file)" in log, log[-5000:]
    assert "alice-secret" not in log and "bob-secret" not in log


def test_acls_without_sasl_name_user_anonymous(thaw_serve, tmp_path, tables):
    acls = tmp_path / "acls"
    acls.write_text("allow User:ANONYMOUS READ topic orders\nallow User:ANONYMOUS READ group anon\n")
    # The ACL file from a --config file, as every serve option.
    cfg = tmp_path / "acl.toml"
    cfg.write_text(f'acl-file = "{acls}"\n')
    with thaw_serve(fixtures.catalog_uri(tables), [Topic("orders", "ns.acl_orders", "thaw"),
                                                   Topic("secret", "ns.acl_secret", "thaw")],
                    extra=["--config", str(cfg)]) as (bootstrap, _proc):
        c = consumer({"bootstrap.servers": bootstrap}, "anon")
        try:
            assert sorted(t for t in c.list_topics(timeout=30).topics) == ["orders"]
            c.subscribe(["orders"])
            m = poll_until(c, lambda m: m.error() is not None or m.value() is not None)
            assert m.error() is None and m.value() == b"value 0", (m.error(), m.value())
        finally:
            c.close()
        c = consumer({"bootstrap.servers": bootstrap}, "anon")
        try:
            c.subscribe(["secret"])  # its Metadata: TOPIC_AUTHORIZATION_FAILED, which librdkafka reports
            m = poll_until(c, lambda m: m.error() is not None or m.value() is not None)
            assert error_code(m) == KafkaError.TOPIC_AUTHORIZATION_FAILED, (m.error(), m.value())
        finally:
            c.close()


def test_bad_acl_files_are_refused(thaw, tmp_path, tables):
    base = ["serve", "--catalog", fixtures.catalog_uri(tables), "--topic", "orders=ns.acl_orders", "--listen",
            "127.0.0.1:0", "--state", str(tmp_path / "state")]
    bad = tmp_path / "bad"
    bad.write_text("allow User:alice READ topic orders\n\nallow User:bob REED topic orders\n")
    bad_principal = tmp_path / "bad-principal"
    bad_principal.write_text("allow bob READ topic orders\n")
    empty = tmp_path / "empty"
    empty.write_text("# nothing allowed\n")
    good = tmp_path / "good"
    good.write_text("allow User:* READ topic *\n")
    for extra, message in (
            (["--acl-file", str(bad)], f"--acl-file {bad} line 3: 'REED' is not an operation"),
            (["--acl-file", str(bad_principal)], f"--acl-file {bad_principal} line 1: principal 'bob' is not "
                                                 "User:NAME or User:*"),
            (["--acl-file", str(empty)], f"--acl-file {empty}: no ACLs"),
            (["--acl-file", str(tmp_path / "missing")], "cannot read the file"),
            (["--acl-file", str(good), "--upstream", "127.0.0.1:1"], "--acl-file is for a standalone serve")):
        p = thaw(*base, *extra, timeout=60)
        err = p.stderr.decode(errors="replace")
        assert p.returncode == 2, (extra, p.returncode, err)
        assert message in err, (extra, err)
