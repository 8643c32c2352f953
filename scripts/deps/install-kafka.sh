#!/usr/bin/env bash
# Installs a real Apache Kafka broker (KRaft) and its command-line tools for
# the tests and benchmarks: every jar of tests/kafka/pom.xml (kafka_2.13,
# kafka-tools, log4j2 binding), copied from Maven Central into
# .deps/kafka/lib. Pinned versions live in the pom; Maven's local repository is
# project-local (.deps/m2). Idempotent: a stamp of the pom's hash is kept in
# .deps/stamps/kafka; when it matches and the jars are there, nothing is done.
# Prints one line saying what it did. Run the broker with scripts/kafka.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
pom="$root/tests/kafka/pom.xml"
out="$root/.deps/kafka"
stamps="$root/.deps/stamps"

die() { echo "[deps] kafka: FAILED: $*" >&2; exit 1; }

[[ -f "$pom" ]] || die "missing $pom"
source "$here/require-jdk.sh"

want="$(sha256sum "$pom" | cut -c1-16)"
have_jars() {
  compgen -G "$out/lib/kafka_2.13-*.jar" >/dev/null \
    && compgen -G "$out/lib/kafka-tools-[0-9]*.jar" >/dev/null \
    && compgen -G "$out/lib/log4j-core-*.jar" >/dev/null
}
if [[ -f "$stamps/kafka" && "$(cat "$stamps/kafka")" == "$want" ]] && have_jars; then
  echo "[deps] kafka: up to date ($out/lib)"
  exit 0
fi

mkdir -p "$out" "$stamps"
rm -f "$stamps/kafka"
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
have_jars || die "maven did not copy the kafka jars into $out/lib (log: $log)"
ver="$(ls "$out/lib" | sed -n 's/^kafka_2\.13-\(.*\)\.jar$/\1/p' | head -n1)"
echo "$want" > "$stamps/kafka"
echo "[deps] kafka: installed Apache Kafka ${ver:-?} ($(ls "$out/lib" | wc -l) jars in $out/lib, $((SECONDS - start)) s)"
