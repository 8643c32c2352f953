#!/usr/bin/env python3
"""Independent deletion-vector oracle for deletion_vector_test.cc.

Uses pyroaring's BitMap64 (CRoaring's 64-bit portable serialization) and, for
Puffin files, pyiceberg's reader. Exits 77 when a needed module is missing so
the C++ test can GTEST_SKIP.

  make_dv_fixture.py write BLOB_OUT POSITIONS_OUT
      Serialize a fixed set of positions with pyroaring, frame it as a
      deletion-vector-v1 blob (BE length, magic, vector, BE CRC-32) and write
      the positions, one per line.
  make_dv_fixture.py check BLOB_IN POSITIONS_IN
      Verify a deletion-vector-v1 blob (written by Thaw) with zlib + pyroaring
      and compare it with the expected positions.
  make_dv_fixture.py check-puffin PUFFIN_IN POSITIONS_IN
      Read a Puffin file with pyiceberg's PuffinFile and compare the single
      deletion vector it holds with the expected positions.
"""
import random
import struct
import sys
import zlib

SKIP = 77
MAGIC = bytes([0xD1, 0xD3, 0x39, 0x64])


def load_bitmap64():
    try:
        from pyroaring import BitMap64
    except ImportError as e:  # pyroaring missing or too old for BitMap64
        print(f"pyroaring.BitMap64 unavailable: {e}", file=sys.stderr)
        sys.exit(SKIP)
    return BitMap64


def fixture_positions():
    """Positions that exercise every container kind and several 32-bit keys."""
    rng = random.Random(20240611)
    positions = set()
    positions.update([0, 1, 2, 5, 100, 65535, 65536, 65537])  # array containers
    positions.update(range(200_000, 270_000))  # long run spanning containers
    positions.update(range(1 << 20, (1 << 20) + 65536, 2))  # 32768 values: bitmap
    positions.update(rng.randrange(0, 1 << 31) for _ in range(5000))  # sparse arrays
    positions.update((1 << 32) + p for p in (0, 7, 65535))  # second 32-bit key
    positions.update((5 << 32) + p for p in range(1000, 9000))  # run under key 5
    positions.add((0x7FFFFFFF << 32) | 0xFFFFFFFF)  # largest legal position
    return sorted(positions)


def frame(vector):
    body = MAGIC + vector
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def unframe(blob):
    (length,) = struct.unpack(">I", blob[:4])
    if length + 8 != len(blob):
        raise ValueError(f"length field {length} does not match blob size {len(blob)}")
    body = blob[4 : 4 + length]
    if body[:4] != MAGIC:
        raise ValueError(f"bad magic {body[:4].hex()}")
    (crc,) = struct.unpack(">I", blob[4 + length :])
    if crc != zlib.crc32(body) & 0xFFFFFFFF:
        raise ValueError("CRC-32 mismatch")
    return body[4:]


def read_positions(path):
    with open(path) as f:
        return [int(line) for line in f if line.strip()]


def compare(actual, expected):
    if actual == expected:
        return 0
    print(f"mismatch: got {len(actual)} positions, expected {len(expected)}", file=sys.stderr)
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a != e:
            print(f"first difference at index {i}: got {a}, expected {e}", file=sys.stderr)
            break
    return 1


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    mode, data_path, positions_path = argv[1:]
    if mode == "write":
        BitMap64 = load_bitmap64()
        positions = fixture_positions()
        bitmap = BitMap64(positions)
        bitmap.run_optimize()  # produce run containers too
        with open(data_path, "wb") as f:
            f.write(frame(bitmap.serialize()))
        with open(positions_path, "w") as f:
            f.write("".join(f"{p}\n" for p in positions))
        return 0
    if mode == "check":
        BitMap64 = load_bitmap64()
        with open(data_path, "rb") as f:
            vector = unframe(f.read())
        return compare(list(BitMap64.deserialize(vector)), read_positions(positions_path))
    if mode == "check-puffin":
        try:
            from pyiceberg.table.deletion_vector import deletion_vectors_from_puffin_file
            from pyiceberg.table.puffin import PuffinFile
        except ImportError as e:
            print(f"pyiceberg unavailable: {e}", file=sys.stderr)
            return SKIP
        with open(data_path, "rb") as f:
            dvs = deletion_vectors_from_puffin_file(PuffinFile(f.read()))
        if len(dvs) != 1:
            print(f"expected one deletion vector, got {len(dvs)}", file=sys.stderr)
            return 1
        actual = [p for chunk in dvs[0].to_vector().chunks for p in chunk.to_pylist()]
        return compare(actual, read_positions(positions_path))
    print(f"unknown mode {mode!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
