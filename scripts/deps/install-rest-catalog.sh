#!/usr/bin/env bash
# Installs Apache Iceberg's REST catalog server (RESTCatalogServer, from the
# iceberg-open-api test fixtures) for the tests against a real REST catalog:
# every jar of tests/rest-catalog/pom.xml (the server, iceberg-core's REST
# adapter, Jetty, sqlite-jdbc, iceberg-aws + AWS SDK v2, hadoop-common's
# minimal set), copied from Maven Central into .deps/rest-catalog/lib
# (stamp-checked: see copy-maven-jars.sh). tests/integration/lakehouse.py runs
# the server (see tests/integration/README.md to run it by hand).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
exec "$here/copy-maven-jars.sh" rest-catalog "$root/tests/rest-catalog/pom.xml" "$root/.deps/rest-catalog" \
  'iceberg-open-api-*-test-fixtures.jar' 'iceberg-core-*-tests.jar' 'iceberg-aws-*.jar' 'sqlite-jdbc-*.jar'
