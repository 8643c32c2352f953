#include "thaw/iceberg/deletion_vector.h"

#include <zlib.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstring>
#include <utility>

namespace thaw::iceberg {
namespace {

// Roaring portable format constants (RoaringFormatSpec).
constexpr uint32_t kCookieNoRuns = 12346;    // followed by a u32 container count
constexpr uint32_t kCookieWithRuns = 12347;  // low 16 bits; high 16 bits = count - 1
constexpr uint32_t kMaxContainers = 65536;   // 16-bit container keys
constexpr uint32_t kNoOffsetThreshold = 4;   // run-cookie bitmaps omit offsets below this
constexpr uint32_t kMaxArrayCardinality = 4096;
constexpr size_t kBitmapWords = 1024;
constexpr size_t kBitmapBytes = kBitmapWords * 8;

// Smallest possible serialized 32-bit bitmap plus its key: key (4) + cookie
// 12346 (4) + zero container count (4). Used to bound the 64-bit bitmap count.
constexpr uint64_t kMinKeyedBitmapBytes = 12;

// Framing of the deletion-vector-v1 blob: length (4) + magic (4) + CRC (4).
constexpr size_t kBlobFramingBytes = 12;

uint32_t Crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; feed large inputs in chunks.
  while (!bytes.empty()) {
    const size_t chunk = std::min<size_t>(bytes.size(), 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(chunk));
    bytes.remove_prefix(chunk);
  }
  return static_cast<uint32_t>(crc);
}

uint32_t LoadBe32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} << 24 | uint32_t{u[1]} << 16 | uint32_t{u[2]} << 8 | uint32_t{u[3]};
}

void AppendBe32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

void AppendLe16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xFF));
  out->push_back(static_cast<char>(v >> 8));
}

void AppendLe32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

void AppendLe64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

// Serialized size of a container body (not counting the descriptive header).
size_t ArrayBytes(uint32_t cardinality) { return size_t{2} * cardinality; }
size_t RunBytes(size_t num_runs) { return 2 + 4 * num_runs; }

}  // namespace

namespace internal {

// Parses the Roaring 64-bit portable format into DeletionVector containers.
// Every read is bounds-checked; every count is checked against the remaining
// bytes before anything is allocated.
class RoaringParser {
 public:
  RoaringParser(std::string_view bytes, std::string_view source) : bytes_(bytes), source_(source) {}

  Result<DeletionVector> Parse() {
    DeletionVector dv;
    uint64_t num_bitmaps = 0;
    RETURN_NOT_OK(ReadLe64(&num_bitmaps, "64-bit bitmap count"));
    if (num_bitmaps > Remaining() / kMinKeyedBitmapBytes) {
      return Error("truncated: bitmap count {} needs at least {} bytes each but only {} remain",
                   num_bitmaps, kMinKeyedBitmapBytes, Remaining());
    }
    int64_t previous_key = -1;
    for (uint64_t i = 0; i < num_bitmaps; ++i) {
      uint32_t key = 0;
      RETURN_NOT_OK(ReadLe32(&key, "32-bit bitmap key"));
      if (static_cast<int64_t>(key) <= previous_key) {
        return Error("bitmap keys are not strictly ascending ({} after {})", key, previous_key);
      }
      // The spec allows only positive 64-bit positions (most significant bit 0).
      if (key > 0x7FFFFFFFu) {
        return Error("bitmap key {} would make positions negative (must be <= 2147483647)", key);
      }
      previous_key = key;
      RETURN_NOT_OK(ParseBitmap32(key, &dv));
    }
    if (pos_ != bytes_.size()) {
      return Error("{} unexpected trailing bytes after {} bitmaps", bytes_.size() - pos_,
                   num_bitmaps);
    }
    return dv;
  }

 private:
  using Container = DeletionVector::Container;
  using Kind = DeletionVector::Kind;

  template <typename... Args>
  Status Error(fmt::format_string<Args...> f, Args&&... args) const {
    return Status::Corrupt("deletion vector {}: {}", source_,
                           fmt::format(f, std::forward<Args>(args)...));
  }

  size_t Remaining() const { return bytes_.size() - pos_; }

  Status Need(size_t n, std::string_view what) const {
    if (n > Remaining()) {
      return Error("truncated: {} needs {} bytes at offset {} but only {} remain", what, n, pos_,
                   Remaining());
    }
    return Status::OK();
  }

  const unsigned char* Take(size_t n) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data() + pos_);
    pos_ += n;
    return p;
  }

  static uint16_t Le16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
  static uint32_t Le32(const unsigned char* p) {
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  }

  Status ReadLe16(uint16_t* out, std::string_view what) {
    RETURN_NOT_OK(Need(2, what));
    *out = Le16(Take(2));
    return Status::OK();
  }
  Status ReadLe32(uint32_t* out, std::string_view what) {
    RETURN_NOT_OK(Need(4, what));
    *out = Le32(Take(4));
    return Status::OK();
  }
  Status ReadLe64(uint64_t* out, std::string_view what) {
    RETURN_NOT_OK(Need(8, what));
    const unsigned char* p = Take(8);
    *out = uint64_t{Le32(p)} | uint64_t{Le32(p + 4)} << 32;
    return Status::OK();
  }

  // One 32-bit portable Roaring bitmap: cookie, [run bitmap], descriptive
  // header (key, cardinality - 1), [offsets], container bodies.
  Status ParseBitmap32(uint32_t key32, DeletionVector* dv) {
    uint32_t cookie = 0;
    RETURN_NOT_OK(ReadLe32(&cookie, "roaring cookie"));
    uint32_t num_containers = 0;
    bool has_offsets = true;
    const unsigned char* run_flags = nullptr;
    if ((cookie & 0xFFFF) == kCookieWithRuns) {
      num_containers = (cookie >> 16) + 1;
      has_offsets = num_containers >= kNoOffsetThreshold;
      const size_t run_flag_bytes = (num_containers + 7) / 8;
      RETURN_NOT_OK(Need(run_flag_bytes, "run container flags"));
      run_flags = Take(run_flag_bytes);
    } else if (cookie == kCookieNoRuns) {
      RETURN_NOT_OK(ReadLe32(&num_containers, "container count"));
      if (num_containers > kMaxContainers) {
        return Error("bitmap key {}: container count {} exceeds the maximum {}", key32,
                     num_containers, kMaxContainers);
      }
    } else {
      return Error("bitmap key {}: unknown roaring cookie {:#x} (expected {} or {})", key32, cookie,
                   kCookieNoRuns, kCookieWithRuns);
    }

    // Header (4 bytes each), offsets (4 bytes each) and at least one 2-byte
    // body per container must fit before we allocate the header copy.
    const size_t header_bytes = size_t{4} * num_containers;
    const size_t offset_bytes = has_offsets ? size_t{4} * num_containers : 0;
    if (header_bytes + offset_bytes + size_t{2} * num_containers > Remaining()) {
      return Error(
          "truncated: bitmap key {} declares container count {}, which needs at least {} bytes "
          "but only {} remain",
          key32, num_containers, header_bytes + offset_bytes + size_t{2} * num_containers,
          Remaining());
    }
    const unsigned char* header = Take(header_bytes);
    // Offsets are redundant with the sequential layout (and covered by the
    // CRC); like CRoaring and Java we read the bodies in order and skip them.
    Take(offset_bytes);

    int32_t previous_key16 = -1;
    for (uint32_t i = 0; i < num_containers; ++i) {
      const uint16_t key16 = Le16(header + 4 * i);
      const uint32_t cardinality = uint32_t{Le16(header + 4 * i + 2)} + 1;
      if (static_cast<int32_t>(key16) <= previous_key16) {
        return Error("bitmap key {}: container keys are not strictly ascending ({} after {})",
                     key32, key16, previous_key16);
      }
      previous_key16 = key16;
      Container c;
      c.key = uint64_t{key32} << 16 | key16;
      c.cardinality = cardinality;
      const bool is_run = run_flags != nullptr && (run_flags[i / 8] >> (i % 8)) & 1;
      if (is_run) {
        RETURN_NOT_OK(ParseRun(key32, &c));
      } else if (cardinality <= kMaxArrayCardinality) {
        RETURN_NOT_OK(ParseArray(key32, &c));
      } else {
        RETURN_NOT_OK(ParseBitmap(key32, &c));
      }
      dv->cardinality_ += cardinality;
      dv->containers_.push_back(std::move(c));
    }
    return Status::OK();
  }

  Status ParseArray(uint32_t key32, Container* c) {
    c->kind = Kind::kArray;
    RETURN_NOT_OK(Need(ArrayBytes(c->cardinality), "array container"));
    const unsigned char* p = Take(ArrayBytes(c->cardinality));
    c->values.resize(c->cardinality);
    for (uint32_t j = 0; j < c->cardinality; ++j) {
      c->values[j] = Le16(p + 2 * j);
      if (j > 0 && c->values[j] <= c->values[j - 1]) {
        return Error("bitmap key {} container {}: array values are not strictly ascending", key32,
                     c->key & 0xFFFF);
      }
    }
    return Status::OK();
  }

  Status ParseBitmap(uint32_t key32, Container* c) {
    c->kind = Kind::kBitmap;
    RETURN_NOT_OK(Need(kBitmapBytes, "bitmap container"));
    const unsigned char* p = Take(kBitmapBytes);
    c->words.resize(kBitmapWords);
    uint32_t popcount = 0;
    for (size_t w = 0; w < kBitmapWords; ++w) {
      c->words[w] = uint64_t{Le32(p + 8 * w)} | uint64_t{Le32(p + 8 * w + 4)} << 32;
      popcount += static_cast<uint32_t>(std::popcount(c->words[w]));
    }
    if (popcount != c->cardinality) {
      return Error("bitmap key {} container {}: header cardinality {} but bitmap has {} bits set",
                   key32, c->key & 0xFFFF, c->cardinality, popcount);
    }
    return Status::OK();
  }

  Status ParseRun(uint32_t key32, Container* c) {
    c->kind = Kind::kRun;
    uint16_t num_runs = 0;
    RETURN_NOT_OK(ReadLe16(&num_runs, "run count"));
    if (num_runs == 0) {
      return Error("bitmap key {} container {}: run container with zero runs", key32,
                   c->key & 0xFFFF);
    }
    RETURN_NOT_OK(Need(size_t{4} * num_runs, "run container"));
    const unsigned char* p = Take(size_t{4} * num_runs);
    c->values.resize(size_t{2} * num_runs);
    uint32_t total = 0;
    int32_t previous_last = -1;
    for (size_t r = 0; r < num_runs; ++r) {
      const uint16_t start = Le16(p + 4 * r);
      const uint16_t length_minus_one = Le16(p + 4 * r + 2);
      const uint32_t last = uint32_t{start} + length_minus_one;
      if (last > 0xFFFF) {
        return Error("bitmap key {} container {}: run {}+{} runs past 65535", key32,
                     c->key & 0xFFFF, start, length_minus_one);
      }
      if (static_cast<int32_t>(start) <= previous_last) {
        return Error("bitmap key {} container {}: runs overlap or are not ascending", key32,
                     c->key & 0xFFFF);
      }
      previous_last = static_cast<int32_t>(last);
      total += uint32_t{length_minus_one} + 1;
      c->values[2 * r] = start;
      c->values[2 * r + 1] = length_minus_one;
    }
    if (total != c->cardinality) {
      return Error("bitmap key {} container {}: header cardinality {} but runs cover {} values",
                   key32, c->key & 0xFFFF, c->cardinality, total);
    }
    return Status::OK();
  }

  std::string_view bytes_;
  std::string_view source_;
  size_t pos_ = 0;
};

}  // namespace internal

Result<DeletionVector> DeletionVector::DeserializeVector(std::string_view vector,
                                                         std::string_view source) {
  return internal::RoaringParser(vector, source).Parse();
}

Result<DeletionVector> DeletionVector::Deserialize(std::string_view blob, std::string_view source) {
  if (blob.size() < kBlobFramingBytes) {
    return Status::Corrupt(
        "deletion vector {}: truncated blob of {} bytes (length, magic and CRC need {})", source,
        blob.size(), kBlobFramingBytes);
  }
  const uint32_t length = LoadBe32(blob.data());
  // The length covers magic + vector; the blob is exactly length + CRC after it.
  if (uint64_t{length} + 8 != blob.size()) {
    if (uint64_t{length} + 8 > blob.size()) {
      return Status::Corrupt(
          "deletion vector {}: truncated blob: length field says {} bytes of magic and vector "
          "(blob size {} + CRC), but the blob has {} bytes",
          source, length, uint64_t{length} + 8, blob.size());
    }
    return Status::Corrupt(
        "deletion vector {}: length field {} leaves {} unexpected trailing bytes in a {}-byte blob",
        source, length, blob.size() - length - 8, blob.size());
  }
  if (length < 4) {
    return Status::Corrupt("deletion vector {}: length field {} is smaller than the magic", source,
                           length);
  }
  const std::string_view magic_and_vector = blob.substr(4, length);
  if (magic_and_vector.substr(0, 4) != std::string_view(kDeletionVectorMagic, 4)) {
    const auto* m = reinterpret_cast<const unsigned char*>(magic_and_vector.data());
    return Status::Corrupt(
        "deletion vector {}: bad magic {:02x} {:02x} {:02x} {:02x} (expected d1 d3 39 64)", source,
        m[0], m[1], m[2], m[3]);
  }
  const uint32_t stored_crc = LoadBe32(blob.data() + 4 + length);
  const uint32_t computed_crc = Crc32(magic_and_vector);
  if (stored_crc != computed_crc) {
    return Status::Corrupt(
        "deletion vector {}: CRC-32 mismatch (stored {:08x}, computed {:08x}); the blob is "
        "damaged or content_offset/content_size_in_bytes are wrong",
        source, stored_crc, computed_crc);
  }
  return DeserializeVector(magic_and_vector.substr(4), source);
}

DeletionVector::Container DeletionVector::MakeContainer(uint64_t key,
                                                        const std::vector<uint16_t>& lows) {
  Container c;
  c.key = key;
  c.cardinality = static_cast<uint32_t>(lows.size());
  size_t num_runs = 0;
  for (size_t i = 0; i < lows.size(); ++i) {
    if (i == 0 || lows[i] != lows[i - 1] + 1) ++num_runs;
  }
  // Pick the smallest encoding, as Roaring's runOptimize() does: deleted rows
  // often come in ranges, which a run container stores in a few bytes.
  const size_t plain_bytes =
      c.cardinality <= kMaxArrayCardinality ? ArrayBytes(c.cardinality) : kBitmapBytes;
  if (RunBytes(num_runs) < plain_bytes) {
    c.kind = Kind::kRun;
    c.values.reserve(2 * num_runs);
    for (size_t i = 0; i < lows.size();) {
      size_t j = i + 1;
      while (j < lows.size() && lows[j] == lows[j - 1] + 1) ++j;
      c.values.push_back(lows[i]);
      c.values.push_back(static_cast<uint16_t>(j - i - 1));
      i = j;
    }
  } else if (c.cardinality <= kMaxArrayCardinality) {
    c.kind = Kind::kArray;
    c.values = lows;
  } else {
    c.kind = Kind::kBitmap;
    c.words.assign(kBitmapWords, 0);
    for (uint16_t v : lows) c.words[v / 64] |= uint64_t{1} << (v % 64);
  }
  return c;
}

DeletionVector DeletionVector::FromPositions(std::vector<int64_t> positions) {
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  auto first_valid = std::lower_bound(positions.begin(), positions.end(), int64_t{0});
  assert(first_valid == positions.begin() && "row positions must not be negative");

  DeletionVector dv;
  std::vector<uint16_t> lows;
  for (auto it = first_valid; it != positions.end();) {
    const uint64_t key = static_cast<uint64_t>(*it) >> 16;
    lows.clear();
    for (; it != positions.end() && (static_cast<uint64_t>(*it) >> 16) == key; ++it) {
      lows.push_back(static_cast<uint16_t>(*it & 0xFFFF));
    }
    dv.containers_.push_back(MakeContainer(key, lows));
    dv.cardinality_ += static_cast<int64_t>(lows.size());
  }
  return dv;
}

bool DeletionVector::Contains(int64_t position) const {
  if (position < 0) return false;
  const uint64_t key = static_cast<uint64_t>(position) >> 16;
  const uint16_t low = static_cast<uint16_t>(position & 0xFFFF);
  auto it = std::lower_bound(containers_.begin(), containers_.end(), key,
                             [](const Container& c, uint64_t k) { return c.key < k; });
  if (it == containers_.end() || it->key != key) return false;
  switch (it->kind) {
    case Kind::kArray:
      return std::binary_search(it->values.begin(), it->values.end(), low);
    case Kind::kBitmap:
      return (it->words[low / 64] >> (low % 64)) & 1;
    case Kind::kRun: {
      // Find the last run starting at or before `low`. Starts sit at even indexes.
      size_t lo = 0, hi = it->values.size() / 2;  // search run indexes [lo, hi)
      while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (it->values[2 * mid] <= low) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      if (lo == 0) return false;
      const uint32_t start = it->values[2 * (lo - 1)];
      return low <= start + it->values[2 * (lo - 1) + 1];
    }
  }
  return false;
}

std::vector<int64_t> DeletionVector::ToVector() const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(cardinality_));
  ForEach([&out](int64_t pos) { out.push_back(pos); });
  return out;
}

DeletionVector::ContainerCounts DeletionVector::CountContainers() const {
  ContainerCounts counts;
  for (const Container& c : containers_) {
    switch (c.kind) {
      case Kind::kArray:
        ++counts.array;
        break;
      case Kind::kBitmap:
        ++counts.bitmap;
        break;
      case Kind::kRun:
        ++counts.run;
        break;
    }
  }
  return counts;
}

std::string DeletionVector::SerializeVector() const {
  std::string out;
  // Group containers by their 32-bit key (the high half of the position).
  std::vector<std::pair<size_t, size_t>> groups;  // [begin, end) into containers_
  for (size_t i = 0; i < containers_.size();) {
    size_t j = i + 1;
    while (j < containers_.size() && containers_[j].key >> 16 == containers_[i].key >> 16) ++j;
    groups.emplace_back(i, j);
    i = j;
  }
  AppendLe64(&out, groups.size());
  for (const auto& [begin, end] : groups) {
    const uint32_t n = static_cast<uint32_t>(end - begin);
    AppendLe32(&out, static_cast<uint32_t>(containers_[begin].key >> 16));
    const bool has_runs = std::any_of(containers_.begin() + begin, containers_.begin() + end,
                                      [](const Container& c) { return c.kind == Kind::kRun; });
    bool has_offsets = true;
    size_t body_start;  // offset of the first body from the cookie
    if (has_runs) {
      AppendLe32(&out, kCookieWithRuns | (n - 1) << 16);
      std::string run_flags((n + 7) / 8, '\0');
      for (uint32_t i = 0; i < n; ++i) {
        if (containers_[begin + i].kind == Kind::kRun) run_flags[i / 8] |= char(1 << (i % 8));
      }
      out.append(run_flags);
      has_offsets = n >= kNoOffsetThreshold;
      body_start = 4 + run_flags.size() + size_t{4} * n + (has_offsets ? size_t{4} * n : 0);
    } else {
      AppendLe32(&out, kCookieNoRuns);
      AppendLe32(&out, n);
      body_start = 8 + size_t{8} * n;
    }
    for (size_t i = begin; i < end; ++i) {
      AppendLe16(&out, static_cast<uint16_t>(containers_[i].key & 0xFFFF));
      AppendLe16(&out, static_cast<uint16_t>(containers_[i].cardinality - 1));
    }
    if (has_offsets) {
      size_t offset = body_start;
      for (size_t i = begin; i < end; ++i) {
        AppendLe32(&out, static_cast<uint32_t>(offset));
        const Container& c = containers_[i];
        offset += c.kind == Kind::kRun     ? RunBytes(c.values.size() / 2)
                  : c.kind == Kind::kArray ? ArrayBytes(c.cardinality)
                                           : kBitmapBytes;
      }
    }
    for (size_t i = begin; i < end; ++i) {
      const Container& c = containers_[i];
      switch (c.kind) {
        case Kind::kArray:
          for (uint16_t v : c.values) AppendLe16(&out, v);
          break;
        case Kind::kRun:
          AppendLe16(&out, static_cast<uint16_t>(c.values.size() / 2));
          for (uint16_t v : c.values) AppendLe16(&out, v);
          break;
        case Kind::kBitmap:
          for (uint64_t w : c.words) AppendLe64(&out, w);
          break;
      }
    }
  }
  return out;
}

std::string DeletionVector::Serialize() const {
  const std::string vector = SerializeVector();
  std::string magic_and_vector(kDeletionVectorMagic, 4);
  magic_and_vector.append(vector);
  std::string out;
  out.reserve(magic_and_vector.size() + 8);
  AppendBe32(&out, static_cast<uint32_t>(magic_and_vector.size()));
  out.append(magic_and_vector);
  AppendBe32(&out, Crc32(magic_and_vector));
  return out;
}

Result<DeletionVector> ReadDeletionVector(std::string_view puffin_file_bytes,
                                          int64_t content_offset, int64_t content_size,
                                          std::string_view source) {
  if (puffin_file_bytes.substr(0, 4) != kPuffinMagic) {
    return Status::Corrupt("puffin file {}: bad magic at start of file (expected 'PFA1')", source);
  }
  ASSIGN_OR_RAISE(std::string_view blob,
                  SlicePuffinBlob(puffin_file_bytes, content_offset, content_size, source));
  return DeletionVector::Deserialize(blob, fmt::format("in puffin file {} at offset {} (length {})",
                                                       source, content_offset, content_size));
}

Result<DeletionVector> ReadDeletionVector(std::string_view puffin_file_bytes,
                                          const PuffinBlobMetadata& blob, std::string_view source) {
  if (blob.type != kDeletionVectorBlobType) {
    return Status::Invalid("puffin file {}: blob at offset {} has type '{}', not '{}'", source,
                           blob.offset, blob.type, kDeletionVectorBlobType);
  }
  if (blob.compression_codec) {
    return Status::Corrupt(
        "puffin file {}: deletion vector at offset {} has compression codec '{}' (the spec "
        "forbids compressing deletion vectors)",
        source, blob.offset, *blob.compression_codec);
  }
  ASSIGN_OR_RAISE(DeletionVector dv,
                  ReadDeletionVector(puffin_file_bytes, blob.offset, blob.length, source));
  if (auto property = blob.Property("cardinality")) {
    int64_t expected = -1;
    auto [ptr, ec] =
        std::from_chars(property->data(), property->data() + property->size(), expected);
    if (ec != std::errc() || ptr != property->data() + property->size()) {
      return Status::Corrupt(
          "puffin file {}: deletion vector at offset {} has non-numeric cardinality '{}'", source,
          blob.offset, *property);
    }
    if (expected != dv.Cardinality()) {
      return Status::Corrupt(
          "puffin file {}: deletion vector at offset {} holds {} positions but its cardinality "
          "property says {}",
          source, blob.offset, dv.Cardinality(), expected);
    }
  }
  return dv;
}

Result<std::shared_ptr<const DeletionVector>> DeletionVectorCache::Get(const std::string& location,
                                                                       int64_t content_offset, int64_t content_size,
                                                                       std::string_view data_file,
                                                                       std::optional<int64_t> cardinality) {
  // Held across the read: DVs are few and small, and a concurrent request
  // for the same blob then waits instead of fetching it again.
  std::lock_guard<std::mutex> lock(mu_);
  const auto key = std::make_pair(location, content_offset);
  if (auto it = blobs_.find(key); it != blobs_.end()) {
    ++stats_.hits;
    return it->second;
  }
  const std::string source = fmt::format("{} (deletion vector for data file {})", location, data_file);
  ASSIGN_OR_RAISE(auto file, io_->Open(location));
  const int64_t size = file->size();
  // The blob lies after the leading magic and before the footer's magic.
  if (content_offset < static_cast<int64_t>(kPuffinMagic.size()) || content_size < 0 ||
      content_size > size - static_cast<int64_t>(kPuffinMagic.size()) ||
      content_offset > size - static_cast<int64_t>(kPuffinMagic.size()) - content_size) {
    return Status::Corrupt("puffin file {}: the manifest's content_offset {} / content_size_in_bytes {} do not fit "
                           "in the file ({} bytes); the manifest or the Puffin file is damaged",
                           source, content_offset, content_size, size);
  }
  std::string blob(static_cast<size_t>(content_size), '\0');
  RETURN_NOT_OK(file->ReadAt(content_offset, content_size, blob.data()));
  stats_.bytes_read += content_size;
  ++stats_.blobs_read;
  ASSIGN_OR_RAISE(DeletionVector dv,
                  DeletionVector::Deserialize(blob, fmt::format("in puffin file {} at offset {} (length {})", source,
                                                                content_offset, content_size)));
  if (cardinality && *cardinality != dv.Cardinality()) {
    return Status::Corrupt("puffin file {}: the deletion vector at offset {} holds {} positions but the manifest's "
                           "record_count says {}; the manifest or the Puffin file is damaged",
                           source, content_offset, dv.Cardinality(), *cardinality);
  }
  auto shared = std::make_shared<const DeletionVector>(std::move(dv));
  blobs_.emplace(key, shared);
  return shared;
}

DeletionVectorCache::Stats DeletionVectorCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace thaw::iceberg
