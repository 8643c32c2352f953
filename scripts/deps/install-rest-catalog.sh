#!/usr/bin/env bash
# Installs Apache Iceberg's REST catalog server (RESTCatalogServer, from the
# iceberg-open-api test fixtures) for the tests against a real REST catalog:
# every jar of tests/rest-catalog/pom.xml (the server, iceberg-core's REST
# adapter, Jetty, sqlite-jdbc, iceberg-aws + AWS SDK v2, hadoop-common's
# minimal set), copied from Maven Central into .deps/rest-catalog/lib. Pinned
# versions live in the pom; Maven's local repository is project-local
# (.deps/m2). Idempotent: a stamp of the pom's hash is kept in
# .deps/stamps/rest-catalog; when it matches and the jars are there, nothing is
# done. Prints one line saying what it did. tests/integration/lakehouse.py runs
# the server (see tests/integration/README.md to run it by hand).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
pom="$root/tests/rest-catalog/pom.xml"
out="$root/.deps/rest-catalog"
stamps="$root/.deps/stamps"

die() { echo "[deps] rest-catalog: FAILED: $*" >&2; exit 1; }

[[ -f "$pom" ]] || die "missing $pom"
source "$here/require-jdk.sh"

want="$(sha256sum "$pom" | cut -c1-16)"
have_jars() {
  compgen -G "$out/lib/iceberg-open-api-*-test-fixtures.jar" >/dev/null \
    && compgen -G "$out/lib/iceberg-core-*-tests.jar" >/dev/null \
    && compgen -G "$out/lib/iceberg-aws-*.jar" >/dev/null \
    && compgen -G "$out/lib/sqlite-jdbc-*.jar" >/dev/null
}
if [[ -f "$stamps/rest-catalog" && "$(cat "$stamps/rest-catalog")" == "$want" ]] && have_jars; then
  echo "[deps] rest-catalog: up to date ($out/lib)"
  exit 0
fi

mkdir -p "$out" "$stamps"
rm -f "$stamps/rest-catalog"
rm -rf "$out/lib" "$out/lib.tmp"
log="$out/mvn.log"
start=$SECONDS
if ! mvn -q -B -Dmaven.repo.local="$root/.deps/m2" -f "$pom" \
      dependency:copy-dependencies -DoutputDirectory="$out/lib.tmp" \
      -DincludeScope=runtime >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  die "maven dependency copy failed (full log: $log)"
fi
mv "$out/lib.tmp" "$out/lib"
have_jars || die "maven did not copy the REST catalog jars into $out/lib (log: $log)"
ver="$(ls "$out/lib" | sed -n 's/^iceberg-open-api-\(.*\)-test-fixtures\.jar$/\1/p' | head -n1)"
echo "$want" > "$stamps/rest-catalog"
echo "[deps] rest-catalog: installed Iceberg ${ver:-?} RESTCatalogServer ($(ls "$out/lib" | wc -l) jars in $out/lib, $((SECONDS - start)) s)"
