"""Loads Iceberg metadata files with pyiceberg's StaticTable (for table_update_test.cc).

usage: load_metadata_pyiceberg.py METADATA_JSON...
Prints one JSON object per file: what pyiceberg read from it.
"""
import json
import sys

from pyiceberg.table import StaticTable


def main() -> None:
    for path in sys.argv[1:]:
        table = StaticTable.from_metadata(path)
        md = table.metadata
        current = table.current_snapshot()
        out = {
            "format_version": md.format_version,
            "table_uuid": str(md.table_uuid),
            "location": md.location,
            "last_column_id": md.last_column_id,
            "last_partition_id": md.last_partition_id,
            "last_sequence_number": md.last_sequence_number,
            "default_sort_order_id": md.default_sort_order_id,
            "sort_order_ids": [o.order_id for o in md.sort_orders],
            "schema_field_ids": sorted(f.field_id for f in md.schema()._lazy_id_to_field.values()),
            "spec_fields": [[f.source_id, f.field_id, f.name, str(f.transform)] for f in md.spec().fields],
            "properties": dict(md.properties),
            "current_snapshot_id": current.snapshot_id if current else None,
            "snapshots": [
                {
                    "id": s.snapshot_id,
                    "parent": s.parent_snapshot_id,
                    "seq": s.sequence_number,
                    "operation": s.summary.operation.value if s.summary else None,
                    "summary": {k: v for k, v in (s.summary.additional_properties if s.summary else {}).items()},
                    "manifest_list": s.manifest_list,
                    "first_row_id": getattr(s, "first_row_id", None),
                    "added_rows": getattr(s, "added_rows", None),
                }
                for s in md.snapshots
            ],
            "refs": {k: [v.snapshot_id, str(v.snapshot_ref_type)] for k, v in md.refs.items()},
            "snapshot_log": [[e.snapshot_id, e.timestamp_ms] for e in md.snapshot_log],
            "metadata_log": [[e.metadata_file, e.timestamp_ms] for e in md.metadata_log],
            "next_row_id": getattr(md, "next_row_id", None),
        }
        print(json.dumps(out))


if __name__ == "__main__":
    main()
