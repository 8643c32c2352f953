"""`thaw archive` output read by real Iceberg engines: pyiceberg (through the
SQL catalog and as a StaticTable), DuckDB's iceberg extension (loaded offline
from its PyPI wheels), Iceberg Java's generic reader, and Thaw itself. Each
must equal what a read_committed consumer of the topic sees, offsets
included (iceberg_readers.assert_same_records: every field of every record).

Topics (archive_topics.py): the rich topic (keys, null and empty keys and
values, a 256 KiB value, headers with duplicate keys and null values, lz4 and
zstd batches, committed and aborted transactions: aborted records and
markers are offset gaps), the same with LogAppendTime timestamps, and a
compacted topic (gaps left by the log cleaner). The rich topic is archived
twice: as a format-version 2 table (1 MiB target files) and as a
format-version 3 table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

import archive_topics
import iceberg_readers as readers
from archive_cli import archive_args, new_catalog


@dataclass
class Archived:
    uri: str
    table: str
    topic: str
    want: list          # consume_all(topic), read_committed
    summary: dict       # --json summary of the archive run
    ends: dict          # {partition: (earliest, end)} of the topic

    @property
    def metadata(self) -> str:
        return readers.metadata_location(self.uri, self.table)


CASES = {
    # name: (topic maker, extra archive args)
    "rich_v2": ("rich", ["--target-file-size", "1MiB"]),
    "rich_v3": ("rich", ["--format-version", "3"]),
    "rich_log_append_time": ("rich_lat", []),
    "compacted": ("compacted", []),
}


@pytest.fixture(scope="module")
def archived(kafka, thaw, tmp_path_factory) -> dict[str, Archived]:
    wh = str(tmp_path_factory.mktemp("archive_readers"))
    uri = new_catalog(wh)
    compacted, did_compact = archive_topics.make_compacted_topic(kafka)
    # The cleaner backs off 15 s between runs; 40 s covers two of its passes.
    assert did_compact, f"the broker did not compact topic {compacted} within 40 s"
    topics = {"rich": archive_topics.make_rich_topic(kafka),
              "rich_lat": archive_topics.make_rich_topic(kafka, log_append_time=True),
              "compacted": compacted}
    out = {}
    for name, (src, extra) in CASES.items():
        table = f"ns.{name}"
        p = thaw(*archive_args(kafka, uri, table, topics[src], *extra), "--json", timeout=300)
        assert p.returncode == 0, f"thaw archive of {topics[src]} into {table} exited {p.returncode}:\n" \
                                  f"{p.stderr.decode(errors='replace')[-4000:]}"
        out[name] = Archived(uri, table, topics[src], kafka.consume_all(topics[src]), json.loads(p.stdout),
                             kafka.offsets(topics[src]))
    return out


def test_topics_have_what_the_readers_must_reproduce(archived, kafka):
    """The fixtures hold what they claim (else the reader tests prove less)."""
    want = archived["rich_v2"].want
    assert {r["partition"] for r in want} == {0, 1, 2}
    assert any(r["key"] is None for r in want) and any(r["key"] == b"" for r in want)
    assert any(r["value"] is None for r in want) and any(r["value"] == b"" for r in want)
    assert any(len(r["value"] or b"") >= archive_topics.BIG_VALUE for r in want)
    assert any([k for k, _ in r["headers"]].count("dup") == 3 for r in want)
    assert any(v is None for r in want for _, v in r["headers"])
    # Aborted transactions and markers: read_committed sees fewer records than the log holds.
    ends = kafka.offsets(archived["rich_v2"].topic)
    assert len(want) < sum(hi - lo for lo, hi in ends.values())
    assert len(kafka.consume_all(archived["rich_v2"].topic, isolation="read_uncommitted")) > len(want)
    assert {r["timestamp_type"] for r in archived["rich_log_append_time"].want} == {"LogAppendTime"}
    assert archive_topics.has_gaps(kafka, archived["compacted"].topic)


@pytest.mark.parametrize("case", list(CASES))
def test_archive_summary(archived, case):
    a = archived[case]
    s = a.summary
    assert s["records"] == len(a.want)
    assert not s["interrupted"]
    # next offsets: past the last record of each partition (markers may add more), never past the end.
    ends = {p: hi for p, (lo, hi) in a.ends.items()}
    got = {int(p): o for p, o in s["next_offsets"][a.topic].items()}
    last = {}
    for r in a.want:
        last[r["partition"]] = r["offset"]
    for p, o in last.items():
        assert o < got[p] <= ends[p], (p, got[p], o, ends[p])
    assert s["data_files"] >= 3, "one data file per partition at least"


@pytest.mark.parametrize("case", list(CASES))
def test_pyiceberg_catalog_reads_what_kafka_holds(archived, case):
    a = archived[case]
    readers.assert_same_records(readers.read_pyiceberg(a.uri, a.table), a.want, f"pyiceberg (catalog) {a.table}")


@pytest.mark.parametrize("case", list(CASES))
def test_pyiceberg_static_table_reads_what_kafka_holds(archived, case):
    a = archived[case]
    readers.assert_same_records(readers.read_pyiceberg_metadata(a.metadata), a.want, f"pyiceberg StaticTable {a.table}")


@pytest.mark.parametrize("case", list(CASES))
def test_duckdb_reads_what_kafka_holds(archived, case):
    a = archived[case]
    readers.assert_same_records(readers.read_duckdb(a.metadata), a.want, f"DuckDB iceberg_scan {a.table}")


def test_iceberg_java_reads_what_kafka_holds(archived):
    got = readers.read_java_many([a.metadata for a in archived.values()])
    for a in archived.values():
        readers.assert_same_records(got[a.metadata], a.want, f"Iceberg Java {a.table}")


@pytest.mark.parametrize("case", list(CASES))
def test_thaw_reads_what_kafka_holds(archived, thaw, case):
    a = archived[case]
    readers.assert_same_records(readers.read_thaw(thaw, a.uri, a.table), a.want, f"thaw inspect {a.table}")


def test_table_metadata_is_thaw_layout(archived):
    for name, a in archived.items():
        t = readers.load_table(a.uri, a.table)
        assert t.properties.get("thaw.layout") == "thaw/1", name
        assert t.properties.get("thaw.source.topic") == a.topic, name
        assert t.format_version == (3 if name == "rich_v3" else 2), name
        assert [f.name for f in t.spec().fields] == ["kafka_partition"], name
        assert t.location().rstrip("/").endswith(f"ns.db/{name}"), t.location()
