#!/usr/bin/env bash
# Seeds for record_batch_fuzz: small record batches in every codec, written
# by thaw_batch_tool (tests/tools/batch_tool.cc).
#   fuzz/make_record_batch_corpus.sh [build/bin/thaw_batch_tool]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tool="${1:-$root/build/bin/thaw_batch_tool}"
out="$root/fuzz/corpus/record_batch"
mkdir -p "$out"
records='{"offset":5,"timestamp":1700000000000,"key":"a2V5","value":"dmFsdWUgdmFsdWUgdmFsdWU=","headers":[["h","MQ=="],["h",null]]}
{"offset":6,"timestamp":1699999999000,"key":null,"value":"","headers":[]}
{"offset":9,"timestamp":1700000000500,"key":"","value":null,"headers":[["",""]]}
{"offset":10,"timestamp":1700000000500,"key":"AAEC/w==","value":"dmFsdWUgdmFsdWUgdmFsdWUgdmFsdWUgdmFsdWUgdmFsdWU=","headers":[]}'
for codec in none gzip snappy lz4 zstd; do
  "$tool" encode --compression "$codec" "$out/$codec" <<<"$records"
  # Two batches back to back.
  "$tool" encode --compression "$codec" --batch-records 2 "$out/$codec-two" <<<"$records"
done
lat='{"offset":0,"timestamp":1700000000000,"timestamp_type":"log_append","key":"aw==","value":"dg==","headers":[]}
{"offset":1,"timestamp":1700000000000,"timestamp_type":"log_append","key":"aw==","value":"dg==","headers":[]}'
"$tool" encode --compression lz4 "$out/log-append-time" <<<"$lat"
# The snappy batch re-framed the way Java writes snappy (xerial snappy-java:
# magic, versions, then big-endian length + raw block), CRC recomputed.
python3 - "$out/snappy" "$out/snappy-xerial" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
raw = b[61:]
section = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + struct.pack(">i", len(raw)) + raw
def crc32c(data):
    c = 0xFFFFFFFF
    for x in data:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c ^ 0xFFFFFFFF
head = bytearray(b[:61])
head[8:12] = struct.pack(">i", 61 - 12 + len(section))
body = bytes(head) + section
out = body[:17] + struct.pack(">I", crc32c(body[21:])) + body[21:]
open(sys.argv[2], "wb").write(out)
PY
ls -l "$out"
