#!/usr/bin/env bash
# Unpacks Apache Kafka's protocol message specs (common/message/*.json) from
# the pinned kafka-clients jar on Maven Central into .deps/kafka-specs/. The
# build generates Thaw's Kafka wire codec from them (tools/kafka_codegen.py).
# Idempotent: a stamp of this script's hash is kept in .deps/stamps/kafka-specs;
# when it matches and the specs are there, nothing is done.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="4.1.2"
sha256="afe861c05067f4018a3148d73c1ed1e5fc90808757c15b043527d7e535a5d431"
jar_name="kafka-clients-$version.jar"
url="https://repo1.maven.org/maven2/org/apache/kafka/kafka-clients/$version/$jar_name"
out="$root/.deps/kafka-specs"
stamps="$root/.deps/stamps"

die() { echo "[deps] kafka-specs: FAILED: $*" >&2; exit 1; }

if stamp="$(sha256sum "$0" | cut -c1-16)" && [[ -f "$stamps/kafka-specs" && "$(cat "$stamps/kafka-specs")" == "$stamp" ]] \
    && [[ -f "$out/common/message/ApiVersionsRequest.json" ]]; then
  exit 0
fi

mkdir -p "$stamps" "$root/.deps"
# Maven's project-local repository may already hold the jar (install-kafka.sh).
jar="$root/.deps/m2/org/apache/kafka/kafka-clients/$version/$jar_name"
if [[ ! -f "$jar" ]] || [[ "$(sha256sum "$jar" | cut -d' ' -f1)" != "$sha256" ]]; then
  jar="$root/.deps/$jar_name"
  if [[ ! -f "$jar" ]] || [[ "$(sha256sum "$jar" | cut -d' ' -f1)" != "$sha256" ]]; then
    echo "[deps] kafka-specs: downloading $url"
    curl -fsSL --retry 3 -o "$jar.tmp" "$url" || die "could not download $url"
    got="$(sha256sum "$jar.tmp" | cut -d' ' -f1)"
    [[ "$got" == "$sha256" ]] || { rm -f "$jar.tmp"; die "$jar_name sha256 is $got, expected $sha256"; }
    mv "$jar.tmp" "$jar"
  fi
fi

rm -rf "$out.tmp"
python3 - "$jar" "$out.tmp" <<'PY'
import sys, zipfile
jar, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(jar) as z:
    names = [n for n in z.namelist() if n.startswith("common/message/") and n.endswith(".json")]
    if not names:
        sys.exit(f"no common/message/*.json in {jar}")
    for n in names:
        z.extract(n, dest)
PY
echo "kafka-clients $version" > "$out.tmp/VERSION"  # for thaw --version (cmake/build_info.cmake)
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$stamp" > "$stamps/kafka-specs"
echo "[deps] kafka-specs: unpacked $(ls "$out/common/message" | wc -l) message specs from $jar_name into $out"
