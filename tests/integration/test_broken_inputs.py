"""Broken inputs: `thaw inspect` must exit non-zero (not crash) and print one
clear error to stderr that names the file or table and the fault.

Each file-corruption test writes its own small table (conftest.small_table)
and damages it in place, so no path rewriting is needed.
"""

from __future__ import annotations

import os
import re

import pyarrow.parquet as pq
import pytest

import fixtures

NOT_FOUND = ("not found", "no such file", "does not exist", "missing")
TRUNCATED = ("truncated", "unexpected end", "premature end")
CORRUPT = ("corrupt", "invalid", "malformed", "decompress", "page header", "checksum")
LAYOUTS = ("thaw", "redpanda", "bufstream", "aiven", "automq", "kafka-connect", "plain")
CRASH_MARKERS = ("terminate called", "Segmentation fault", "Aborted", "AddressSanitizer", "Traceback",
                 "core dumped", "std::")
# lines that may follow the one error line without counting as a second error
AUX_PREFIXES = ("usage", "run with --help", "hint", "note", "see ", "try ")


def assert_one_error(p, *must_contain: str, any_of: tuple[str, ...] = ()):
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode > 0, f"exit status {p.returncode} (want > 0; < 0 is a signal)\nstderr: {err}"
    for m in CRASH_MARKERS:
        assert m not in err, f"crash marker {m!r} in stderr:\n{err}"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines, "no error message on stderr"
    main = [ln for ln in lines if not ln.strip().lower().startswith(AUX_PREFIXES)]
    assert len(main) == 1, f"want exactly one error line, got {len(main)}:\n{err}"
    for s in must_contain:
        assert s in err, f"{s!r} not in stderr: {err}"
    if any_of:
        # key words must be in the message itself, not in a path (pytest's temp
        # dirs are named after the test, e.g. .../test_truncated_avro0/...)
        words = re.sub(r"\S*/\S*", " ", err).lower()
        assert any(k in words for k in any_of), f"none of {any_of} in stderr (paths excluded): {err}"
    return err


def local(path: str) -> str:
    return path.removeprefix("file://")


def manifest_paths(table) -> tuple[str, list[str]]:
    snap = table.current_snapshot()
    return local(snap.manifest_list), [local(m.manifest_path) for m in snap.manifests(table.io)]


def data_paths(table) -> list[str]:
    return [local(t.file.file_path) for t in table.scan().plan_files()]


# ---------------------------------------------------------------------------
# Avro container parsing (to find the sync marker)


_varint = fixtures.zigzag_varint


def avro_layout(buf: bytes) -> tuple[int, int]:
    """(offset of the header's sync marker, offset of the sync marker after block 1)."""
    assert buf[:4] == b"Obj\x01"
    pos = 4
    while True:  # metadata map
        count, pos = _varint(buf, pos)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, pos = _varint(buf, pos)
        for _ in range(count):
            n, pos = _varint(buf, pos)
            pos += n
            n, pos = _varint(buf, pos)
            pos += n
    header_sync = pos
    pos += 16
    _, pos = _varint(buf, pos)      # object count
    size, pos = _varint(buf, pos)   # block byte size
    pos += size
    assert buf[pos:pos + 16] == buf[header_sync:header_sync + 16]
    return header_sync, pos


# ---------------------------------------------------------------------------


def test_missing_metadata_file(thaw, tmp_path):
    path = str(tmp_path / "nope" / "00001-0000.metadata.json")
    p = thaw("inspect", "--metadata", path, "--json")
    assert_one_error(p, path, any_of=NOT_FOUND)


@pytest.mark.parametrize("which", ["manifest", "manifest-list"])
@pytest.mark.parametrize("where", ["in-header", "mid-block"])
def test_truncated_avro(thaw, small_table, which, where):
    """Cut the file inside the header metadata (pyiceberg's headers are about
    half of a small manifest, so "truncate to half" lands here) or inside the
    first data block. The cut points are computed from the file's structure so
    they do not depend on the length of the temp dir path."""
    mlist, manifests = manifest_paths(small_table.table)
    victim = mlist if which == "manifest-list" else manifests[0]
    with open(victim, "rb") as f:
        header_sync, block_sync = avro_layout(f.read())
    cut = header_sync // 2 if where == "in-header" else (header_sync + 16 + block_sync) // 2
    os.truncate(victim, cut)
    p = thaw("inspect", "--catalog", small_table.uri, "--table", small_table.name, "--json")
    assert_one_error(p, victim, any_of=TRUNCATED)


def test_avro_bad_sync_marker(thaw, small_table):
    _, manifests = manifest_paths(small_table.table)
    victim = manifests[0]
    with open(victim, "r+b") as f:
        buf = f.read()
        _, block_sync = avro_layout(buf)
        f.seek(block_sync)
        f.write(bytes(b ^ 0xFF for b in buf[block_sync:block_sync + 16]))
    p = thaw("inspect", "--catalog", small_table.uri, "--table", small_table.name, "--json")
    assert_one_error(p, victim, any_of=("sync",))


def corrupt_parquet_page(path: str, column: str) -> None:
    """Overwrite the header of the first page of `column` in row group 0."""
    md = pq.ParquetFile(path).metadata
    rg = md.row_group(0)
    col = next(rg.column(i) for i in range(rg.num_columns) if rg.column(i).path_in_schema == column)
    off = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(b"\xff" * 24)


@pytest.mark.parametrize("mode", ["--json", "--records"])
def test_parquet_corrupt_page(thaw, small_table, mode):
    victim = data_paths(small_table.table)[0]
    corrupt_parquet_page(victim, "kafka_offset")
    with pytest.raises(Exception):  # pyarrow agrees the file is broken
        pq.read_table(victim)
    extra = ["--records", "--format", "json"] if mode == "--records" else ["--json"]
    p = thaw("inspect", "--catalog", small_table.uri, "--table", small_table.name, *extra)
    assert_one_error(p, victim, any_of=CORRUPT)


@pytest.mark.parametrize("mode", ["--json", "--records"])
def test_data_file_absent(thaw, small_table, mode):
    victim = data_paths(small_table.table)[-1]
    os.remove(victim)
    extra = ["--records", "--format", "json"] if mode == "--records" else ["--json"]
    p = thaw("inspect", "--catalog", small_table.uri, "--table", small_table.name, *extra)
    assert_one_error(p, victim, any_of=NOT_FOUND)


def test_corrupt_metadata_json(thaw, small_table):
    path = small_table.metadata_path
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    p = thaw("inspect", "--metadata", path, "--json")
    assert_one_error(p, path)


def test_no_usable_offset_column(thaw, warehouse):
    p = thaw("inspect", "--catalog", warehouse.uri, "--table", "ns.ab", "--layout", "thaw", "--json")
    err = assert_one_error(p, "ns.ab")
    assert "kafka_offset" in err or "kafka_partition" in err, f"missing column not named: {err}"


def test_override_names_absent_column(thaw, warehouse):
    p = thaw("inspect", "--catalog", warehouse.uri, "--table", "ns.canonical_v2",
             "--column", "offset=nosuch_col", "--json")
    assert_one_error(p, "nosuch_col", "ns.canonical_v2")


def test_unknown_layout(thaw, warehouse):
    p = thaw("inspect", "--catalog", warehouse.uri, "--table", "ns.canonical_v2", "--layout", "foo", "--json")
    err = assert_one_error(p, "foo")
    for name in LAYOUTS:
        assert name in err.replace("foo", ""), f"valid layout {name!r} not listed: {err}"


@pytest.mark.parametrize("table", ["ns.nope", "nosuchns.t"])
def test_unknown_table(thaw, warehouse, table):
    p = thaw("inspect", "--catalog", warehouse.uri, "--table", table, "--json")
    assert_one_error(p, table, any_of=NOT_FOUND + ("unknown",))


@pytest.mark.parametrize("arg,needle", [
    ("offset", "offset"),            # no '='
    ("=kafka_offset", "=kafka_offset"),  # empty FIELD
    ("offset=", "offset="),          # empty COLUMN
    ("bogus=kafka_offset", "bogus"),  # unknown FIELD
])
def test_bad_column_syntax(thaw, warehouse, arg, needle):
    p = thaw("inspect", "--catalog", warehouse.uri, "--table", "ns.canonical_v2", "--column", arg, "--json")
    err = assert_one_error(p, needle)
    assert "column" in err.lower(), err

