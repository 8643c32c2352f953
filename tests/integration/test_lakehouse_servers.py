"""The lakehouse servers of lakehouse.py are real and usable by the peers the
other tests write and read with (pyarrow's S3 filesystem, pyiceberg)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq


def test_s3_store_round_trips_a_parquet_file_through_pyarrow(s3_store):
    fs = pafs.S3FileSystem(endpoint_override=s3_store.endpoint, access_key=s3_store.access_key,
                           secret_key=s3_store.secret_key, region=s3_store.region, scheme="http",
                           force_virtual_addressing=False)
    t = pa.table({"k": list(range(1000)), "v": [f"value-{i}" for i in range(1000)]})
    pq.write_table(t, f"{s3_store.bucket}/servers-test/a.parquet", filesystem=fs)
    assert "servers-test/a.parquet" in s3_store.list_keys("servers-test/")
    assert pq.read_table(f"{s3_store.bucket}/servers-test/a.parquet", filesystem=fs).equals(t)


def test_postgres_hosts_a_pyiceberg_sql_catalog(postgres, tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    cat = SqlCatalog("pg", uri=postgres.sqlalchemy_uri, warehouse=f"file://{tmp_path}")
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", pa.schema([("x", pa.int64())]))
    t.append(pa.table({"x": [1, 2, 3]}))
    # The catalog rows live in PostgreSQL, read back over a plain connection.
    with postgres.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT table_namespace, table_name, metadata_location FROM iceberg_tables")
        rows = cur.fetchall()
    assert [(r[0], r[1]) for r in rows] == [("ns", "t")]
    assert rows[0][2] == cat.load_table("ns.t").metadata_location
    assert cat.load_table("ns.t").scan().to_arrow()["x"].to_pylist() == [1, 2, 3]
