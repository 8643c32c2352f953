#!/usr/bin/env python3
"""Writes the seed corpus for avro_fuzz into fuzz/corpus/avro/.

  make_avro_corpus.py [OUT_DIR]        (default: corpus/avro next to this file)

Seeds are small Avro object container files written by the minimal encoder
below (independent of Thaw's writer): every codec (snappy as literal-only
blocks, zstandard when the `zstandard` module is present), every type, a
negative-count array block, Iceberg's map-as-array, a schema reusing named
records (exponential expansion), plus a bare schema JSON
for the ParseSchema path. With pyiceberg available, a real manifest list and
manifest are added too. Total size stays well under 20 KB.
"""
import json
import os
import shutil
import struct
import sys
import tempfile
import zlib

SYNC = bytes(range(0xA0, 0xB0))


def varint(n):
    z = (n << 1) ^ (n >> 63)
    z &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def blob(b):
    if isinstance(b, str):
        b = b.encode()
    return varint(len(b)) + b


def encode(schema, value, named):
    """Encodes `value`; unions take (branch_index, value)."""
    if isinstance(schema, str):
        if schema in named:
            return encode(named[schema], value, named)
        t = schema
        schema = {"type": t}
    elif isinstance(schema, list):
        index, inner = value
        return varint(index) + encode(schema[index], inner, named)
    t = schema["type"]
    if t == "null":
        return b""
    if t == "boolean":
        return b"\x01" if value else b"\x00"
    if t in ("int", "long"):
        return varint(value)
    if t == "float":
        return struct.pack("<f", value)
    if t == "double":
        return struct.pack("<d", value)
    if t in ("bytes", "string"):
        return blob(value)
    if t == "fixed":
        named[schema["name"]] = schema
        return value
    if t == "enum":
        named[schema["name"]] = schema
        return varint(schema["symbols"].index(value))
    if t == "array":
        if not value:
            return varint(0)
        body = b"".join(encode(schema["items"], v, named) for v in value)
        # Negative count + byte size: the form Avro allows for skipping.
        return varint(-len(value)) + varint(len(body)) + body + varint(0)
    if t == "map":
        if not value:
            return varint(0)
        body = b"".join(blob(k) + encode(schema["values"], v, named) for k, v in value.items())
        return varint(len(value)) + body + varint(0)
    if t == "record":
        named[schema["name"]] = schema
        return b"".join(encode(f["type"], value[f["name"]], named) for f in schema["fields"])
    raise ValueError(t)


def snappy_literal(data):
    """Valid snappy stream using only literal elements (no compression)."""
    out = bytearray()
    n = len(data)
    while True:  # uncompressed length, plain (not zig-zag) varint
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            break
    for i in range(0, len(data), 256):
        chunk = data[i : i + 256]
        if len(chunk) <= 60:
            out.append((len(chunk) - 1) << 2)
        else:
            out += bytes([60 << 2, len(chunk) - 1])
        out += chunk
    return bytes(out) + struct.pack(">I", zlib.crc32(data) & 0xFFFFFFFF)


def compress(codec, data):
    if codec == "null":
        return data
    if codec == "deflate":
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush()
    if codec == "snappy":
        return snappy_literal(data)
    if codec == "zstandard":
        import zstandard

        return zstandard.ZstdCompressor().compress(data)
    raise ValueError(codec)


def ocf(schema, rows, codec="null", meta=None, rows_per_block=2):
    named = {}
    header = bytearray(b"Obj\x01")
    entries = {"avro.schema": json.dumps(schema), "avro.codec": codec, **(meta or {})}
    header += varint(len(entries))
    for k, v in entries.items():
        header += blob(k) + blob(v)
    header += varint(0) + SYNC
    out = bytes(header)
    for i in range(0, len(rows), rows_per_block):
        chunk = rows[i : i + rows_per_block]
        data = b"".join(encode(schema, r, named) for r in chunk)
        out += varint(len(chunk)) + blob(compress(codec, data)) + SYNC
    return out


def kv_array(key_id, value_id, value_type):
    return {
        "type": "array",
        "logicalType": "map",
        "items": {
            "type": "record",
            "name": f"k{key_id}_v{value_id}",
            "fields": [
                {"name": "key", "type": "int", "field-id": key_id},
                {"name": "value", "type": value_type, "field-id": value_id},
            ],
        },
    }


MANIFEST_ENTRY = {
    "type": "record",
    "name": "manifest_entry",
    "fields": [
        {"name": "status", "type": "int", "field-id": 0},
        {"name": "snapshot_id", "type": ["null", "long"], "default": None, "field-id": 1},
        {
            "name": "data_file",
            "field-id": 2,
            "type": {
                "type": "record",
                "name": "r2",
                "fields": [
                    {"name": "file_path", "type": "string", "field-id": 100},
                    {
                        "name": "partition",
                        "field-id": 102,
                        "type": {
                            "type": "record",
                            "name": "r102",
                            "fields": [{"name": "p", "type": ["null", "int"], "field-id": 1000}],
                        },
                    },
                    {"name": "record_count", "type": "long", "field-id": 103},
                    {"name": "lower_bounds", "type": ["null", kv_array(126, 127, "bytes")],
                     "field-id": 125},
                    {"name": "split_offsets",
                     "type": ["null", {"type": "array", "items": "long", "element-id": 133}],
                     "field-id": 132},
                ],
            },
        },
    ],
}


def manifest_rows():
    rows = []
    for i in range(3):
        rows.append(
            {
                "status": 1,
                "snapshot_id": (1, 123456789 + i),
                "data_file": {
                    "file_path": f"s3://b/t/data/p={i}/f{i}.parquet",
                    "partition": {"p": (1, i) if i else (0, None)},
                    "record_count": 10 * i,
                    "lower_bounds": (1, [{"key": 1, "value": struct.pack("<q", i)}]),
                    "split_offsets": (1, [4]) if i == 1 else (0, None),
                },
            }
        )
    return rows


ALL_TYPES = {
    "type": "record",
    "name": "row",
    "namespace": "t",
    "fields": [
        {"name": "n", "type": "null"},
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "by", "type": "bytes"},
        {"name": "s", "type": "string"},
        {"name": "fx", "type": {"type": "fixed", "name": "F4", "size": 4}},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        {"name": "m", "type": {"type": "map", "values": "long", "key-id": 5, "value-id": 6}},
        {"name": "u", "type": ["null", "string", "E"]},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros",
                                "adjust-to-utc": True}},
    ],
}

ALL_TYPES_ROWS = [
    {"n": None, "b": True, "i": -5, "l": 1 << 40, "f": 1.5, "d": -2.25, "by": b"\x00\xff",
     "s": "hello", "fx": b"abcd", "e": "B", "m": {"x": 1, "y": -1}, "u": (1, "u"), "ts": 17},
    {"n": None, "b": False, "i": 0, "l": -1, "f": 0.0, "d": 1e300, "by": b"", "s": "",
     "fx": b"\x00\x00\x00\x00", "e": "A", "m": {}, "u": (2, "A"), "ts": 0},
    {"n": None, "b": True, "i": 2**31 - 1, "l": -(2**63), "f": -0.5, "d": 0.5, "by": b"z",
     "s": "x" * 30, "fx": b"wxyz", "e": "A", "m": {"k": 3}, "u": (0, None), "ts": -1},
]


def pyiceberg_files(out_dir):
    """Copies a real pyiceberg manifest list and manifest, if possible."""
    try:
        import pyarrow as pa
        from pyiceberg.catalog.sql import SqlCatalog
    except ImportError:
        return
    with tempfile.TemporaryDirectory() as wh:
        cat = SqlCatalog("default", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
        cat.create_namespace_if_not_exists("ns")
        t = cat.create_table("ns.t", schema=pa.schema([("id", pa.int64())]),
                             location=f"file://{wh}/ns/t")
        t.append(pa.table({"id": [1, 2, 3]}))
        snap = cat.load_table("ns.t").current_snapshot()
        shutil.copy(snap.manifest_list.removeprefix("file://"),
                    os.path.join(out_dir, "pyiceberg_manifest_list.avro"))
        manifest = snap.manifests(t.io)[0].manifest_path.removeprefix("file://")
        shutil.copy(manifest, os.path.join(out_dir, "pyiceberg_manifest.avro"))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus", "avro")
    os.makedirs(out_dir, exist_ok=True)
    meta = {"format-version": "2", "content": "data", "partition-spec": "[]"}
    seeds = {}
    codecs = ["null", "deflate", "snappy"]
    try:
        import zstandard  # noqa: F401

        codecs.append("zstandard")
    except ImportError:
        pass
    for codec in codecs:
        seeds[f"manifest_{codec}.avro"] = ocf(MANIFEST_ENTRY, manifest_rows(), codec, meta)
    seeds["all_types_null.avro"] = ocf(ALL_TYPES, ALL_TYPES_ROWS)
    seeds["all_types_deflate.avro"] = ocf(ALL_TYPES, ALL_TYPES_ROWS, "deflate")
    seeds["empty_file.avro"] = ocf("long", [])
    seeds["longs_null.avro"] = ocf("long", [0, -1, 1 << 62], rows_per_block=1)
    # Named records reused twice per level: 2^depth values per 0-byte datum.
    dag = {"type": "record", "name": "R0", "fields": []}
    for i in range(1, 9):
        dag = {"type": "record", "name": f"R{i}",
               "fields": [{"name": "a", "type": dag}, {"name": "b", "type": f"R{i - 1}"}]}
    seeds["dag_records.avro"] = ocf(dag, [], "null") + varint(1) + blob(b"") + SYNC
    seeds["schema_manifest.json"] = json.dumps(MANIFEST_ENTRY).encode()
    seeds["schema_all_types.json"] = json.dumps(ALL_TYPES).encode()
    for name, data in seeds.items():
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
    pyiceberg_files(out_dir)
    total = sum(os.path.getsize(os.path.join(out_dir, n)) for n in os.listdir(out_dir))
    print(f"{len(os.listdir(out_dir))} seeds, {total} bytes in {out_dir}")


if __name__ == "__main__":
    main()
