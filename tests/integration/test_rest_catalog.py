"""Thaw's REST catalog client against Apache Iceberg's own RESTCatalogServer.

The tables are written by pyiceberg through the REST catalog into the S3-compatible store (both real servers
from the ``lakehouse`` plugin); Thaw reads them with ``--catalog http://...`` and nothing else: the S3
endpoint and keys come from the catalog (the load-table response's config / vended storage credentials),
not from Thaw's flags or the environment. Auth goes through ``fault_proxy.FaultProxy`` in front of the
catalog (bearer-token check and an OAuth2 client-credentials token endpoint).
"""

from __future__ import annotations

import json
import os

import pytest

import fixtures
from fault_proxy import FaultProxy
from serve_harness import ThawServer

NS = ("rest_it",)
DEEP_NS = ("rest_it", "deep", "er")
TOKEN = "right-token-5f1c2b"
CLIENT_ID, CLIENT_SECRET = "thaw-client", "client-secret-9d2e"


def _write_table(cat, ident: tuple[str, ...], seed: int):
    for depth in range(1, len(ident)):
        cat.create_namespace_if_not_exists(ident[:depth])
    t = cat.create_table(ident, schema=fixtures.canonical_schema(), partition_spec=fixtures.CANONICAL_SPEC,
                         properties={"format-version": "2", **fixtures.thaw_props("t" + str(seed))})
    records = fixtures.edge_case_records([0, 1], 12, seed=seed)
    for part in fixtures.chunks(records, 2):
        fixtures.append_rows(t, [fixtures.canonical_row(r) for r in part])
    return cat.load_table(ident), records


@pytest.fixture(scope="module")
def rest_tables(rest_catalog):
    cat = rest_catalog.pyiceberg()
    flat, flat_records = _write_table(cat, NS + ("flat",), seed=11)
    deep, deep_records = _write_table(cat, DEEP_NS + ("small",), seed=12)
    deep2, deep2_records = _write_table(cat, DEEP_NS + ("small2",), seed=13)
    return {"rest_it.deep.er.small2": (deep2, deep2_records), "rest_it.flat": (flat, flat_records), "rest_it.deep.er.small": (deep, deep_records)}


def _env_without_aws() -> dict:
    """Thaw's environment with no AWS settings: storage access must come from the catalog."""
    return {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | {"AWS_EC2_METADATA_DISABLED": "true"}


# What the catalog does not vend: the store's endpoint, region and addressing (set by the lakehouse plugin).
STORE_PROPS: list[str] = []


@pytest.fixture(scope="module", autouse=True)
def _store_props(rest_catalog):
    STORE_PROPS[:] = [f"{k}={v}" for k, v in rest_catalog.client_props().items()]
    assert not any("access-key" in p or "secret" in p for p in STORE_PROPS)  # the keys come from the catalog


def run_thaw(thaw, *args, timeout=120):
    """thaw with the store's endpoint as catalog properties and no AWS_* variables."""
    import subprocess
    extra = [a for p in STORE_PROPS for a in ("--catalog-property", p)] if "--catalog" in args else []
    return subprocess.run([str(thaw.binary), *map(str, args), *extra], capture_output=True, timeout=timeout,
                          env=_env_without_aws())


def inspect_json(thaw, uri: str, table: str, *props: str):
    args = ["inspect", "--catalog", uri, "--table", table, "--json"]
    for p in props:
        args += ["--catalog-property", p]
    p = run_thaw(thaw, *args)
    assert p.returncode == 0, f"thaw {' '.join(args)} exited {p.returncode}:\n{p.stderr.decode()[:4000]}"
    return json.loads(p.stdout)


def check_matches(out: dict, table, records):
    assert out["snapshot_id"] == table.current_snapshot().snapshot_id
    assert out["records"] == len(records)
    assert out["data_files"] == len(list(table.scan().plan_files()))


@pytest.mark.parametrize("name", ["rest_it.flat", "rest_it.deep.er.small"])
def test_inspect_through_rest_and_s3_with_catalog_supplied_storage_config(thaw, rest_catalog, rest_tables, name):
    table, records = rest_tables[name]
    assert table.metadata_location.startswith("s3://")
    out = inspect_json(thaw, rest_catalog.uri, name)
    check_matches(out, table, records)


def test_records_read_through_rest_match_what_pyiceberg_wrote(thaw, rest_catalog, rest_tables):
    table, records = rest_tables["rest_it.deep.er.small"]
    p = run_thaw(thaw, "inspect", "--catalog", rest_catalog.uri, "--table", "rest_it.deep.er.small", "--records",
                 "--format", "json")
    assert p.returncode == 0, p.stderr.decode()[:4000]
    got = [json.loads(line) for line in p.stdout.decode().splitlines() if line.strip()]
    assert sorted((r["partition"], r["offset"]) for r in got) == sorted(
        (r["partition"], r["offset"]) for r in records)


def test_missing_table_is_a_clear_not_found(thaw, rest_catalog, rest_tables):
    p = run_thaw(thaw, "inspect", "--catalog", rest_catalog.uri, "--table", "rest_it.deep.nope", "--json")
    assert p.returncode != 0
    err = p.stderr.decode()
    assert "rest_it.deep.nope" in err
    assert "404" in err and "no such table" in err, err
    assert rest_catalog.uri.removeprefix("http://") in err  # names the catalog


def test_missing_namespace_level_is_not_found(thaw, rest_catalog, rest_tables):
    p = run_thaw(thaw, "inspect", "--catalog", rest_catalog.uri, "--table", "rest_it.deep.small", "--json")
    assert p.returncode != 0
    assert "no such table" in p.stderr.decode()


def test_wrong_uri_fails_at_config_with_the_path(thaw, rest_catalog):
    p = run_thaw(thaw, "inspect", "--catalog", rest_catalog.uri + "/not-a-catalog", "--table", "rest_it.flat")
    assert p.returncode != 0
    err = p.stderr.decode()
    assert "/not-a-catalog/v1/config" in err and "HTTP 404" in err, err


# ---------------------------------------------------------------------------------------------------------
# auth through the fault proxy


@pytest.fixture
def bearer_proxy(rest_catalog):
    proxy = FaultProxy(rest_catalog.uri, bearer=TOKEN).start()
    yield proxy
    proxy.stop()


def test_wrong_bearer_token_is_refused_with_a_clear_message(thaw, bearer_proxy, rest_tables):
    p = run_thaw(thaw, "inspect", "--catalog", bearer_proxy.url, "--table", "rest_it.flat", "--catalog-property",
                 "token=wrong-token-0000")
    assert p.returncode != 0
    err = p.stderr.decode()
    assert "HTTP 401" in err and "/v1/config" in err
    assert "bearer token in property 'token'" in err
    assert "wrong-token-0000" not in err and TOKEN not in err


def test_no_token_names_what_to_set(thaw, bearer_proxy, rest_tables):
    p = run_thaw(thaw, "inspect", "--catalog", bearer_proxy.url, "--table", "rest_it.flat")
    assert p.returncode != 0
    err = p.stderr.decode()
    assert "HTTP 401" in err and "'token'" in err and "'credential'" in err


def test_right_bearer_token_works(thaw, bearer_proxy, rest_tables):
    table, records = rest_tables["rest_it.flat"]
    out = inspect_json(thaw, bearer_proxy.url, "rest_it.flat", f"token={TOKEN}")
    check_matches(out, table, records)
    assert bearer_proxy.stats()["auth_failures"] == 0


@pytest.fixture
def oauth_proxy(rest_catalog):
    proxy = FaultProxy(rest_catalog.uri, oauth_clients={CLIENT_ID: CLIENT_SECRET}).start()
    yield proxy
    proxy.stop()


def test_oauth2_client_credentials_work(thaw, oauth_proxy, rest_tables):
    table, records = rest_tables["rest_it.deep.er.small"]
    out = inspect_json(thaw, oauth_proxy.url, "rest_it.deep.er.small", f"credential={CLIENT_ID}:{CLIENT_SECRET}")
    check_matches(out, table, records)
    stats = oauth_proxy.stats()
    assert stats["tokens_issued"] == 1  # one token for the whole run (not one per request)
    assert stats["auth_failures"] == 0


def test_oauth2_wrong_secret_is_refused_with_a_clear_message(thaw, oauth_proxy, rest_tables):
    p = run_thaw(thaw, "inspect", "--catalog", oauth_proxy.url, "--table", "rest_it.flat", "--catalog-property",
                 f"credential={CLIENT_ID}:not-the-secret")
    assert p.returncode != 0
    err = p.stderr.decode()
    assert "/v1/oauth/tokens" in err and "HTTP 401" in err
    assert "unknown client_id or wrong client_secret" in err  # the token endpoint's own words
    assert "property 'credential'" in err
    assert "not-the-secret" not in err and CLIENT_SECRET not in err


def test_oauth2_token_is_refetched_after_it_expires(thaw, oauth_proxy, rest_tables):
    # Tokens live 1 s: each of Thaw's catalog requests after the first second needs a new one, fetched ahead
    # of expiry or, when the proxy's clock disagrees, after a 401.
    oauth_proxy.token_ttl_s = 1
    oauth_proxy.latency_ms = 700  # token + config take > 1 s: the load needs a new token
    table, records = rest_tables["rest_it.flat"]
    out = inspect_json(thaw, oauth_proxy.url, "rest_it.flat", f"credential={CLIENT_ID}:{CLIENT_SECRET}")
    check_matches(out, table, records)
    assert oauth_proxy.stats()["tokens_issued"] >= 2


# ---------------------------------------------------------------------------------------------------------
# transient catalog faults


def test_catalog_503_429_and_resets_are_retried(thaw, rest_catalog, rest_tables):
    proxy = FaultProxy(rest_catalog.uri, fault_rate=0.5, faults=("503", "429", "reset"), seed=3).start()
    try:
        table, records = rest_tables["rest_it.deep.er.small"]
        out = inspect_json(thaw, proxy.url, "rest_it.deep.er.small")
        check_matches(out, table, records)
        assert sum(proxy.stats()["faults"].values()) >= 1
    finally:
        proxy.stop()


def test_catalog_always_unavailable_ends_with_a_bounded_clear_error(thaw, rest_catalog):
    proxy = FaultProxy(rest_catalog.uri, fault_rate=1.0, faults=("503",)).start()
    try:
        p = run_thaw(thaw, "inspect", "--catalog", proxy.url, "--table", "rest_it.flat", "--catalog-property",
                     "rest.client.max-retries=2", "--catalog-property", "token=secret-tok-123")
        assert p.returncode != 0
        err = p.stderr.decode()
        assert "HTTP 503" in err and "/v1/config" in err and "after 3 attempts" in err, err
        assert "secret-tok-123" not in err
        assert proxy.stats()["requests"] == 3
    finally:
        proxy.stop()


# ---------------------------------------------------------------------------------------------------------
# listing: serve --table-prefix walks the namespaces recursively and follows next-page-token


def test_serve_discovers_tables_in_a_nested_namespace_page_by_page(thaw_bin, rest_catalog, rest_tables, tmp_path):
    from confluent_kafka.admin import AdminClient
    proxy = FaultProxy(rest_catalog.uri).start()
    server = ThawServer(thaw_bin, proxy.url, [], tmp_path, extra=[
        "--table-prefix", "rest_it.deep.er", "--catalog-property", "rest-page-size=1",
        *sum((["--catalog-property", f"{k}={v}"] for k, v in rest_catalog.client_props().items()), [])])
    try:
        server.start()
        topics = AdminClient({"bootstrap.servers": server.bootstrap}).list_topics(timeout=30).topics
        assert {"small", "small2"} <= set(topics), server.stderr()
        assert "flat" not in topics  # rest_it.flat is in another namespace
        by_path = proxy.stats()["by_path"]
        # Namespaces listed level by level (rest_it -> rest_it.deep -> rest_it.deep.er) ...
        assert sum(n for k, n in by_path.items() if k.endswith("/v1/namespaces")) >= 3, by_path
        # ... and the two tables of rest_it.deep.er fetched one page at a time.
        deep_lists = sum(n for k, n in by_path.items() if k.startswith("GET ") and "deep" in k and "er/tables" in k
                         and k.endswith("/tables"))
        assert deep_lists >= 2, by_path
        server.stop()
    finally:
        server.kill()
        proxy.stop()


# ---------------------------------------------------------------------------------------------------------
# write primitives for archive (issue 10): create namespace/table and commit, through tests/tools/rest_tool.cc


@pytest.fixture(scope="module")
def rest_tool(thaw_bin):
    p = thaw_bin.parent / "thaw_rest_tool"
    if not os.access(p, os.X_OK):
        pytest.fail(f"{p} not found: build it (ninja -C build thaw_rest_tool)", pytrace=False)

    def run(uri: str, cmd: str, *args: str, props: tuple[str, ...] = ()):
        import subprocess
        r = subprocess.run([str(p), uri, *STORE_PROPS, *props, cmd, *args], capture_output=True, timeout=120,
                           env=_env_without_aws())
        assert r.returncode == 0, r.stderr.decode()
        return json.loads(r.stdout)
    return run


def _schema_json():
    return {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "type": "long", "required": True},
        {"id": 2, "name": "v", "type": "string", "required": False}]}


def test_create_namespace_and_table_then_commit(rest_tool, rest_catalog):
    uri = rest_catalog.uri
    assert rest_tool(uri, "create-namespace", "arch.x.y") == {"ok": True}
    assert rest_tool(uri, "create-namespace", "arch.x.y") == {"ok": True}  # exists: fine
    created = rest_tool(uri, "create-table", "arch.x.y.t", json.dumps({"schema": _schema_json(),
                                                                       "properties": {"format-version": "2"}}))
    assert created["ok"], created
    assert created["metadata_location"].startswith("s3://")
    cat = rest_catalog.pyiceberg()
    t = cat.load_table(("arch", "x", "y", "t"))
    assert str(t.metadata.table_uuid) == created["table_uuid"]

    # Creating it again: a conflict, not a crash.
    again = rest_tool(uri, "create-table", "arch.x.y.t", json.dumps({"schema": _schema_json()}))
    assert again["code"] == "commit conflict" and "already exists" in again["message"]

    # A commit whose requirements hold: 200, the new metadata.
    req = [{"type": "assert-table-uuid", "uuid": created["table_uuid"]}]
    upd = [{"action": "set-properties", "updates": {"thaw.test": "one"}}]
    done = rest_tool(uri, "commit", "arch.x.y.t", json.dumps(req), json.dumps(upd))
    assert done["ok"], done
    assert done["metadata_location"] != created["metadata_location"]
    assert cat.load_table(("arch", "x", "y", "t")).properties["thaw.test"] == "one"

    # A commit whose requirement no longer holds: 409 -> commit conflict, nothing changed.
    stale = [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 12345}]
    upd2 = [{"action": "set-properties", "updates": {"thaw.test": "two"}}]
    conflict = rest_tool(uri, "commit", "arch.x.y.t", json.dumps(stale), json.dumps(upd2))
    assert conflict["code"] == "commit conflict", conflict
    assert "reload the table" in conflict["message"]
    assert cat.load_table(("arch", "x", "y", "t")).properties["thaw.test"] == "one"


def test_commit_with_lost_response_is_state_unknown_not_failure(rest_tool, rest_catalog):
    uri = rest_catalog.uri
    rest_tool(uri, "create-namespace", "arch2")
    created = rest_tool(uri, "create-table", "arch2.t", json.dumps({"schema": _schema_json()}))
    assert created["ok"], created
    req = [{"type": "assert-table-uuid", "uuid": created["table_uuid"]}]
    cat = rest_catalog.pyiceberg()
    # Only the commit's POST is faulted: the proxy forwards it (the catalog applies it), then resets the
    # connection halfway through the response.
    proxy = FaultProxy(uri, fault_rate=1.0, faults=("reset",),
                       fault_filter=lambda method, path: method == "POST" and path.endswith("/tables/t")).start()
    try:
        upd = [{"action": "set-properties", "updates": {"thaw.lost": "applied"}}]
        lost = rest_tool(proxy.url, "commit", "arch2.t", json.dumps(req), json.dumps(upd))
        assert lost["code"] == "commit state unknown", lost
        assert "keep the files" in lost["message"]
        # ... and indeed it was applied: claiming failure (and deleting files) would have been wrong.
        assert cat.load_table(("arch2", "t")).properties.get("thaw.lost") == "applied"
        assert proxy.requests_matching("/tables/t", "POST") == 1  # a lost commit is not blindly re-sent

        # 503 on every try: the commit is retried (the server did not act), then reported as unknown.
        proxy.faults = ("503",)
        upd = [{"action": "set-properties", "updates": {"thaw.503": "x"}}]
        unavailable = rest_tool(proxy.url, "commit", "arch2.t", json.dumps(req), json.dumps(upd),
                                props=("rest.client.max-retries=1",))
        assert unavailable["code"] == "commit state unknown", unavailable
        assert "HTTP 503" in unavailable["message"]
    finally:
        proxy.stop()
