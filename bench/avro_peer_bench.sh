#!/usr/bin/env bash
# Thaw's Avro value codec (bench/avro_value_bench.cc: datums into Arrow
# builders and rows back to datums) against Apache Avro Java's
# GenericDatumReader / GenericDatumWriter (bench/AvroJavaPeer.java) on the
# same datums, in the same run, one after the other (never at once: 2 cores).
# Issue 23's target: Thaw >= 1.0x Java for decode and for encode.
#
#   bench/avro_peer_bench.sh [N [ROUNDS]]     (default 200000 5)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source bench/lib.sh
n="${1:-200000}" rounds="${2:-5}"
bin="${THAW_BENCH_BIN:-$root/build/bin}/avro_value_bench"
[[ -x "$bin" ]] || { echo "avro_peer_bench: $bin missing (make build)" >&2; exit 1; }
java="${JAVA:-$(command -v java)}"
busy=$(busy_sample)
thaw=$("$bin" "$n" "$rounds")
peer=$("$java" -cp '.deps/java/lib/*' bench/AvroJavaPeer.java "$n" "$rounds")
busy=$((busy | $(busy_sample)))
python3 - "$thaw" "$peer" "$busy" <<'PY'
import json, sys
t, j, busy = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3] == "1"
out = {"values": t["values"], "bytes": t["bytes"], "busy": busy,
       "thaw_decode_values_per_s": t["decode_values_per_s"], "java_decode_values_per_s": j["decode_values_per_s"],
       "decode_ratio": round(t["decode_values_per_s"] / j["decode_values_per_s"], 2),
       "thaw_encode_values_per_s": t["encode_values_per_s"], "java_encode_values_per_s": j["encode_values_per_s"],
       "encode_ratio": round(t["encode_values_per_s"] / j["encode_values_per_s"], 2)}
print(json.dumps(out))
PY
