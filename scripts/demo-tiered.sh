#!/usr/bin/env bash
# The demo's tiered step, the loop Thaw exists for: a local broker whose
# retention is tiny, `thaw archive --follow` landing its topic in the local
# warehouse, retention deleting the early segments (the broker's log start
# moves above 0), then `thaw serve --upstream` in front of the broker: kcat
# reads the topic from offset 0 (history from Iceberg, the rest from Kafka),
# a consumer group reads it all and, after more records are produced,
# resumes from the offsets it committed in the broker.
set -euo pipefail
thaw="$1"; wh="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$(mktemp -d)"; rmdir "$dir"
state="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  "$root/scripts/kafka.sh" stop "$dir" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT
# A port P with P..P+$1 all free (the bootstrap port, then broker N on P+1+N).
free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
n = int(sys.argv[1])
for _ in range(200):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); base = s.getsockname()[1]; s.close()
    if base + n > 65535:
        continue
    try:
        held = []
        for p in range(base, base + n + 1):
            t = socket.socket(); t.bind(("127.0.0.1", p)); held.append(t)
        for t in held: t.close()
        print(base); break
    except OSError:
        for t in held: t.close()
PY
}
wait_port() { for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
first_offsets() {  # the first offset each partition of `orders` holds at $1
  for p in 0 1 2; do
    printf 'partition %s starts at offset %s\n' "$p" \
      "$(timeout 20 kcat -b "$1" -C -t orders -p "$p" -o beginning -c 1 -e -q -f '%o' 2>/dev/null || echo '?')"
  done
}
produce() {  # $1 records per partition, values tagged $2
  for p in 0 1 2; do
    seq 1 "$1" | sed "s/^/$2-p$p-/" | kcat -b "$bootstrap" -P -t orders -p "$p" -z lz4
  done
}

# The broker checks retention every second and deletes at once.
bootstrap="$(THAW_KAFKA_EXTRA_CONFIG=$'log.retention.check.interval.ms=1000\nlog.segment.delete.delay.ms=0' \
  "$root/scripts/kafka.sh" start "$dir" | sed -n 's/^BOOTSTRAP=//p')"
"$root/scripts/kafka.sh" topics "$dir" --create --topic orders --partitions 3 --replication-factor 1 \
  --config retention.ms=20000 --config segment.ms=1000 >/dev/null
echo
echo "== a topic with 20 s retention on a local broker at $bootstrap, archived by thaw archive --follow =="
"$thaw" archive --brokers "$bootstrap" --topic orders --catalog "sqlite:///$wh/catalog.db" --table tiered.orders \
  --create --warehouse "$wh" --follow --commit-interval 1s --quiet &
pids+=($!)
for round in 1 2 3; do produce 100 "history$round"; sleep 1.2; done
echo "produced 900 records (3 x 100 per partition)"
echo "waiting for retention to delete the early segments (about 25 s) ..."
for _ in $(seq 60); do
  sleep 1
  produce 1 "tick"  # a record later than segment.ms rolls the active segment, so the old ones can go
  starts="$(first_offsets "$bootstrap")"
  if ! grep -q 'offset 0$' <<<"$starts" && ! grep -q '?' <<<"$starts"; then break; fi
done
echo "straight from the broker:"
first_offsets "$bootstrap"

port="$(free_ports 4)"; ports="$((port + 1))"
echo
echo "== thaw serve --upstream $bootstrap on 127.0.0.1:$port: one topic from two tiers =="
"$thaw" serve --upstream "$bootstrap" --catalog "sqlite:///$wh/catalog.db" --topic orders=tiered.orders \
  --listen "127.0.0.1:$port" --broker-ports "$ports-$((ports + 3))" --state "$state" --refresh 1s --log-level warn &
pids+=($!)
wait_port "$port"
echo "through Thaw:"
first_offsets "127.0.0.1:$port"
set -x
timeout 60 kcat -b "127.0.0.1:$port" -C -t orders -p 1 -o beginning -c 3 -e -q -f 'partition %p offset %o value %s\n'
timeout 60 kcat -b "127.0.0.1:$port" -G tiered-demo -o beginning -e -q -f '%p %o\n' orders | wc -l
{ set +x; } 2>/dev/null
produce 5 "live"
echo "5 live records per partition produced; the group resumes from the offsets it committed in the broker:"
set -x
timeout 60 kcat -b "127.0.0.1:$port" -G tiered-demo -e -q -f 'partition %p offset %o value %s\n' orders
{ set +x; } 2>/dev/null
