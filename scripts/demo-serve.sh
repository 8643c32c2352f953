#!/usr/bin/env bash
# The demo's serve step: `thaw serve` exposes the demo table as the Kafka
# topic `orders` on a loopback port; kcat lists it, reads partition 1 from
# the start, and a consumer group reads every partition to the end.
set -euo pipefail
thaw="$1"; wh="$2"
state="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$thaw" serve --catalog "sqlite:///$wh/catalog.db" --topic orders=demo.orders --listen "127.0.0.1:$port" \
  --state "$state" --group-initial-rebalance-delay 0s --log-level warn &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$state"' EXIT
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
echo
echo "== thaw serve: the demo table as topic 'orders' on 127.0.0.1:$port =="
set -x
kcat -b "127.0.0.1:$port" -L -t orders
kcat -b "127.0.0.1:$port" -C -t orders -p 1 -o beginning -c 3 -e -q \
  -f 'partition %p offset %o key %k timestamp %T\n  headers %h\n  value %s\n'
kcat -b "127.0.0.1:$port" -G demo-group -o beginning -e -q -f '%p %o\n' orders | wc -l
{ set +x; } 2>/dev/null
echo "(thaw serve kept the group's committed offsets in --state DIR/groups.sqlite; a restart resumes from them)"
