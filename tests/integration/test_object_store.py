"""Tables in S3: Thaw reads a table written by pyiceberg into a real
S3-compatible store (moto in server mode, lakehouse.py's ``s3_store``) and
gets exactly the records it reads from the same table written locally.

Storage properties reach Thaw through ``--catalog-property`` (docs/storage.md)
or, with none given, the AWS SDK's default chain (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_REGION, and AWS_ENDPOINT_URL_S3 for the endpoint),
both tested. Errors: a missing object is a not-found naming it; wrong keys
and keys without permission (moto with IAM auth enforced, its own server)
are an access-denied error naming the object and never the secret.

Requests are counted on the server's side (moto's access log), not by Thaw:
reading a data file costs a HEAD, the footer and the column chunks.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import boto3
import pytest
from pyiceberg.catalog.sql import SqlCatalog

import fixtures
import lakehouse
from test_inspect import assert_same_records, parse_records

NAME = "ns.small"


def write_small(cat, location: str):
    """The same canonical table fixtures.build_small_canonical writes, at `location`."""
    cat.create_namespace_if_not_exists("ns")
    t = cat.create_table(NAME, schema=fixtures.canonical_schema(), location=location,
                         partition_spec=fixtures.CANONICAL_SPEC,
                         properties={"format-version": "2", **fixtures.thaw_props("s")})
    records = fixtures.edge_case_records([0, 1], 12, seed=99)
    for part in fixtures.chunks(records, 2):
        fixtures.append_rows(t, [fixtures.canonical_row(r) for r in part])
    return cat.load_table(NAME), fixtures.expected_view(records)


@pytest.fixture(scope="module")
def tables(s3_store, tmp_path_factory):
    local_dir = str(tmp_path_factory.mktemp("objstore-local"))
    local = fixtures.build_small_canonical(local_dir, NAME)
    d = tmp_path_factory.mktemp("objstore-s3cat")
    cat = SqlCatalog("s3", uri=f"sqlite:///{d}/catalog.db", warehouse=f"s3://{s3_store.bucket}/objstore",
                     **s3_store.props())
    remote, records = write_small(cat, f"s3://{s3_store.bucket}/objstore/ns/small")
    return local, remote, records, f"sqlite:///{d}/catalog.db"


def props_args(props: dict[str, str]) -> list[str]:
    out = []
    for k, v in props.items():
        out += ["--catalog-property", f"{k}={v}"]
    return out


def aws_env(endpoint: str, key: str, secret: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret, AWS_REGION="us-east-1",
               AWS_ENDPOINT_URL_S3=endpoint, AWS_EC2_METADATA_DISABLED="true",
               AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent")
    return env


def run(thaw_bin, *args, env=None):
    import subprocess
    return subprocess.run([str(thaw_bin), *map(str, args)], capture_output=True, timeout=120, env=env)


def has_catalog_property(thaw_bin) -> bool:
    return b"--catalog-property" in run(thaw_bin, "inspect", "--help").stdout


def records_json(p) -> list[dict]:
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")[:3000]
    return parse_records(p.stdout, "thaw")


def test_records_from_s3_equal_the_local_tables(thaw_bin, s3_store, tables):
    local, remote, records, _ = tables
    assert remote.metadata_location.startswith("s3://")
    want = records_json(run(thaw_bin, "inspect", "--metadata", local.metadata_location, "--records",
                            "--format", "json"))
    assert_same_records(want, records)
    env = aws_env(s3_store.endpoint, s3_store.access_key, s3_store.secret_key)
    got = records_json(run(thaw_bin, "inspect", "--metadata", remote.metadata_location, "--records", "--format",
                           "json", env=env))
    assert_same_records(got, want)


def test_catalog_properties_configure_the_store(thaw_bin, s3_store, tables):
    local, remote, records, sql_uri = tables
    assert has_catalog_property(thaw_bin), "thaw inspect has no --catalog-property (branch catconf not merged)"
    # No AWS variables at all: everything comes from the properties.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE="/nonexistent",
               AWS_SHARED_CREDENTIALS_FILE="/nonexistent")
    got = records_json(run(thaw_bin, "inspect", "--metadata", remote.metadata_location,
                           *props_args(s3_store.props()), "--records", "--format", "json", env=env))
    assert_same_records(got, records)
    # A SQL catalog whose tables live in S3: the catalog's properties reach the tables' FileIO.
    got = records_json(run(thaw_bin, "inspect", "--catalog", sql_uri, "--table", NAME,
                           *props_args(s3_store.props()), "--records", "--format", "json", env=env))
    assert_same_records(got, records)
    # Secrets never in the output, even with --format json.
    p = run(thaw_bin, "inspect", "--metadata", remote.metadata_location, *props_args(s3_store.props()),
            "--format", "json", env=env)
    assert p.returncode == 0, p.stderr.decode()
    assert s3_store.secret_key.encode() not in p.stdout + p.stderr


def test_missing_objects_are_named(thaw_bin, s3_store, tables):
    _, remote, _, _ = tables
    env = aws_env(s3_store.endpoint, s3_store.access_key, s3_store.secret_key)
    missing = f"s3://{s3_store.bucket}/objstore/ns/nope/metadata/v1.metadata.json"
    p = run(thaw_bin, "inspect", "--metadata", missing, env=env)
    assert p.returncode != 0
    err = p.stderr.decode()
    assert missing in err and "does not exist" in err, err

    # A data file listed in the manifests but gone from the bucket.
    data_key = next(k for k in s3_store.list_keys("objstore/ns/small/data/") if k.endswith(".parquet"))
    c = s3_store.client()
    body = c.get_object(Bucket=s3_store.bucket, Key=data_key)["Body"].read()
    c.delete_object(Bucket=s3_store.bucket, Key=data_key)
    try:
        p = run(thaw_bin, "inspect", "--metadata", remote.metadata_location, "--records", env=env)
    finally:
        c.put_object(Bucket=s3_store.bucket, Key=data_key, Body=body)
    assert p.returncode != 0
    err = p.stderr.decode()
    assert f"s3://{s3_store.bucket}/{data_key}" in err and "does not exist" in err, err


def test_requests_per_data_file(thaw_bin, s3_store, tables):
    """Counted by the server: HEAD + footer + column chunks per data file, each metadata file read once, and each
    manifest in one GET."""
    _, remote, records, _ = tables
    env = aws_env(s3_store.endpoint, s3_store.access_key, s3_store.secret_key)
    log = s3_store.log
    start = log.stat().st_size
    got = records_json(run(thaw_bin, "inspect", "--metadata", remote.metadata_location, "--records", "--format",
                           "json", env=env))
    assert_same_records(got, records)
    time.sleep(0.2)  # the access log line is written after the response
    with open(log, "rb") as f:
        f.seek(start)
        lines = f.read().decode("utf-8", "replace").splitlines()
    req = re.compile(r'"(?:\x1b\[[0-9;]*m)*(GET|HEAD|PUT|POST|DELETE) /' + re.escape(s3_store.bucket) + r"/([^ ?]+)")
    per_key: dict[str, list[str]] = {}
    for line in lines:
        m = req.search(line)
        if m:
            per_key.setdefault(m.group(2), []).append(m.group(1))
    data = {k: v for k, v in per_key.items() if k.endswith(".parquet")}
    meta = {k: v for k, v in per_key.items() if not k.endswith(".parquet")}
    n_files = len([k for k in s3_store.list_keys("objstore/ns/small/data/") if k.endswith(".parquet")])
    assert len(data) == n_files, per_key
    print(f"\nrequests per data file: {json.dumps(data)}\nmetadata requests: {json.dumps(meta)}")
    for key, methods in data.items():
        assert methods.count("HEAD") <= 1, (key, methods)
        # footer + column chunks (coalesced): 2 GETs for a small file, never one per page
        assert 1 <= methods.count("GET") <= 3, (key, methods)
    for key, methods in meta.items():
        assert methods.count("GET") == 1, (key, methods)  # manifests and metadata cached after the first read
        # A manifest's length is in the manifest list: read with no HEAD for its size (as Iceberg Java does).
        if not key.rsplit("/", 1)[-1].startswith("snap-") and key.endswith(".avro"):
            assert methods == ["GET"], (key, methods)


class AuthS3Store(lakehouse.S3Store):
    """moto with IAM authentication enforced after the first requests, which create the bucket and a user."""

    name = "moto with IAM auth"

    def _spawn(self, argv, env=None, **kw):
        env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="6")
        return super()._spawn(argv, env=env, **kw)


@pytest.fixture(scope="module")
def auth_store(tmp_path_factory):
    s = AuthS3Store.start(tmp_path_factory.mktemp("moto-auth"))  # request 1: create_bucket
    kw = dict(endpoint_url=s.endpoint, aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap",
              region_name=s.region)
    iam = boto3.client("iam", **kw)
    iam.create_user(UserName="reader")  # 2
    key = iam.create_access_key(UserName="reader")["AccessKey"]  # 3
    iam.put_user_policy(UserName="reader", PolicyName="s3", PolicyDocument=json.dumps(  # 4
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
    iam.create_user(UserName="nobody")  # 5: no policy, so no permission
    s.nobody = iam.create_access_key(UserName="nobody")["AccessKey"]  # 6; from now on requests are checked
    s.access_key, s.secret_key = key["AccessKeyId"], key["SecretAccessKey"]
    yield s
    s.stop()


def test_refused_credentials_name_the_object_not_the_secret(thaw_bin, auth_store, tmp_path):
    d = tmp_path / "cat"
    d.mkdir()
    cat = SqlCatalog("auth", uri=f"sqlite:///{d}/catalog.db", warehouse=f"s3://{auth_store.bucket}/auth",
                     **auth_store.props())
    t, records = write_small(cat, f"s3://{auth_store.bucket}/auth/ns/small")
    ok = records_json(run(thaw_bin, "inspect", "--metadata", t.metadata_location, "--records", "--format", "json",
                          env=aws_env(auth_store.endpoint, auth_store.access_key, auth_store.secret_key)))
    assert_same_records(ok, records)
    wrong_secret = "wrong-secret-" + auth_store.secret_key[:6]
    cases = [(auth_store.access_key, wrong_secret),                                    # bad signature
             ("AKIAUNKNOWNKEY000000", wrong_secret),                                   # unknown key
             (auth_store.nobody["AccessKeyId"], auth_store.nobody["SecretAccessKey"])]  # no permission
    for key, secret in cases:
        p = run(thaw_bin, "inspect", "--metadata", t.metadata_location,
                env=aws_env(auth_store.endpoint, key, secret))
        assert p.returncode != 0
        err = p.stderr.decode()
        assert t.metadata_location in err, err
        assert "refused access" in err and "ACCESS_DENIED" in err, err
        assert secret not in err, err


# --------------------------------------------------------------------------
# Writes and deletes (for archive) through tests/tools/storage_tool.cc


@pytest.fixture(scope="module")
def storage_tool(thaw_bin) -> Path:
    p = Path(thaw_bin).parent / "thaw_storage_tool"
    if not p.exists():
        pytest.fail(f"{p} not found: build it (ninja -C build thaw_storage_tool)", pytrace=False)
    return p


def tool(storage_tool, store, *args) -> dict:
    import subprocess
    props = []
    for k, v in store.props().items():
        props += ["-p", f"{k}={v}"]
    p = subprocess.run([str(storage_tool), *props, *map(str, args)], capture_output=True, timeout=120)
    out = json.loads(p.stdout.decode().strip().splitlines()[-1])
    assert (p.returncode == 0) == out["ok"], p
    return out


def pattern(n: int) -> bytes:
    return bytes(i % 251 for i in range(n))


def checksum(data: bytes) -> int:
    """storage_tool's checksum of the bytes it read."""
    c = 0
    for b in data:
        c = (c * 31 + b) % 1000000007
    return c


def test_writes_appear_on_close_and_aborted_writes_leave_nothing(storage_tool, s3_store):
    c = s3_store.client()
    base = f"s3://{s3_store.bucket}/objstore-writes"
    small = tool(storage_tool, s3_store, "put", f"{base}/small.bin", 1000)
    assert small["ok"], small
    assert c.get_object(Bucket=s3_store.bucket, Key="objstore-writes/small.bin")["Body"].read() == pattern(1000)
    # 25 MB: uploaded in parts (multipart), the same bytes back.
    big = tool(storage_tool, s3_store, "put", f"{base}/big.bin", 25_000_000)
    assert big["ok"], big
    body = c.get_object(Bucket=s3_store.bucket, Key="objstore-writes/big.bin")["Body"].read()
    assert len(body) == 25_000_000 and body[:251] == pattern(251) and body[-1] == (25_000_000 - 1) % 251
    for how in ("put-abort", "put-drop"):
        r = tool(storage_tool, s3_store, how, f"{base}/{how}.bin", 12_000_000)
        assert r["ok"], r
    keys = s3_store.list_keys("objstore-writes/")
    assert "objstore-writes/put-abort.bin" not in keys and "objstore-writes/put-drop.bin" not in keys, keys
    assert not c.list_multipart_uploads(Bucket=s3_store.bucket).get("Uploads"), "an aborted upload is left pending"

    gone = tool(storage_tool, s3_store, "get", f"{base}/put-abort.bin")
    assert gone["code"] == "not found" and f"{base}/put-abort.bin" in gone["error"], gone
    # ReadAll: the small file is cached after its first read (a HEAD and a GET of its first MiB made at the same
    # time, then nothing); the 25 MB one is not, and each read costs a HEAD, that early GET and a GET of the rest.
    got = tool(storage_tool, s3_store, "get", f"{base}/small.bin", f"{base}/big.bin")
    assert got["ok"] and got["size"] == 25_001_000, got
    assert got["requests"] == 2 + 2 * 3, got
    assert got["bytes_read"] == 1000 + 2 * 25_000_000, got
    # Sizes around the early GET's 1 MiB, and an empty object (S3 refuses its range with 416): the same bytes.
    for n in (0, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 1_500_000):
        assert tool(storage_tool, s3_store, "put", f"{base}/edge-{n}.bin", n)["ok"]
        got = tool(storage_tool, s3_store, "get", f"{base}/edge-{n}.bin")
        assert got["ok"] and got["size"] == n and got["checksum"] == checksum(pattern(n)), (n, got)

    assert tool(storage_tool, s3_store, "delete", f"{base}/small.bin")["ok"]
    assert "objstore-writes/small.bin" not in s3_store.list_keys("objstore-writes/")
    again = tool(storage_tool, s3_store, "delete", f"{base}/small.bin")
    assert again["code"] == "not found" and f"{base}/small.bin" in again["error"], again


def test_list_is_recursive_with_sizes_and_times_and_skips_directory_markers(storage_tool, s3_store):
    """FileIO::List (thaw maintain --remove-orphans): every object under the prefix, nested ones too, with
    its size and modification time; a directory marker object ("dir/") and keys beside the prefix are not
    files under it."""
    import time
    c = s3_store.client()
    base = f"s3://{s3_store.bucket}/objstore-list/t"
    before_ms = int(time.time() * 1000) - 5000
    for rel, size in (("a.bin", 10), ("data/p=0/b.bin", 2000), ("metadata/c.json", 1)):
        assert tool(storage_tool, s3_store, "put", f"{base}/{rel}", size)["ok"]
    c.put_object(Bucket=s3_store.bucket, Key="objstore-list/t/data/empty/", Body=b"")  # a directory marker
    c.put_object(Bucket=s3_store.bucket, Key="objstore-list/tt/other.bin", Body=b"x")  # beside the prefix
    for prefix in (base, base + "/"):
        r = tool(storage_tool, s3_store, "list", prefix)
        assert r["ok"], r
        got = {f["location"]: f["size"] for f in r["files"]}
        assert got == {f"{base}/a.bin": 10, f"{base}/data/p=0/b.bin": 2000, f"{base}/metadata/c.json": 1}, r
        assert all(before_ms <= f["mtime_ms"] <= int(time.time() * 1000) + 5000 for f in r["files"]), r
    missing = tool(storage_tool, s3_store, "list", f"s3://{s3_store.bucket}/objstore-list/none")
    assert missing["ok"] and missing["files"] == [], missing


def test_parquet_reads_coalesce_chunks_and_cache_footers(storage_tool, s3_store, tables):
    """First open + full read of a data file: HEAD, footer, column chunks in one coalesced GET; a second open
    in the same process finds the footer (and size) cached: only the column chunks are fetched."""
    _, remote, _, _ = tables
    key = next(k for k in s3_store.list_keys("objstore/ns/small/data/") if k.endswith(".parquet"))
    r = tool(storage_tool, s3_store, "parquet", f"s3://{s3_store.bucket}/{key}")
    assert r["ok"], r
    assert r["rows"] == 6, r
    assert r["requests_first"] == 3, r
    assert r["requests_second"] == 1, r
