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

    # The session's PostgreSQL is shared with other tests: a catalog name of this test's own.
    cat = SqlCatalog("servers_test", uri=postgres.sqlalchemy_uri, warehouse=f"file://{tmp_path}")
    try:
        cat.create_namespace("ns")
        t = cat.create_table("ns.t", pa.schema([("x", pa.int64())]))
        t.append(pa.table({"x": [1, 2, 3]}))
        # The catalog rows live in PostgreSQL, read back over a plain connection.
        with postgres.connect() as conn, conn.cursor() as cur:
            cur.execute("SELECT table_namespace, table_name, metadata_location FROM iceberg_tables "
                        "WHERE catalog_name = 'servers_test'")
            rows = cur.fetchall()
        assert [(r[0], r[1]) for r in rows] == [("ns", "t")]
        assert rows[0][2] == cat.load_table("ns.t").metadata_location
        assert cat.load_table("ns.t").scan().to_arrow()["x"].to_pylist() == [1, 2, 3]
    finally:
        # Leave no second catalog in the shared database: test_catalog_config
        # reads it without --catalog-name, which needs exactly one.
        with postgres.connect() as conn, conn.cursor() as cur:
            cur.execute("DELETE FROM iceberg_tables WHERE catalog_name = 'servers_test'")
            cur.execute("DELETE FROM iceberg_namespace_properties WHERE catalog_name = 'servers_test'")
            conn.commit()


def test_rest_catalog_writes_tables_into_the_store_and_vends_its_credentials(rest_catalog, s3_store):
    import json
    import urllib.request

    cat = rest_catalog.pyiceberg()
    cat.create_namespace_if_not_exists("servers_test")
    t = cat.create_table("servers_test.t", pa.schema([("x", pa.int64())]))
    t.append(pa.table({"x": [1, 2, 3]}))
    loaded = cat.load_table("servers_test.t")
    assert loaded.metadata_location.startswith(f"s3://{s3_store.bucket}/rest/servers_test/t/metadata/")
    # Metadata and data files are objects in moto, not local files.
    keys = s3_store.list_keys("rest/servers_test/t/")
    assert loaded.metadata_location.removeprefix(f"s3://{s3_store.bucket}/") in keys
    assert any(k.endswith(".parquet") for k in keys)
    assert loaded.scan().to_arrow()["x"].to_pylist() == [1, 2, 3]
    # include-credentials: the load-table response carries the store's keys.
    req = urllib.request.Request(f"{rest_catalog.uri}/v1/namespaces/servers_test/tables/t",
                                 headers={"X-Iceberg-Access-Delegation": "vended-credentials"})
    with urllib.request.urlopen(req, timeout=30) as r:
        config = json.load(r)["config"]
    assert config["s3.access-key-id"] == s3_store.access_key
    assert config["s3.secret-access-key"] == s3_store.secret_key
