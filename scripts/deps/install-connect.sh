#!/usr/bin/env bash
# Installs the peer of the archive benchmark (bench/archive_bench.sh): Apache
# Iceberg's Kafka Connect sink with a standalone Connect worker, JdbcCatalog on
# SQLite and a minimal hadoop-common -- every jar of bench/connect/pom.xml,
# copied from Maven Central into .deps/connect/lib (stamp-checked: see
# copy-maven-jars.sh). Only the benchmark runs this (make bench), not make test.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
exec "$here/copy-maven-jars.sh" connect "$root/bench/connect/pom.xml" "$root/.deps/connect" \
  'iceberg-kafka-connect-1*.jar' 'connect-runtime-*.jar' 'sqlite-jdbc-*.jar' 'hadoop-common-*.jar'
