#!/usr/bin/env python3
"""Writes the seed corpus for avro_value_fuzz into fuzz/corpus/avro_value/.

  make_avro_value_corpus.py [OUT_DIR]   (default: corpus/avro_value next to this file)

A seed is an Avro schema JSON, a NUL byte, then a datum; an empty schema
means the all-types schema of tests/unit/records/resources. Seeds: the datums
Apache Avro's Java implementation wrote for that schema (avro_value_java.hex,
see tests/unit/records/AvroVectors.java), one of them Confluent-framed, and a
few small schemas (a complex union, blocks with byte sizes, decimals) with
hand-built datums. Total size stays under 2 KB.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESOURCES = os.path.join(HERE, "..", "tests", "unit", "records", "resources")

SMALL = [
    ('{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"string"}]}',
     "0206666f6f"),
    ('{"type":"record","name":"R","fields":[{"name":"u","type":["null","string","long",'
     '{"type":"record","name":"S","fields":[{"name":"x","type":["null","int"]}]}]}]}',
     "06" "0202"),
    ('{"type":"record","name":"R","fields":[{"name":"xs","type":{"type":"array","items":"int"}},'
     '{"name":"m","type":{"type":"map","values":["null","double"]}}]}',
     "03" "04" "0204" "02" "06" "00" "02" "0261" "00" "00"),
    ('{"type":"record","name":"R","fields":[{"name":"d","type":{"type":"bytes","logicalType":"decimal",'
     '"precision":9,"scale":2}},{"name":"f","type":{"type":"fixed","name":"F","size":3,"logicalType":"decimal",'
     '"precision":6,"scale":0}},{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}}]}',
     "04ff7f" "000080" "02"),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus", "avro_value")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(RESOURCES, "avro_value_java.hex")) as f:
        java = [bytes.fromhex(line.strip()) for line in f if line.strip()]
    for i, datum in enumerate(java[:2]):
        with open(os.path.join(out, f"java_{i}.bin"), "wb") as f:
            f.write(b"\0" + datum)
    with open(os.path.join(out, "java_framed.bin"), "wb") as f:
        f.write(b"\0" + b"\0\0\0\0\x07" + java[2])
    for i, (schema, hex_datum) in enumerate(SMALL):
        with open(os.path.join(out, f"small_{i}.bin"), "wb") as f:
            f.write(schema.encode() + b"\0" + bytes.fromhex(hex_datum))
    return 0


if __name__ == "__main__":
    sys.exit(main())
