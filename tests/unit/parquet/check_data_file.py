"""Reads a Parquet data file written by thaw's DataFileWriter with pyarrow and
prints, as one JSON object, what the C++ test compares with the writer's
DataFile: field ids of every field (nested ones too), the column types as
Parquet stores them, the rows (keys, values and header values as hex; large
values as length + sha256), per row group the rows and the leaf columns'
encodings, and the Iceberg metrics recomputed from the rows themselves
(value and null counts per leaf field id the way Parquet counts levels,
bounds as Appendix D bytes in hex) next to the footer's own counts.

Usage: check_data_file.py FILE.parquet
"""

import hashlib
import json
import struct
import sys

import pyarrow as pa
import pyarrow.parquet as pq


def ids(field, out, path):
    meta = field.metadata or {}
    fid = meta.get(b"PARQUET:field_id")
    out[".".join(path + [field.name])] = int(fid) if fid is not None else None
    t = field.type
    if hasattr(t, "value_field"):  # list
        ids(t.value_field, out, path + [field.name])
    elif t.num_fields > 0:  # struct
        for i in range(t.num_fields):
            ids(t.field(i), out, path + [field.name])


def enc(b):
    if b is None:
        return None
    if len(b) > 4096:
        return {"len": len(b), "sha256": hashlib.sha256(b).hexdigest()}
    return b.hex()


def main():
    path = sys.argv[1]
    f = pq.ParquetFile(path)
    table = f.read()
    out = {"field_ids": {}, "parquet_types": {}, "rows": [], "row_groups": [], "footer": {}, "recomputed": {}}
    for field in table.schema:
        ids(field, out["field_ids"], [])
    for i in range(len(f.schema)):
        col = f.schema.column(i)
        out["parquet_types"][col.path] = str(col.logical_type) + "/" + col.physical_type
    rows = table.to_pylist()
    ts_us = table.column("kafka_timestamp").cast(pa.int64()).to_pylist()
    out["timestamp_type"] = str(table.schema.field("kafka_timestamp").type)
    for r, ts in zip(rows, ts_us):
        row = {
            "partition": r["kafka_partition"],
            "offset": r["kafka_offset"],
            "timestamp_us": ts,
            "timestamp_type": r["kafka_timestamp_type"],
            "key": enc(r["key"]),
            "value": enc(r["value"]),
            "headers": None if r["headers"] is None else [[h["key"], enc(h["value"])] for h in r["headers"]],
        }
        if "kafka_topic" in r:
            row["topic"] = r["kafka_topic"]
        out["rows"].append(row)
    md = f.metadata
    footer = {"column_sizes": {}, "value_counts": {}, "null_value_counts": {}}
    leaf_ids = {}
    for i in range(len(f.schema)):
        path_ = f.schema.column(i).path
        leaf_ids[path_] = out["field_ids"][path_.replace(".list.element", ".element")]
    for rg in range(md.num_row_groups):
        g = md.row_group(rg)
        cols = {}
        for c in range(g.num_columns):
            cc = g.column(c)
            fid = str(leaf_ids[cc.path_in_schema])
            footer["column_sizes"][fid] = footer["column_sizes"].get(fid, 0) + cc.total_compressed_size
            footer["value_counts"][fid] = footer["value_counts"].get(fid, 0) + cc.num_values
            footer["null_value_counts"][fid] = footer["null_value_counts"].get(fid, 0) + cc.statistics.null_count
            cols[cc.path_in_schema] = {"encodings": list(cc.encodings), "compression": cc.compression}
        first = g.column(0)
        start = first.data_page_offset
        if first.has_dictionary_page:
            start = min(start, first.dictionary_page_offset)
        out["row_groups"].append({"num_rows": g.num_rows, "columns": cols, "start": start})
    out["footer"] = footer

    # The metrics recomputed from the rows: a row with no headers (empty or
    # null list) is one level entry, counted as a null, in each header leaf.
    vc, nc = {}, {}

    def add(fid, values, nulls):
        vc[str(fid)] = vc.get(str(fid), 0) + values
        nc[str(fid)] = nc.get(str(fid), 0) + nulls

    for r in rows:
        for fid, name in ((1, "kafka_partition"), (2, "kafka_offset"), (3, "kafka_timestamp"),
                          (4, "kafka_timestamp_type"), (5, "key"), (6, "value"), (11, "kafka_topic")):
            if name in r:
                add(fid, 1, 1 if r[name] is None else 0)
        hs = r["headers"]
        if not hs:
            add(9, 1, 1)
            add(10, 1, 1)
        else:
            add(9, len(hs), sum(1 for h in hs if h["key"] is None))
            add(10, len(hs), sum(1 for h in hs if h["value"] is None))
    lower, upper = {}, {}

    def bound(fid, values, fmt):
        values = [v for v in values if v is not None]
        if not values:
            return
        pack = (lambda v: v.encode()) if fmt == "s" else (lambda v: struct.pack(fmt, v))
        lower[str(fid)] = pack(min(values)).hex()
        upper[str(fid)] = pack(max(values)).hex()

    bound(1, [r["partition"] for r in out["rows"]], "<i")
    bound(2, [r["offset"] for r in out["rows"]], "<q")
    bound(3, [r["timestamp_us"] for r in out["rows"]], "<q")
    bound(4, [r["timestamp_type"] for r in out["rows"]], "<i")
    if rows and "kafka_topic" in rows[0]:
        bound(11, [r["kafka_topic"] for r in rows], "s")
    out["recomputed"] = {"record_count": len(rows), "value_counts": vc, "null_value_counts": nc,
                         "lower_bounds": lower, "upper_bounds": upper}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
