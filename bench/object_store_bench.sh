#!/usr/bin/env bash
# Object-store benchmark (issue 9): the same table read from local files and
# from three S3-compatible stores on loopback -- gofakes3 v1.2.0 (Go, in
# memory; scripts/deps/install-gofakes3.sh), s3proxy 2.6.0 (Java, jclouds
# filesystem backend; scripts/deps/install-s3proxy.sh), both installed for the
# benchmark only, and moto's server (the test suite's store, one Python
# process) -- with 20 ms of latency injected into every request by
# bench/latency_relay.py, in the same run:
#   * thaw replay into a fresh topic of a local single-node broker, and
#   * a full read: thaw inspect --records (every record decoded, one short line
#     printed per record),
# each from seven sources, interleaved run by run: local, and for each store:
# the store directly (its own ceiling), behind the relay with no added latency
# (the relay's cost), and behind the relay with 20 ms per request (the target
# case: >= 0.8x local; the ratios are printed). The relay's per-path counts
# give the HTTP requests made for each data file (target: the footer and the
# column chunks, nothing more); CPU seconds of thaw, the store and the relay
# are printed per row. Each placement is a run of its own: "shared" (every
# process on both cores) and "split" (thaw on CPU 0, stores and relay on CPU 1:
# a remote store, simulated). Details in bench/object_store_bench.py.
# Issue 19 adds peers from the same sources in the same runs: pyarrow.dataset
# over pyarrow.fs.S3FileSystem scanning the same data files, DuckDB's
# iceberg_scan over its httpfs extension (both against thaw's full read:
# >= 1.0x), `thaw serve` cold from the store against cold from local files
# (>= 0.8x), and what the 20 ms cost against the same relay without them
# (<= 10 %).
#
#   bench/object_store_bench.sh          (also run by scripts/bench.sh)
#
# Environment:
#   OBJSTORE_BENCH_RECORDS   records x 1 KiB in the table (default 300000:
#                            ~310 MB of Parquet in 4 data files); the local and
#                            s3proxy copies are cached in bench/.work/objstore,
#                            the moto copy is written into a new moto every run
#                            (in memory)
#   OBJSTORE_BENCH_RUNS      interleaved runs; medians are reported (default 3)
#   OBJSTORE_BENCH_LATENCY   injected latency per request, ms (default 20)
#   OBJSTORE_BENCH_STORES    stores measured (default gofakes3,s3proxy,moto)
#   OBJSTORE_BENCH_PLACEMENTS  placements run, in order (default "shared split")
#   OBJSTORE_BENCH_OPS       operations (default replay,read,pyarrow,duckdb,serve): replay and
#                            read are thaw's; pyarrow and duckdb the read's peers (issue 19:
#                            pyarrow.dataset over S3FileSystem, DuckDB iceberg_scan over
#                            httpfs; bench/objstore_peers.py); serve = `thaw serve` cold, read
#                            once by build/bin/consume_bench (else the confluent-kafka
#                            consumer). The broker is started only for replay.
#   OBJSTORE_BENCH_BUILD     1 (default): ninja builds thaw (and consume_bench for serve)
#                            first; 0: use build/bin as it is
#   OBJSTORE_BENCH_VALUES    value kinds, each a table of its own (default
#                            "random json": incompressible 1 KiB bytes, and
#                            ~0.9 KiB JSON order events that zstd shrinks ~6x)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
py="$root/.deps/venv/bin/python"
thaw="$root/build/bin/thaw"
work="$root/bench/.work/objstore"

ops="${OBJSTORE_BENCH_OPS:-replay,read,pyarrow,duckdb,serve}"
if [[ "${OBJSTORE_BENCH_BUILD:-1}" != 0 ]]; then
  if [[ ",$ops," == *,serve,* ]]; then
    # consume_bench is the serve op's consumer; without it the bench falls back to confluent-kafka.
    ninja -C "$root/build" -j2 thaw >/dev/null
    ninja -C "$root/build" -j2 consume_bench >/dev/null || echo "[objstore-bench] consume_bench not built" >&2
  else
    ninja -C "$root/build" -j2 thaw >/dev/null
  fi
fi
stores="${OBJSTORE_BENCH_STORES:-gofakes3,s3proxy,moto}"
if [[ ",$stores," == *,s3proxy,* ]]; then "$root/scripts/deps/install-s3proxy.sh"; fi
if [[ ",$stores," == *,gofakes3,* ]]; then "$root/scripts/deps/install-gofakes3.sh"; fi
mkdir -p "$work"
kdir="$root/bench/.work/kafka-objstore-$$"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/thaw-objstore-bench.XXXXXX")"
cleanup() {
  if [[ -f "$kdir/.thaw-kafka" ]]; then "$root/scripts/kafka.sh" stop "$kdir" || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
load_before="$(cut -d' ' -f1 /proc/loadavg)"
broker=()
if [[ ",$ops," == *,replay,* ]]; then
  echo "[objstore-bench] starting a broker in $kdir"
  bench_start_broker objstore-bench "$kdir" "$tmp/start.out" "log.segment.delete.delay.ms=1000" || exit 1
  broker=(--bootstrap "$(sed -n 's/^BOOTSTRAP=//p' "$tmp/start.out")")
fi

for values in ${OBJSTORE_BENCH_VALUES:-random json}; do
  for placement in ${OBJSTORE_BENCH_PLACEMENTS:-shared split}; do
    "$py" "$root/bench/object_store_bench.py" --thaw "$thaw" "${broker[@]}" --work "$work" \
      --records "${OBJSTORE_BENCH_RECORDS:-300000}" --runs "${OBJSTORE_BENCH_RUNS:-3}" \
      --latency-ms "${OBJSTORE_BENCH_LATENCY:-20}" --stores "$stores" --placement "$placement" \
      --values "$values" --ops "$ops" | grep -v '^RESULT '
  done
done
echo "  load average ${load_before} before, $(cut -d' ' -f1 /proc/loadavg) after (the machine is not isolated)"
