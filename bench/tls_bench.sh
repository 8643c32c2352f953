#!/usr/bin/env bash
# TLS cost on the serve path (issue 22): the same librdkafka consumer
# (bench/consume_bench.cc, `read`: every partition from its start to its end)
# reads the same table, 2,000,000 x 1 KiB in 16 partitions (bench.records of
# bench/make_bench_tables.py; TLS_BENCH_RECORDS for another size), from one
# `thaw serve` process with its cache warm, alternately over plaintext and over
# TLS (--tls-cert/--tls-key, certificates made with the openssl CLI; TLS 1.3,
# the consumer verifying with ssl.ca.location). Reports MB/s (median of
# TLS_BENCH_RUNS runs each, default 3), the TLS/plaintext ratio (target >=
# 0.85x) and serve's CPU seconds per GB for each.
#
#   bench/tls_bench.sh            (also run by scripts/bench.sh)
#
# Fairness: one serve process per protocol (the same binary, --cache-size large
# enough for the whole table), each read once before the measured runs (its
# cache warm), then the runs interleaved. CPU = utime + stime of the serve
# process around each run, per GB the consumer counted. Every figure says
# whether other work was seen on the machine ("quiet" / "busy").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
py="$root/.deps/venv/bin/python"
bin="$root/build/bin"
n="${TLS_BENCH_RECORDS:-2000000}"
runs="${TLS_BENCH_RUNS:-3}"
tick="$(getconf CLK_TCK)"

ninja -C "$root/build" -j2 thaw consume_bench >/dev/null
tmp="$(mktemp -d "${TMPDIR:-/tmp}/thaw-tls-bench.XXXXXX")"
cp "$bin/thaw" "$tmp/thaw"
thaw="$tmp/thaw"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "[tls-bench] preparing the table (cached in bench/.work)"
if [[ "$n" == 2000000 ]]; then
  uri="$("$py" "$root/bench/make_bench_tables.py" "$root/bench/.work/wh" | tail -1)"
else
  uri="$(BENCH_RECORDS="$n" BENCH_SMALL_RECORDS=16 BENCH_FILES=1 "$py" "$root/bench/make_bench_tables.py" \
    "$root/bench/.work/wh-serve-$n" | tail -1)"
fi

echo "[tls-bench] certificates (openssl)"
(
  cd "$tmp"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=tls-bench-ca 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=tls-bench 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\n' >server.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
    -extfile server.ext 2>/dev/null
)

free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Other work on the machine: a test run, a compiler, a build.
port_plain="$(free_port)"
port_tls="$(free_port)"
start_serve() { # PORT EXTRA...
  local port="$1"; shift
  "$thaw" serve --catalog "$uri" --topic records=bench.records --listen "127.0.0.1:$port" \
    --state "$tmp/state-$port" --cache-size 4GiB "$@" 2>"$tmp/serve-$port.log" &
  pids+=($!)
  for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "[tls-bench] thaw serve on $port did not start: $(tail -5 "$tmp/serve-$port.log")" >&2
  exit 1
}
start_serve "$port_plain"
pid_plain="${pids[-1]}"
start_serve "$port_tls" --tls-cert "$tmp/server.pem" --tls-key "$tmp/server.key"
pid_tls="${pids[-1]}"
tls_x=(-X security.protocol=ssl -X "ssl.ca.location=$tmp/ca.pem")

# read LABEL PID PORT [-X ...]: one read; appends a JSON line to $tmp/results.
read_once() {
  local label="$1" pid="$2" port="$3"; shift 3
  local c0 c1 out b0 b1
  b0="$(busy_sample)"
  c0="$(cpu_ticks "$pid")"
  out="$("$bin/consume_bench" --brokers "127.0.0.1:$port" --topic records read "$@")"
  c1="$(cpu_ticks "$pid")"
  b1="$(busy_sample)"
  "$py" -c 'import json,sys; j=json.loads(sys.argv[1]); j.update(label=sys.argv[2], cpu_s=(int(sys.argv[4])-int(sys.argv[3]))/int(sys.argv[5]), busy=sys.argv[6]!="0" or sys.argv[7]!="0"); print(json.dumps(j))' \
    "$out" "$label" "$c0" "$c1" "$tick" "$b0" "$b1" >>"$tmp/results"
}
echo "[tls-bench] warming both caches"
"$bin/consume_bench" --brokers "127.0.0.1:$port_plain" --topic records read >/dev/null
"$bin/consume_bench" --brokers "127.0.0.1:$port_tls" --topic records read "${tls_x[@]}" >/dev/null
for i in $(seq 1 "$runs"); do
  echo "[tls-bench] run $i/$runs"
  read_once plaintext "$pid_plain" "$port_plain"
  read_once tls "$pid_tls" "$port_tls" "${tls_x[@]}"
done
mkdir -p "$root/bench/.work"
cp "$tmp/results" "$root/bench/.work/tls_bench.results"
"$py" - "$tmp/results" "$n" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(label, key):
    return statistics.median(r[key] for r in rows if r["label"] == label)
def cpu_gb(label):
    rs = [r for r in rows if r["label"] == label]
    return statistics.median(r["cpu_s"] / (r["bytes"] / 1e9) for r in rs)
p, t = med("plaintext", "mb_s"), med("tls", "mb_s")
busy = any(r["busy"] for r in rows)
print(f"TLS on the serve path: {int(sys.argv[2]):,} records x 1 KiB, 16 partitions, cache warm; MB = 10^6 bytes")
def runs(label):
    return " ".join("%.1f" % r["mb_s"] for r in rows if r["label"] == label)
print(f"  plaintext MB/s {p:8.1f}   runs {runs('plaintext')}")
print(f"  TLS       MB/s {t:8.1f}   runs {runs('tls')}")
print(f"  TLS / plaintext {t / p:.2f}x   target >= 0.85x {'yes' if t / p >= 0.85 else 'NO'}")
print(f"  serve CPU s/GB: plaintext {cpu_gb('plaintext'):.2f}, TLS {cpu_gb('tls'):.2f}")
errors = sum(r.get("errors", 0) for r in rows)
print(f"  consumer errors {errors}; records per read {rows[0]['records']:,}; machine {'busy' if busy else 'quiet'}")
PY
