"""Reads a table's manifests the way pyiceberg does, for manifest_writer_test.

usage: read_manifests_pyiceberg.py METADATA_JSON

Prints one JSON object on stdout:
  "lists": the current snapshot's manifest list as pyiceberg.manifest's
      read_manifest_list gives it, each manifest with its entries from
      ManifestFile.fetch_manifest_entry (deleted ones kept);
  "plans": {filter: sorted data file paths} planned by StaticTable scans.
Values are made JSON-safe: bytes as {"hex": ...}, decimals and UUIDs as
strings, NaN as "NaN". Exits 77 when pyiceberg cannot be imported.
"""
import datetime
import decimal
import json
import math
import sys
import uuid
from collections.abc import Mapping

try:
    from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, IsNull, LessThan
    from pyiceberg.io.pyarrow import PyArrowFileIO
    from pyiceberg.manifest import read_manifest_list
    from pyiceberg.table import StaticTable
except ImportError as e:  # pragma: no cover
    print(f"pyiceberg not available: {e}", file=sys.stderr)
    sys.exit(77)


def safe(v):
    if isinstance(v, (bytes, bytearray)):
        return {"hex": bytes(v).hex()}
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, Mapping):  # pyiceberg's LazyDict too
        return [[int(k), safe(x)] for k, x in sorted(v.items())]
    if isinstance(v, (list, tuple)):
        return [safe(x) for x in v]
    if hasattr(v, "value") and not isinstance(v, (int, float, str, bool)):  # enums
        return v.value
    return v


def record(r):
    return [safe(r[i]) for i in range(len(r))]


def main():
    metadata = sys.argv[1]
    table = StaticTable.from_metadata(metadata)
    io = PyArrowFileIO()
    snapshot = table.current_snapshot()
    out = {"lists": [], "plans": {}}
    for mf in read_manifest_list(io.new_input(snapshot.manifest_list)):
        m = {
            "manifest_path": mf.manifest_path,
            "manifest_length": mf.manifest_length,
            "partition_spec_id": mf.partition_spec_id,
            "content": safe(mf.content),
            "sequence_number": mf.sequence_number,
            "min_sequence_number": mf.min_sequence_number,
            "added_snapshot_id": mf.added_snapshot_id,
            "added_files_count": mf.added_files_count,
            "existing_files_count": mf.existing_files_count,
            "deleted_files_count": mf.deleted_files_count,
            "added_rows_count": mf.added_rows_count,
            "existing_rows_count": mf.existing_rows_count,
            "deleted_rows_count": mf.deleted_rows_count,
            "partitions": [
                {
                    "contains_null": s.contains_null,
                    "contains_nan": s.contains_nan,
                    "lower_bound": safe(s.lower_bound),
                    "upper_bound": safe(s.upper_bound),
                }
                for s in (mf.partitions or [])
            ],
            "entries": [],
        }
        for e in mf.fetch_manifest_entry(io, discard_deleted=False):
            f = e.data_file
            m["entries"].append(
                {
                    "status": safe(e.status),
                    "snapshot_id": e.snapshot_id,
                    "sequence_number": e.sequence_number,
                    "file_sequence_number": e.file_sequence_number,
                    "content": safe(f.content),
                    "file_path": f.file_path,
                    "file_format": safe(f.file_format),
                    "partition": record(f.partition),
                    "record_count": f.record_count,
                    "file_size_in_bytes": f.file_size_in_bytes,
                    "column_sizes": safe(f.column_sizes or {}),
                    "value_counts": safe(f.value_counts or {}),
                    "null_value_counts": safe(f.null_value_counts or {}),
                    "nan_value_counts": safe(f.nan_value_counts or {}),
                    "lower_bounds": safe(f.lower_bounds or {}),
                    "upper_bounds": safe(f.upper_bounds or {}),
                    "split_offsets": safe(f.split_offsets),
                    "sort_order_id": f.sort_order_id,
                    "spec_id": f.spec_id,
                }
            )
        out["lists"].append(m)

    # Planning prunes by the manifest list's partition summaries, the
    # entries' partition values and the column bounds.
    filters = {
        "name_eq_b": EqualTo("name", "b"),
        "name_null": IsNull("name"),
        "id_ge_150": GreaterThanOrEqual("id", 150),
        "id_lt_100_and_name_a": And(LessThan("id", 100), EqualTo("name", "a")),
    }
    for key, expr in filters.items():
        tasks = table.scan(row_filter=expr).plan_files()
        out["plans"][key] = sorted(t.file.file_path for t in tasks)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
