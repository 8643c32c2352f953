#!/usr/bin/env bash
# Builds the Java test peers: Apache Iceberg Java fixture writer + read oracle
# (tests/fixtures/java) into .deps/java/fixtures.jar, with every runtime
# dependency in .deps/java/lib/. Pinned versions live in the pom; Maven's local
# repository is project-local (.deps/m2). Idempotent: a stamp of the hash of the
# pom and sources is kept in .deps/stamps/java; when it matches and the jars are
# there, nothing is done. Prints one line saying what it did.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
proj="$root/tests/fixtures/java"
out="$root/.deps/java"
stamps="$root/.deps/stamps"

die() { echo "[deps] java fixtures: FAILED: $*" >&2; exit 1; }

[[ -f "$proj/pom.xml" ]] || die "missing $proj/pom.xml"
source "$here/require-jdk.sh"

hash_inputs() {
  (cd "$proj" && { echo pom.xml; find src -type f | LC_ALL=C sort; } \
    | while read -r f; do echo "== $f"; cat "$f"; done) | sha256sum | cut -c1-16
}
want="$(hash_inputs)"
if [[ -f "$stamps/java" && "$(cat "$stamps/java")" == "$want" \
      && -f "$out/fixtures.jar" && -d "$out/lib" ]] \
   && compgen -G "$out/lib/iceberg-core-*.jar" >/dev/null; then
  echo "[deps] java fixtures: up to date ($out/fixtures.jar)"
  exit 0
fi

mkdir -p "$out" "$stamps"
rm -rf "$out/lib" "$out/build"
log="$out/mvn.log"
start=$SECONDS
if ! mvn -q -B -Dmaven.repo.local="$root/.deps/m2" -Dthaw.build.dir="$out/build" \
      -f "$proj/pom.xml" package dependency:copy-dependencies \
      -DoutputDirectory="$out/lib" -DincludeScope=runtime >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  die "maven build failed (full log: $log)"
fi
jar="$out/build/thaw-fixtures.jar"
[[ -f "$jar" ]] || die "maven did not produce $jar"
cp "$jar" "$out/fixtures.jar.tmp" && mv "$out/fixtures.jar.tmp" "$out/fixtures.jar"
echo "$want" > "$stamps/java"
echo "[deps] java fixtures: built $out/fixtures.jar + $(ls "$out/lib" | wc -l) jars in lib/ ($((SECONDS - start)) s)"
