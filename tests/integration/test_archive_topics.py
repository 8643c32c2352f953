"""A table holding several topics (`thaw archive --topic a,b`: the
`kafka_topic` column and partition field) read back through Thaw's reader.

Topic A is archive_topics' rich topic (3 partitions; keys, tombstones,
headers, a 256 KiB value, aborted transactions whose offsets stay gaps);
topic B has the same partitions and offset numbers with other contents. Each
topic selected on its own (`--source-topic`, serve's `source_topic`) must
equal a read_committed consumer of that topic, offset for offset; the summary
lists both topics apart; reading records without a selection is exit 2.
"""

from __future__ import annotations

import json

import pytest

import archive_topics
import iceberg_readers as readers
from archive_cli import archive_args, new_catalog
from fixtures import json_bytes
from kafka_broker import KafkaBroker
from serve_harness import Topic, thaw_serve  # noqa: F401  (fixture)

TABLE = "ns.two"


@pytest.fixture(scope="module")
def two_topics(kafka, thaw, tmp_path_factory):
    wh = str(tmp_path_factory.mktemp("archive_topics"))
    uri = new_catalog(wh)
    a = archive_topics.make_rich_topic(kafka, prefix="ta")
    b = archive_topics.topic_name("tb")
    kafka.create_topic(b, 3)
    p = kafka.producer()
    for i in range(60):
        for part in range(3):
            p.produce(b, key=f"b-{part}-{i}".encode(), value=None if i % 9 == 4 else f"B{part}:{i}".encode(),
                      partition=part, headers=[("src", b"b")], timestamp=1_767_225_600_000 + i * 1000 + part)
    assert p.flush(30) == 0
    want = {a: kafka.consume_all(a), b: kafka.consume_all(b)}
    # Offsets overlap: the same (partition, offset) holds a record of each topic.
    pos = {t: {(r["partition"], r["offset"]) for r in rs} for t, rs in want.items()}
    assert len(pos[a] & pos[b]) > 100
    p = thaw(*archive_args(kafka, uri, TABLE, f"{a},{b}"), timeout=300)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    return uri, a, b, want


def src(uri):
    return ["--catalog", uri, "--table", TABLE]


def inspect_records(thaw, uri, *extra) -> list[dict]:
    p = thaw.ok("inspect", *src(uri), "--records", "--format", "json", *extra)
    out = []
    for line in p.stdout.decode().splitlines():
        r = json.loads(line)
        out.append({"topic": r["topic"], "partition": r["partition"], "offset": r["offset"],
                    "timestamp": r["timestamp"], "key": json_bytes(r, "key"), "value": json_bytes(r, "value"),
                    "headers": [(h["key"], json_bytes(h, "value", "encoding")) for h in r["headers"]]})
    return out


def no_selection_error(p, a, b) -> None:
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 2, err
    names = ", ".join(sorted([a, b]))
    assert f"table {TABLE} holds topics {names}: choose one with" in err, err


def test_summary_lists_each_topic_and_records_of_one_equal_it(thaw, two_topics, tmp_path):
    uri, a, b, want = two_topics
    s = json.loads(thaw.ok("inspect", *src(uri), "--json").stdout)
    assert s["records"] == len(want[a]) + len(want[b])
    assert "partitions" not in s, "a several-topic summary must not merge the topics' partitions"
    assert [t["topic"] for t in s["topics"]] == sorted([a, b])
    for t in s["topics"]:
        rs = want[t["topic"]]
        parts = sorted({r["partition"] for r in rs})
        assert [p["partition"] for p in t["partitions"]] == parts
        for p in t["partitions"]:
            offs = [r["offset"] for r in rs if r["partition"] == p["partition"]]
            assert (p["records"], p["min_offset"], p["max_offset"]) == (len(offs), min(offs), max(offs)), t["topic"]
        assert t["duplicates"] == 0
    text = thaw.ok("inspect", *src(uri)).stdout.decode()
    assert f"topics     2 ({', '.join(sorted([a, b]))}; read one with --source-topic)" in text
    assert f"\ntopic {a} ({len(want[a])} records)\n" in text
    # One topic's summary: that topic alone.
    one = json.loads(thaw.ok("inspect", *src(uri), "--json", "--source-topic", b).stdout)
    assert one["source_topic"] == b and one["records"] == len(want[b]) and "topics" not in one
    cfg = tmp_path / "inspect.toml"
    cfg.write_text(f'[inspect]\nsource-topic = "{b}"\n')
    assert json.loads(thaw.ok("inspect", *src(uri), "--json", "--config", str(cfg)).stdout) == one
    # Records: each topic equals its read_committed consumer, offset for offset.
    for topic in (a, b):
        got = sorted(inspect_records(thaw, uri, "--source-topic", topic), key=lambda r: (r["partition"], r["offset"]))
        readers.assert_same_records(got, want[topic], f"inspect --source-topic {topic}",
                                    fields=("partition", "offset", "timestamp", "key", "value", "headers"))
        assert {r["topic"] for r in got} == {topic}, "each record names its own topic"
    no_selection_error(thaw("inspect", *src(uri), "--records"), a, b)


def test_replay_of_one_topic_equals_it(kafka, thaw, two_topics):
    uri, a, b, want = two_topics
    target = archive_topics.topic_name("replayed")
    base = ["replay", *src(uri), "--brokers", kafka.bootstrap, "--topic", target, "--quiet"]
    no_selection_error(thaw(*base, "--create-topic"), a, b)
    p = thaw(*base, "--create-topic", "--source-topic", "no-such-topic")
    assert p.returncode == 2 and "source-topic=no-such-topic" in p.stderr.decode(), p.stderr.decode()
    p = thaw(*base, "--create-topic", "--source-topic", a, "--job", "j1", "--json", timeout=300)
    assert p.returncode == 0, p.stderr.decode(errors="replace")[-4000:]
    assert json.loads(p.stdout)["records"] == len(want[a])
    got = kafka.consume_all(target)
    assert len(got) == len(want[a])
    by_source = {}
    for g in got:
        link = {k: v for k, v in g["headers"] if k.startswith("thaw.source.")}
        assert link["thaw.source.topic"] == a.encode()  # the row's own topic
        src_pos = (int(link["thaw.source.partition"]), int(link["thaw.source.offset"]))
        assert src_pos not in by_source
        by_source[src_pos] = {**g, "headers": [h for h in g["headers"] if not h[0].startswith("thaw.source.")]}
    for w in want[a]:
        g = by_source[(w["partition"], w["offset"])]
        for f in ("partition", "key", "value", "headers", "timestamp", "timestamp_type"):
            assert g[f] == w[f], (w["partition"], w["offset"], f)
    # The job's state holds the selected topic: resuming with another is refused.
    p = thaw(*base, "--source-topic", b, "--job", "j1")
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 2 and f"source-topic={a}" in err and f"source-topic={b}" in err, err


def test_serve_with_source_topic_serves_each_topic_offset_for_offset(kafka, thaw, thaw_serve, two_topics,  # noqa: F811
                                                                     tmp_path):
    uri, a, b, want = two_topics
    topics = [Topic(a, TABLE, "thaw", source_topic=a), Topic("b-served", TABLE, "thaw", source_topic=b)]
    with thaw_serve(uri, topics) as (bootstrap, _proc):
        served = KafkaBroker(bootstrap)
        readers.assert_same_records(served.consume_all(a, settle=0), want[a], f"serve source_topic={a}")
        readers.assert_same_records(served.consume_all("b-served", settle=0), want[b], f"serve source_topic={b}")
    state = ["--listen", "127.0.0.1:0", "--state", str(tmp_path / "state")]
    p = thaw("serve", *src(uri)[:2], "--topic", f"x={TABLE}", *state, timeout=60)
    no_selection_error(p, a, b)
    assert f"source-topic (--topic x={TABLE}:source-topic=TOPIC" in p.stderr.decode()
    # --table-prefix passes over it, saying how to serve it.
    p = thaw("serve", *src(uri)[:2], "--table-prefix", "ns", *state, timeout=60)
    err = p.stderr.decode()
    assert p.returncode == 1 and "no Kafka-shaped table to serve" in err, err
    assert f"not served: {TABLE}: table {TABLE} holds topics" in err and f"--topic NAME={TABLE}:source-topic" in err
