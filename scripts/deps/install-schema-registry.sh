#!/usr/bin/env bash
# Installs the Confluent-compatible schema registry the tests run against
# (issue 23; called by `scripts/deps/install.sh --test`): AxonOps Schema
# Registry v0.2.1 (github.com/axonops/axonops-schema-registry, Go, Apache-2.0,
# in-memory storage), built with the machine's Go from the Go module proxy into
# .deps/schema-registry/schema-registry. The proxy here serves pinned versions
# only, so `go install …@v0.2.1` fails (its deprecation look-up asks for
# @v/list); instead `go mod download -json MODULE@v0.2.1`, then
# `go build ./cmd/schema-registry` inside the downloaded module directory.
# GOPATH, GOCACHE and GOMODCACHE live under .deps/go so nothing goes to $HOME
# (about 460 MB; a cold build takes about 2 minutes). Idempotent: a stamp names
# the version built. tests/integration/schema_registry.py starts the binary.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
module="github.com/axonops/axonops-schema-registry"
version="v0.2.1"
dir="$root/.deps/schema-registry"
bin="$dir/schema-registry"
stamp="$root/.deps/stamps/schema-registry"
if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
  exit 0
fi
die() { echo "[deps] schema-registry: FAILED: $*" >&2; exit 1; }
command -v go >/dev/null \
  || die "building $module@$version needs Go (go1.26.0 or newer): install Go and re-run scripts/deps/install.sh --test"
mkdir -p "$dir" "$root/.deps/stamps" "$root/.deps/go"
export GOPATH="$root/.deps/go/path" GOMODCACHE="$root/.deps/go/path/pkg/mod" \
       GOCACHE="$root/.deps/go/cache" GOFLAGS=-mod=mod GOTOOLCHAIN=local
echo "[deps] schema-registry: downloading $module@$version"
src="$(go mod download -json "$module@$version" \
  | sed -n 's/^[[:space:]]*"Dir":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p')"
[[ -n "$src" && -d "$src/cmd/schema-registry" ]] || die "go mod download $module@$version gave no module directory"
echo "[deps] schema-registry: building ./cmd/schema-registry into $bin"
(cd "$src" && go build -trimpath -o "$bin.tmp" ./cmd/schema-registry) || die "go build ./cmd/schema-registry in $src"
mv "$bin.tmp" "$bin"
echo "$version" >"$stamp"
echo "[deps] schema-registry: $version ok"
