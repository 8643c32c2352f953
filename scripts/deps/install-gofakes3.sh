#!/usr/bin/env bash
# Installs the Go S3-compatible peer of the object-store benchmark
# (bench/object_store_bench.sh): gofakes3 v1.2.0 (github.com/johannesboyne/
# gofakes3, its cmd/gofakes3 server with the in-memory backend), built with the
# machine's Go from the Go module proxy into .deps/bin/gofakes3. A Go server
# that answers a range GET with one write of the object's bytes: the cheapest
# store per byte of the three the bench runs, so that on a 2-core machine the
# store takes as little CPU from thaw as a store can. Only the benchmark runs
# this (make bench), not make test (the tests use moto). Idempotent: a stamp
# names the version built.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
version="v1.2.0"
bin="$root/.deps/bin/gofakes3"
stamp="$root/.deps/stamps/gofakes3"
if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "[deps] gofakes3: the object-store benchmark needs Go (go1.21 or newer) to build gofakes3 $version;" \
       "install Go, or run the benchmark with OBJSTORE_BENCH_STORES=moto,s3proxy" >&2
  exit 1
fi
mkdir -p "$root/.deps/bin" "$root/.deps/stamps"
echo "[deps] gofakes3: building github.com/johannesboyne/gofakes3/cmd/gofakes3@$version into .deps/bin"
GOBIN="$root/.deps/bin" GOFLAGS=-mod=mod go install "github.com/johannesboyne/gofakes3/cmd/gofakes3@$version"
echo "$version" >"$stamp"
