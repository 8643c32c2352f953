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
    return {"rest_it.flat": (flat, flat_records), "rest_it.deep.er.small": (deep, deep_records)}


def _env_without_aws() -> dict:
    """Thaw's environment with no AWS settings: storage access must come from the catalog."""
    return {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | {"AWS_EC2_METADATA_DISABLED": "true"}


def run_thaw(thaw, *args, env=None, timeout=120):
    import subprocess
    return subprocess.run([str(thaw.binary), *map(str, args)], capture_output=True, timeout=timeout,
                          env=env if env is not None else _env_without_aws())


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
