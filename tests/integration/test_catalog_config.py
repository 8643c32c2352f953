"""Catalog selection in pyiceberg's style (issue 9) and the SQL catalog on PostgreSQL.

* `--catalog NAME` resolves a named catalog from a pyiceberg configuration:
  $HOME/.pyiceberg.yaml (checked to be one pyiceberg itself reads) and
  PYICEBERG_CATALOG__NAME__KEY variables (env wins over the file).
* a `[catalog]` table in a --config TOML file gives the catalog properties.
* pyiceberg's SqlCatalog writes a table into a real PostgreSQL (Debian's
  server, the `postgres` fixture of lakehouse.py); `thaw inspect` reads it
  record-for-record as pyiceberg reads it, and `thaw replay` copies it exactly
  into a real Kafka broker; a wrong password is refused with a clear message
  that never holds the password; `thaw serve --catalog NAME` serves it.
* a SQL catalog whose table lives in S3 (moto): the storage properties come
  from the named catalog's .pyiceberg.yaml entry, a [catalog] table, or
  --catalog-property, in that order of precedence (also for --metadata).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fixtures
import oracle
from test_inspect import assert_same_records, parse_records
from test_replay import assert_replayed, inspect_records, topic_name

NAME = f"{fixtures.NS}.canonical_v2"


def run(thaw_bin, *args, env=None, timeout=120):
    e = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    e.update(env or {})
    return subprocess.run([str(thaw_bin), *map(str, args)], capture_output=True, timeout=timeout, env=e)


def ok(p):
    assert p.returncode == 0, f"exit {p.returncode}\nstderr:\n{p.stderr.decode(errors='replace')[:4000]}"
    return p


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """A pyiceberg SqlCatalog (SQLite) named `default` with one table."""
    wh = str(tmp_path_factory.mktemp("catconf-wh"))
    cat = fixtures.open_catalog(wh)
    cat.create_namespace_if_not_exists(fixtures.NS)
    built = fixtures.build_canonical_v2(cat, wh)
    return {"dir": wh, "uri": fixtures.catalog_uri(wh), "built": built, "table": cat.load_table(NAME)}


def want_records(table):
    return oracle.expected_records(table, "thaw", {})


def inspect_json(thaw_bin, *args, env=None):
    return json.loads(ok(run(thaw_bin, "inspect", *args, "--table", NAME, "--json", env=env)).stdout)


def test_named_catalog_from_pyiceberg_yaml(thaw_bin, local, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".pyiceberg.yaml").write_text(
        "# as pyiceberg's docs write it\n"
        "catalog:\n"
        "  default:\n"
        f"    uri: {local['uri']}\n"
        f"    warehouse: file://{local['dir']}\n"
        "  Other:\n"
        "    type: sql\n"
        f"    uri: {local['uri']}\n")
    env = {"HOME": str(home)}
    # pyiceberg itself reads this file and finds the table.
    py = subprocess.run([sys.executable, "-c",
                         "from pyiceberg.catalog import load_catalog;"
                         f"print(load_catalog('default').load_table('{NAME}').metadata_location)"],
                        capture_output=True, text=True, env={**os.environ, **env}, cwd=tmp_path)
    assert py.returncode == 0, py.stderr
    direct = inspect_json(thaw_bin, "--catalog", local["uri"])
    named = inspect_json(thaw_bin, "--catalog", "default", env=env)
    assert named == direct
    assert named["records"] == len(local["built"].records)
    # A catalog's rows are under its name: "Other" holds none, unless --catalog-name says which.
    p = run(thaw_bin, "inspect", "--catalog", "other", "--table", NAME, "--json", env=env)
    assert p.returncode == 1
    assert f"table '{NAME}' not found" in p.stderr.decode() and "catalog 'other'" in p.stderr.decode()
    assert inspect_json(thaw_bin, "--catalog", "OTHER", "--catalog-name", "default", env=env) == direct
    got = parse_records(ok(run(thaw_bin, "inspect", "--catalog", "default", "--table", NAME, "--records",
                               "--format", "json", env=env)).stdout, "thaw")
    assert_same_records(got, want_records(local["table"]))


def test_named_catalog_from_environment_wins_over_yaml(thaw_bin, local, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".pyiceberg.yaml").write_text(f"catalog:\n  prod:\n    uri: sqlite:///{tmp_path}/missing.db\n")
    direct = inspect_json(thaw_bin, "--catalog", local["uri"])
    # The file's uri is wrong; the variable's is right and wins.
    env = {"HOME": str(home), "PYICEBERG_CATALOG__PROD__URI": local["uri"],
           "PYICEBERG_CATALOG__PROD__S3__ENDPOINT": "http://127.0.0.1:1"}
    assert inspect_json(thaw_bin, "--catalog", "prod", "--catalog-name", "default", env=env) == direct
    p = run(thaw_bin, "inspect", "--catalog", "prod", "--catalog-name", "default", "--table", NAME,
            env={"HOME": str(home)})
    assert p.returncode == 1 and "missing.db" in p.stderr.decode()
    # Only variables, no file at all; names with '_' become '-' as in pyiceberg.
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"HOME": str(empty), "PYICEBERG_CATALOG__MY_WH__URI": local["uri"]}
    assert inspect_json(thaw_bin, "--catalog", "my-wh", "--catalog-name", "default", env=env) == direct


def test_missing_named_catalog_lists_what_exists(thaw_bin, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".pyiceberg.yaml").write_text("catalog:\n  prod:\n    uri: http://127.0.0.1:1\n")
    p = run(thaw_bin, "inspect", "--catalog", "staging", "--table", NAME,
            env={"HOME": str(home), "PYICEBERG_CATALOG__DEV__URI": "sqlite:////x.db"}, )
    err = p.stderr.decode()
    assert p.returncode == 1, err
    assert "catalog 'staging' is not configured" in err
    assert f"{home}/.pyiceberg.yaml has no catalog.staging" in err
    assert "prod (" in err and "dev (environment)" in err


def test_config_file_catalog_table(thaw_bin, local, tmp_path):
    direct = inspect_json(thaw_bin, "--catalog", local["uri"])
    cfg = tmp_path / "thaw.toml"
    cfg.write_text(f'[catalog]\nuri = "{local["uri"]}"\n"s3.endpoint" = "http://127.0.0.1:1"\n'
                   's3.region = "us-east-1"   # unquoted dotted keys work too\n')
    assert inspect_json(thaw_bin, "--config", cfg) == direct
    # The command line's --catalog wins over the file's uri.
    bad = tmp_path / "bad.toml"
    bad.write_text(f'[catalog]\nuri = "sqlite:///{tmp_path}/nope.db"\n')
    assert inspect_json(thaw_bin, "--config", bad, "--catalog", local["uri"]) == direct
    # A [catalog] with a named catalog given in the command's section.
    home = tmp_path / "home"
    home.mkdir()
    (home / ".pyiceberg.yaml").write_text(f"catalog:\n  default:\n    uri: {local['uri']}\n")
    named = tmp_path / "named.toml"
    named.write_text('[inspect]\ncatalog = "default"\n[catalog]\n"s3.region" = "eu-west-1"\n')
    assert inspect_json(thaw_bin, "--config", named, env={"HOME": str(home)}) == direct
    # Errors name the file, line and key.
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(f'[catalog]\nuri = "{local["uri"]}"\n"s3.endpoint" = ["a", "b"]\n')
    p = run(thaw_bin, "inspect", "--config", wrong, "--table", NAME)
    assert p.returncode == 2
    assert f"--config {wrong} line 3 key 'catalog.s3.endpoint'" in p.stderr.decode(), p.stderr.decode()


# --------------------------------------------------------------------------
# PostgreSQL


@pytest.fixture(scope="module")
def pg_table(postgres, tmp_path_factory):
    """pyiceberg's SqlCatalog on PostgreSQL (psycopg2), catalog `pgcat`, one table."""
    from pyiceberg.catalog.sql import SqlCatalog
    wh = str(tmp_path_factory.mktemp("pg-wh"))
    cat = SqlCatalog("pgcat", uri=postgres.sqlalchemy_uri, warehouse=f"file://{wh}")
    cat.create_namespace_if_not_exists(fixtures.NS)
    built = fixtures.build_canonical_v2(cat, wh)
    return {"cat": cat, "built": built, "table": cat.load_table(NAME), "dir": wh}


@pytest.mark.parametrize("form", ["postgresql", "sqlalchemy", "jdbc"])
def test_postgres_catalog_written_by_pyiceberg_read_exactly(thaw_bin, postgres, pg_table, form):
    args = {
        "postgresql": ["--catalog", postgres.uri],
        "sqlalchemy": ["--catalog", postgres.sqlalchemy_uri],
        "jdbc": ["--catalog", f"jdbc:postgresql://127.0.0.1:{postgres.port}/{postgres.database}",
                 "--catalog-property", f"jdbc.user={postgres.user}",
                 "--catalog-property", f"jdbc.password={postgres.password}"],
    }[form]
    summary = json.loads(ok(run(thaw_bin, "inspect", *args, "--table", NAME, "--json")).stdout)
    assert summary["snapshot_id"] == pg_table["table"].current_snapshot().snapshot_id
    assert summary["records"] == len(pg_table["built"].records)
    got = parse_records(ok(run(thaw_bin, "inspect", *args, "--table", NAME, "--records", "--format",
                               "json")).stdout, "thaw")
    assert_same_records(got, want_records(pg_table["table"]))


def test_postgres_named_catalog_and_replay(thaw_bin, thaw, postgres, pg_table, kafka, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".pyiceberg.yaml").write_text(f"catalog:\n  pgcat:\n    uri: {postgres.sqlalchemy_uri}\n")
    env = {"HOME": str(home)}
    topic = topic_name("pg")
    p = run(thaw_bin, "replay", "--catalog", "pgcat", "--table", NAME, "--brokers", kafka.bootstrap, "--topic",
            topic, "--create-topic", "--quiet", "--json", env=env, timeout=300)
    ok(p)
    want = inspect_records(thaw, type("W", (), {"uri": postgres.uri})(), NAME, "--catalog-name", "pgcat")
    assert len(want) == len(pg_table["built"].records)
    assert json.loads(p.stdout)["records"] == len(want)
    assert_replayed(kafka.consume_all(topic), want, NAME,
                    snapshot=pg_table["table"].current_snapshot().snapshot_id)


def test_postgres_wrong_password_is_clear_and_secret(thaw_bin, postgres):
    secret = "Not-The-Pw-9731"
    uri = f"postgresql://{postgres.user}:{secret}@127.0.0.1:{postgres.port}/{postgres.database}"
    p = run(thaw_bin, "inspect", "--catalog", uri, "--table", NAME, "--json")
    err = p.stderr.decode()
    assert p.returncode == 1, err
    assert secret not in err and secret not in p.stdout.decode()
    assert "password authentication failed" in err and "refused the credentials" in err, err
    assert f"postgresql://{postgres.user}:***@127.0.0.1:{postgres.port}/{postgres.database}" in err
    jdbc = run(thaw_bin, "inspect", "--catalog", f"jdbc:postgresql://127.0.0.1:{postgres.port}/{postgres.database}",
               "--catalog-property", f"jdbc.user={postgres.user}", "--catalog-property", f"jdbc.password={secret}",
               "--table", NAME)
    assert jdbc.returncode == 1 and secret not in jdbc.stderr.decode()
    assert "refused the credentials" in jdbc.stderr.decode()


def test_postgres_named_catalog_served(thaw_bin, thaw, postgres, pg_table, tmp_path, monkeypatch):
    """`thaw serve --catalog NAME` with the catalog from PYICEBERG_CATALOG__ variables only."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
    from serve_harness import ThawServer, Topic

    empty = tmp_path / "home"
    empty.mkdir()
    monkeypatch.setenv("HOME", str(empty))
    monkeypatch.setenv("PYICEBERG_CATALOG__PGCAT__URI", postgres.sqlalchemy_uri)
    server = ThawServer(thaw_bin, "pgcat", [Topic("pgserved", NAME, "thaw")], tmp_path, topic_args=True)
    server.start()
    try:
        want = inspect_records(thaw, type("W", (), {"uri": postgres.uri})(), NAME, "--catalog-name", "pgcat")
        c = Consumer({"bootstrap.servers": server.bootstrap, "group.id": "catconf", "enable.auto.commit": False})
        md = c.list_topics("pgserved", timeout=30).topics["pgserved"]
        parts = sorted(md.partitions)
        marks = {p: c.get_watermark_offsets(TopicPartition("pgserved", p), timeout=30) for p in parts}
        ends = {p: marks[p][1] for p in parts}
        c.assign([TopicPartition("pgserved", p, OFFSET_BEGINNING) for p in parts])
        got: dict[int, list] = {p: [] for p in parts}
        done = {p for p in parts if marks[p][0] == marks[p][1]}
        while len(done) < len(parts):
            m = c.poll(10)
            assert m is not None, f"no record within 10 s; have {sum(map(len, got.values()))}"
            assert m.error() is None, m.error()
            got[m.partition()].append((m.key(), m.value()))
            if m.offset() + 1 >= ends[m.partition()]:
                done.add(m.partition())
        c.close()
        for p in parts:
            assert got[p] == [(w["key"], w["value"]) for w in want if w["partition"] == p], p
        assert sum(map(len, got.values())) == len(pg_table["built"].records)
    finally:
        assert "thaw-test-pw" not in server.stop()


# --------------------------------------------------------------------------
# A SQL catalog whose table lives in S3 (moto): the storage properties come
# from the named catalog's .pyiceberg.yaml entry, as pyiceberg reads them.


@pytest.fixture(scope="module")
def s3_table(s3_store, tmp_path_factory):
    from pyiceberg.catalog.sql import SqlCatalog
    d = tmp_path_factory.mktemp("catconf-s3cat")
    uri = f"sqlite:///{d}/catalog.db"
    cat = SqlCatalog("lake", uri=uri, warehouse=f"s3://{s3_store.bucket}/catconf", **s3_store.props())
    cat.create_namespace_if_not_exists(fixtures.NS)
    t = cat.create_table(NAME, schema=fixtures.canonical_schema(), partition_spec=fixtures.CANONICAL_SPEC,
                         location=f"s3://{s3_store.bucket}/catconf/ns/canonical",
                         properties={"format-version": "2", **fixtures.thaw_props("s")})
    records = fixtures.edge_case_records([0, 1], 10, seed=7)
    for part in fixtures.chunks(records, 2):
        fixtures.append_rows(t, [fixtures.canonical_row(r) for r in part])
    return {"uri": uri, "table": cat.load_table(NAME)}


def test_named_catalog_storage_properties_from_yaml_and_toml(thaw_bin, s3_store, s3_table, tmp_path):
    assert s3_table["table"].metadata_location.startswith("s3://")
    want = want_records(s3_table["table"])
    home = tmp_path / "home"
    home.mkdir()
    props = "".join(f"    {k}: {v}\n" for k, v in s3_store.props().items())
    (home / ".pyiceberg.yaml").write_text(f"catalog:\n  lake:\n    uri: {s3_table['uri']}\n{props}")
    no_aws = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_CONFIG_FILE": "/nonexistent",
              "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true"}
    env = {"HOME": str(home), **no_aws}
    got = parse_records(ok(run(thaw_bin, "inspect", "--catalog", "lake", "--table", NAME, "--records", "--format",
                               "json", env=env)).stdout, "thaw")
    assert_same_records(got, want)
    # The [catalog] table of a config file wins over the yaml (a dead endpoint fails) ...
    cfg = tmp_path / "dead.toml"
    cfg.write_text('[catalog]\n"s3.endpoint" = "http://127.0.0.1:1"\n')
    p = run(thaw_bin, "inspect", "--config", cfg, "--catalog", "lake", "--table", NAME, "--json", env=env)
    assert p.returncode == 1 and "127.0.0.1:1" in p.stderr.decode(), p.stderr.decode()
    assert s3_store.secret_key not in p.stderr.decode()
    # ... and --catalog-property wins over the config file.
    got = parse_records(ok(run(thaw_bin, "inspect", "--config", cfg, "--catalog", "lake", "--table", NAME,
                               "--catalog-property", f"s3.endpoint={s3_store.endpoint}", "--records",
                               "--format", "json", env=env)).stdout, "thaw")
    assert_same_records(got, want)
    # --metadata with the same properties from a [catalog] table.
    toml = tmp_path / "store.toml"
    toml.write_text("[catalog]\n" + "".join(f'"{k}" = "{v}"\n' for k, v in s3_store.props().items()))
    got = parse_records(ok(run(thaw_bin, "inspect", "--config", toml, "--metadata",
                               s3_table["table"].metadata_location, "--records", "--format", "json",
                               env=no_aws)).stdout, "thaw")
    assert_same_records(got, want)
