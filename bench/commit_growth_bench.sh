#!/usr/bin/env bash
# Metadata growth under `thaw archive --follow` (issue 20): a 64-partition
# topic archived at a short commit interval while a producer keeps every
# partition busy, COMMIT_BENCH_COMMITS commits in all. Reports the commit
# latency (manifests + catalog, from archive's per-commit debug line) at
# commit 100 and at the last (p50/p99 of the 50 commits around each), the
# manifests per snapshot and the size of metadata.json, and with
# write.metadata.delete-after-commit the metadata files kept. The peer is the
# same run's commit 100 (targets: p99 at the end <= 2x p99 at commit 100;
# metadata.json <= 16 MiB with expiry of snapshots older than 1 day).
#
#   bench/commit_growth_bench.sh      COMMIT_BENCH_COMMITS (default 2000), COMMIT_BENCH_INTERVAL (default 100ms, the shortest archive takes)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
py="$root/.deps/venv/bin/python"
thaw="$root/build/bin/thaw"
ninja -C "$root/build" -j2 thaw >/dev/null
kdir="$root/bench/.work/kafka-commit-$$"
work="$root/bench/.work/commit-$$"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/thaw-commit-bench.XXXXXX")"
cleanup() {
  if [[ -f "$kdir/.thaw-kafka" ]]; then "$root/scripts/kafka.sh" stop "$kdir" >/dev/null || true; fi
  rm -rf "$tmp" "$work"
}
trap cleanup EXIT
bench_start_broker commit-bench "$kdir" "$tmp/start.out" || exit 1
bootstrap="$(sed -n 's/^BOOTSTRAP=//p' "$tmp/start.out")"
"$py" "$root/bench/commit_growth_bench.py" --thaw "$thaw" --bootstrap "$bootstrap" --work "$work" \
  --commits "${COMMIT_BENCH_COMMITS:-2000}" --interval "${COMMIT_BENCH_INTERVAL:-100ms}"
