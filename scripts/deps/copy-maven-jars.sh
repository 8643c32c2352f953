#!/usr/bin/env bash
# copy-maven-jars.sh NAME POM OUT GLOB...
# Copies every runtime jar of POM from Maven Central into OUT/lib (pinned
# versions live in the pom; Maven's local repository is project-local,
# .deps/m2). Idempotent: a stamp of the pom's hash is kept in .deps/stamps/NAME;
# when it matches and a jar matches every GLOB, nothing is done. Prints one
# line saying what it did. Used by install-kafka.sh, install-rest-catalog.sh, install-connect.sh and
# install-s3proxy.sh.
set -euo pipefail
name="$1" pom="$2" out="$3"
shift 3
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
stamps="$root/.deps/stamps"

die() { echo "[deps] $name: FAILED: $*" >&2; exit 1; }

[[ -f "$pom" ]] || die "missing $pom"
source "$here/require-jdk.sh"

want="$(sha256sum "$pom" | cut -c1-16)"
have_jars() {
  local g
  for g in "$@"; do compgen -G "$out/lib/$g" >/dev/null || return 1; done
}
if [[ -f "$stamps/$name" && "$(cat "$stamps/$name")" == "$want" ]] && have_jars "$@"; then
  echo "[deps] $name: up to date ($out/lib)"
  exit 0
fi

mkdir -p "$out" "$stamps"
rm -f "$stamps/$name"
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
have_jars "$@" || die "maven did not copy the expected jars ($*) into $out/lib (log: $log)"
echo "$want" > "$stamps/$name"
echo "[deps] $name: installed $(ls "$out/lib" | wc -l) jars from $(basename "$(dirname "$pom")")/pom.xml in $out/lib ($((SECONDS - start)) s)"
