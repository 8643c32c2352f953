#!/usr/bin/env bash
# Installs the fast S3-compatible peer of the object-store benchmark
# (bench/object_store_bench.sh): s3proxy 2.6.0 with jclouds' filesystem
# backend -- every jar of bench/s3proxy/pom.xml, copied from Maven Central into
# .deps/s3proxy/lib (stamp-checked: see copy-maven-jars.sh). Only the benchmark
# runs this (make bench), not make test (the tests use moto).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
exec "$here/copy-maven-jars.sh" s3proxy "$root/bench/s3proxy/pom.xml" "$root/.deps/s3proxy" \
  's3proxy-2.6.0.jar' 'jclouds-blobstore-*.jar' 'filesystem-*.jar'
