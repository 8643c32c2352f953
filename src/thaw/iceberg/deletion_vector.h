// Iceberg v3 deletion vectors: the `deletion-vector-v1` Puffin blob.
//
//   blob   = length(u32 BE, of magic + vector) | magic D1 D3 39 64 | vector |
//            CRC-32(magic + vector) (u32 BE)
//   vector = Roaring 64-bit "portable" serialization: u64 LE bitmap count, then
//            per 32-bit key (ascending) u32 LE key + a 32-bit portable Roaring
//            bitmap holding the low 32 bits of each position.
//
// The Roaring format is parsed by hand (no CRoaring dependency). Blobs are
// untrusted input: every count is bounded by the bytes that remain before
// anything is allocated (see fuzz/puffin_fuzz.cc).
#pragma once

#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/puffin.h"
#include "thaw/storage/file_io.h"

namespace thaw::iceberg {

namespace internal {
class RoaringParser;
}  // namespace internal

inline constexpr char kDeletionVectorMagic[4] = {'\xD1', '\xD3', '\x39', '\x64'};

class DeletionVector {
 public:
  // How the positions are stored; exposed for tests and diagnostics.
  struct ContainerCounts {
    int64_t array = 0;
    int64_t bitmap = 0;
    int64_t run = 0;
  };

  DeletionVector() = default;

  // Parses a whole `deletion-vector-v1` blob and verifies its length field,
  // magic and CRC-32. `source` names the blob in error messages.
  static Result<DeletionVector> Deserialize(std::string_view blob, std::string_view source);

  // Parses only the Roaring 64-bit portable vector (no length/magic/CRC
  // framing), e.g. the output of pyroaring's BitMap64.serialize(). Positions
  // must be non-negative (keys <= 0x7FFFFFFF) as the Iceberg spec requires.
  static Result<DeletionVector> DeserializeVector(std::string_view vector, std::string_view source);

  // Builds a vector from positions in any order; duplicates are fine.
  // Row positions are never negative: a negative value is a caller bug, asserted
  // in debug builds and ignored otherwise.
  static DeletionVector FromPositions(std::vector<int64_t> positions);

  bool Contains(int64_t position) const;
  int64_t Cardinality() const { return cardinality_; }
  bool empty() const { return cardinality_ == 0; }

  // Calls fn(int64_t position) for every position in ascending order without
  // materializing them (a DV may hold millions of positions).
  template <typename Fn>
  void ForEach(Fn&& fn) const;
  // All positions, ascending. Prefer ForEach/Contains for large vectors.
  std::vector<int64_t> ToVector() const;

  // The complete `deletion-vector-v1` blob (length, magic, vector, CRC).
  std::string Serialize() const;
  // Only the Roaring 64-bit portable vector. Each container is written in its
  // smallest form: array (<= 4096 values), bitmap, or run (like runOptimize()).
  std::string SerializeVector() const;

  ContainerCounts CountContainers() const;

 private:
  enum class Kind : uint8_t { kArray, kBitmap, kRun };

  // One Roaring container: the positions sharing their high 48 bits.
  struct Container {
    uint64_t key = 0;  // position >> 16 (32-bit bitmap key << 16 | 16-bit container key)
    Kind kind = Kind::kArray;
    uint32_t cardinality = 0;  // 1..65536
    // kArray: sorted low 16 bits. kRun: flattened (start, length - 1) pairs.
    std::vector<uint16_t> values;
    // kBitmap: 1024 words; bit (v % 64) of word (v / 64) is set iff low value v is present.
    std::vector<uint64_t> words;
  };

  friend class internal::RoaringParser;

  static Container MakeContainer(uint64_t key, const std::vector<uint16_t>& lows);

  std::vector<Container> containers_;  // sorted by key, no empty containers
  int64_t cardinality_ = 0;
};

template <typename Fn>
void DeletionVector::ForEach(Fn&& fn) const {
  for (const Container& c : containers_) {
    const int64_t base = static_cast<int64_t>(c.key << 16);
    switch (c.kind) {
      case Kind::kArray:
        for (uint16_t low : c.values) fn(base | low);
        break;
      case Kind::kRun:
        for (size_t i = 0; i + 1 < c.values.size(); i += 2) {
          const int64_t first = base | c.values[i];
          const int64_t last = first + c.values[i + 1];
          for (int64_t pos = first; pos <= last; ++pos) fn(pos);
        }
        break;
      case Kind::kBitmap:
        for (size_t w = 0; w < c.words.size(); ++w) {
          for (uint64_t word = c.words[w]; word != 0; word &= word - 1) {
            fn(base | static_cast<int64_t>(w * 64 + std::countr_zero(word)));
          }
        }
        break;
    }
  }
}

// Slices the blob at [content_offset, content_offset + content_size) out of a
// whole Puffin file (the manifest entry's content_offset and
// content_size_in_bytes) and deserializes it. Checks the file's leading magic.
Result<DeletionVector> ReadDeletionVector(std::string_view puffin_file_bytes,
                                          int64_t content_offset, int64_t content_size,
                                          std::string_view source);

// Same, driven by footer metadata: also checks the blob type, that no
// compression codec is set, and the `cardinality` property when present.
Result<DeletionVector> ReadDeletionVector(std::string_view puffin_file_bytes,
                                          const PuffinBlobMetadata& blob, std::string_view source);

// Reads deletion vectors by their byte range (the manifest entry's
// content_offset / content_size_in_bytes) with ranged reads, never the whole
// Puffin file, and keeps each one, keyed by (Puffin location, offset): a
// Puffin file holding the DVs of many data files is fetched once per blob.
// Thread-safe; a blob is read at most once even when asked for concurrently.
class DeletionVectorCache {
 public:
  struct Stats {
    int64_t blobs_read = 0;  // distinct blobs fetched
    int64_t bytes_read = 0;  // bytes fetched from Puffin files
    int64_t hits = 0;        // requests served from the cache
  };

  explicit DeletionVectorCache(std::shared_ptr<storage::FileIO> io) : io_(std::move(io)) {}

  // The deletion vector at [content_offset, content_offset + content_size) of
  // the Puffin file `location`. `data_file` (the file it deletes from) is
  // named in error messages. `cardinality`, when given (the manifest entry's
  // record_count), must be the number of positions the vector holds.
  Result<std::shared_ptr<const DeletionVector>> Get(const std::string& location, int64_t content_offset,
                                                    int64_t content_size, std::string_view data_file,
                                                    std::optional<int64_t> cardinality = std::nullopt);
  Stats stats() const;

 private:
  std::shared_ptr<storage::FileIO> io_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int64_t>, std::shared_ptr<const DeletionVector>> blobs_;
  Stats stats_;
};

}  // namespace thaw::iceberg
