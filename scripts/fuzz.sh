#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for N seconds
# (default 30) from its seed corpus. Any crash fails the run.
set -euo pipefail
secs="${1:-30}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# ccache (when present) keyed on paths relative to the checkout, as in the Makefile.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DTHAW_FUZZ=ON -DTHAW_BUILD_ARROW_PARTS=OFF "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
ninja -C build-fuzz -j2 >/dev/null
for bin in build-fuzz/bin/*_fuzz; do
  name="$(basename "$bin" _fuzz)"
  corpus="fuzz/corpus/$name"
  work="build-fuzz/corpus-$name"
  mkdir -p "$work"
  [[ -d "$corpus" ]] && cp -n "$corpus"/* "$work"/ 2>/dev/null || true
  echo "[fuzz] $name for ${secs}s"
  "$bin" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 "$work" 2> "build-fuzz/$name.log" || {
    tail -40 "build-fuzz/$name.log"; echo "[fuzz] $name FAILED"; exit 1; }
  grep -E "^#[0-9]+.*DONE" "build-fuzz/$name.log" | tail -1 || true
done
