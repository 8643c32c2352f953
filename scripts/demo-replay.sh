#!/usr/bin/env bash
# The demo's replay step: a throwaway local Kafka broker (KRaft, from the
# Maven Central jars), the demo table replayed into it as an exactly-once
# job, the job's checkpoint, and a few records read back with kcat.
set -euo pipefail
thaw="$1"; wh="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(mktemp -d)"
rmdir "$dir"
trap '"$root/scripts/kafka.sh" stop "$dir" >/dev/null 2>&1 || true' EXIT
bootstrap="$("$root/scripts/kafka.sh" start "$dir" | sed -n 's/^BOOTSTRAP=//p')"
echo
echo "== thaw replay into a local Kafka broker at $bootstrap =="
set -x
"$thaw" replay --catalog "sqlite:///$wh/catalog.db" --table demo.orders --brokers "$bootstrap" \
  --topic orders-restored --create-topic --job demo-restore --exactly-once --verify
"$thaw" replay --brokers "$bootstrap" --job demo-restore --status
kcat -b "$bootstrap" -C -t orders-restored -p 1 -o 10 -c 2 -e -q -X isolation.level=read_committed \
  -f 'partition %p offset %o key %k\n  headers %h\n  value %s\n'
{ set +x; } 2>/dev/null
