#!/usr/bin/env bash
# The reference for bench/tls_bench.sh (issue 22): what TLS costs the same
# librdkafka consumer (bench/consume_bench.cc, `read`) against a real Kafka
# broker. One single-node Kafka (scripts/kafka.sh, with an SSL listener beside
# the plaintext one: THAW_KAFKA_SSL_KEYSTORE, certificates from the openssl
# CLI), a topic of TLS_PEER_RECORDS (default 1,000,000) x 1 KiB records in 16
# partitions written by Kafka's ProducerPerformance, read once over each
# listener to warm the page cache, then TLS_PEER_RUNS (default 3) interleaved
# reads over each. Reports MB/s, the TLS/plaintext ratio and the broker's CPU
# seconds per GB, as tls_bench.sh does for thaw serve.
#
#   bench/tls_peer_bench.sh            (also run by scripts/bench.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
py="$root/.deps/venv/bin/python"
bin="$root/build/bin"
n="${TLS_PEER_RECORDS:-1000000}"
runs="${TLS_PEER_RUNS:-3}"
tick="$(getconf CLK_TCK)"

ninja -C "$root/build" -j2 consume_bench >/dev/null
tmp="$(mktemp -d "${TMPDIR:-/tmp}/thaw-tls-peer.XXXXXX")"
cleanup() {
  "$root/scripts/kafka.sh" stop "$tmp/kafka" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "[tls-peer] certificates (openssl)"
(
  cd "$tmp"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=tls-peer-ca 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=tls-peer 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >server.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
    -extfile server.ext 2>/dev/null
  openssl pkcs8 -topk8 -nocrypt -in server.key -out server.p8 2>/dev/null
  cat server.p8 server.pem >keystore.pem
)

echo "[tls-peer] starting Kafka with an SSL listener"
export THAW_KAFKA_SSL_KEYSTORE="$tmp/keystore.pem"
bench_start_broker tls-peer "$tmp/kafka" "$tmp/kafka.out"
plain="$(sed -n 's/^BOOTSTRAP=//p' "$tmp/kafka.out")"
ssl="$(sed -n 's/^SSL_BOOTSTRAP=//p' "$tmp/kafka.out")"
pid="$(sed -n 's/^KAFKA_PID=//p' "$tmp/kafka.out")"
[[ -n "$plain" && -n "$ssl" && -n "$pid" ]] || { echo "[tls-peer] no SSL listener: $(cat "$tmp/kafka.out")" >&2; exit 1; }

echo "[tls-peer] writing $n records x 1 KiB into 16 partitions"
"$root/scripts/kafka.sh" topics "$tmp/kafka" --create --topic records --partitions 16 --replication-factor 1 >/dev/null
"$root/scripts/kafka.sh" perf "$tmp/kafka" --topic records --num-records "$n" --record-size 1024 --throughput -1 \
  --producer-props acks=1 linger.ms=20 batch.size=262144 >"$tmp/perf.out"

tls_x=(-X security.protocol=ssl -X "ssl.ca.location=$tmp/ca.pem")
read_once() { # LABEL BOOTSTRAP [-X ...]
  local label="$1" boot="$2"; shift 2
  local c0 c1 out b0 b1
  b0="$(busy_sample)"
  c0="$(cpu_ticks "$pid")"
  out="$("$bin/consume_bench" --brokers "$boot" --topic records read "$@")"
  c1="$(cpu_ticks "$pid")"
  b1="$(busy_sample)"
  "$py" -c 'import json,sys; j=json.loads(sys.argv[1]); j.update(label=sys.argv[2], cpu_s=(int(sys.argv[4])-int(sys.argv[3]))/int(sys.argv[5]), busy=sys.argv[6]!="0" or sys.argv[7]!="0"); print(json.dumps(j))' \
    "$out" "$label" "$c0" "$c1" "$tick" "$b0" "$b1" >>"$tmp/results"
}
echo "[tls-peer] warming the page cache"
"$bin/consume_bench" --brokers "$plain" --topic records read >/dev/null
"$bin/consume_bench" --brokers "$ssl" --topic records read "${tls_x[@]}" >/dev/null
for i in $(seq 1 "$runs"); do
  echo "[tls-peer] run $i/$runs"
  read_once plaintext "$plain"
  read_once tls "$ssl" "${tls_x[@]}"
done
mkdir -p "$root/bench/.work"
cp "$tmp/results" "$root/bench/.work/tls_peer_bench.results"
"$py" - "$tmp/results" "$n" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(label, key):
    return statistics.median(r[key] for r in rows if r["label"] == label)
def cpu_gb(label):
    return statistics.median(r["cpu_s"] / (r["bytes"] / 1e9) for r in rows if r["label"] == label)
def runs(label):
    return " ".join("%.1f" % r["mb_s"] for r in rows if r["label"] == label)
p, t = med("plaintext", "mb_s"), med("tls", "mb_s")
print(f"TLS on a Kafka broker (the reference): {int(sys.argv[2]):,} records x 1 KiB, 16 partitions, page cache warm; MB = 10^6 bytes")
print(f"  plaintext MB/s {p:8.1f}   runs {runs('plaintext')}")
print(f"  TLS       MB/s {t:8.1f}   runs {runs('tls')}")
print(f"  TLS / plaintext {t / p:.2f}x")
print(f"  broker CPU s/GB: plaintext {cpu_gb('plaintext'):.2f}, TLS {cpu_gb('tls'):.2f}")
errors = sum(r.get("errors", 0) for r in rows)
print(f"  consumer errors {errors}; records per read {rows[0]['records']:,}; machine {'busy' if any(r['busy'] for r in rows) else 'quiet'}")
PY
