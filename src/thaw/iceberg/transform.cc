#include "thaw/iceberg/transform.h"

#include <charconv>
#include <cstring>

#include "thaw/common/civil_time.h"

namespace thaw::iceberg {

Transform Transform::Parse(std::string_view text) {
  Transform t;
  t.text = std::string(text);
  auto param = [&](std::string_view prefix) -> std::optional<int32_t> {
    if (text.size() < prefix.size() + 2 || text.substr(0, prefix.size()) != prefix) return std::nullopt;
    if (text[prefix.size()] != '[' || text.back() != ']') return std::nullopt;
    std::string_view num = text.substr(prefix.size() + 1, text.size() - prefix.size() - 2);
    int32_t v = 0;
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || p != num.data() + num.size() || v <= 0) return std::nullopt;
    return v;
  };
  if (text == "identity") t.kind = TransformKind::kIdentity;
  else if (text == "year") t.kind = TransformKind::kYear;
  else if (text == "month") t.kind = TransformKind::kMonth;
  else if (text == "day") t.kind = TransformKind::kDay;
  else if (text == "hour") t.kind = TransformKind::kHour;
  else if (text == "void") t.kind = TransformKind::kVoid;
  else if (auto n = param("bucket")) { t.kind = TransformKind::kBucket; t.param = *n; }
  else if (auto w = param("truncate")) { t.kind = TransformKind::kTruncate; t.param = *w; }
  else t.kind = TransformKind::kUnknown;
  return t;
}

bool Transform::preserves_order() const {
  switch (kind) {
    case TransformKind::kIdentity: case TransformKind::kTruncate: case TransformKind::kYear:
    case TransformKind::kMonth: case TransformKind::kDay: case TransformKind::kHour:
      return true;
    default:
      return false;
  }
}

int32_t Murmur3_32(std::string_view bytes) {
  const uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
  uint32_t h = 0;
  const size_t nblocks = bytes.size() / 4;
  auto rotl = [](uint32_t x, int r) { return (x << r) | (x >> (32 - r)); };
  for (size_t i = 0; i < nblocks; ++i) {
    uint32_t k;
    std::memcpy(&k, bytes.data() + i * 4, 4);  // little-endian host assumed (x86-64)
    k *= c1; k = rotl(k, 15); k *= c2;
    h ^= k; h = rotl(h, 13); h = h * 5 + 0xe6546b64;
  }
  const auto* tail = reinterpret_cast<const uint8_t*>(bytes.data() + nblocks * 4);
  uint32_t k1 = 0;
  switch (bytes.size() & 3) {
    case 3: k1 ^= uint32_t(tail[2]) << 16; [[fallthrough]];
    case 2: k1 ^= uint32_t(tail[1]) << 8; [[fallthrough]];
    case 1: k1 ^= tail[0]; k1 *= c1; k1 = rotl(k1, 15); k1 *= c2; h ^= k1;
  }
  h ^= static_cast<uint32_t>(bytes.size());
  h ^= h >> 16; h *= 0x85ebca6b; h ^= h >> 13; h *= 0xc2b2ae35; h ^= h >> 16;
  return static_cast<int32_t>(h);
}

int32_t BucketLong(int64_t v, int32_t n) {
  char buf[8];
  std::memcpy(buf, &v, 8);
  return (Murmur3_32(std::string_view(buf, 8)) & 0x7fffffff) % n;
}

int32_t BucketBytes(std::string_view v, int32_t n) { return (Murmur3_32(v) & 0x7fffffff) % n; }


std::optional<int64_t> ApplyToLong(const Transform& t, int64_t v, bool source_is_date, bool source_is_nanos) {
  const int64_t per_day = source_is_nanos ? 86'400'000'000'000LL : 86'400'000'000LL;
  const int64_t per_hour = per_day / 24;
  switch (t.kind) {
    case TransformKind::kIdentity: return v;
    case TransformKind::kTruncate: return v - (((v % t.param) + t.param) % t.param);
    case TransformKind::kBucket: return BucketLong(v, t.param);
    case TransformKind::kHour:
      if (source_is_date) return std::nullopt;
      return FloorDiv(v, per_hour);
    case TransformKind::kDay: return source_is_date ? v : FloorDiv(v, per_day);
    case TransformKind::kMonth:
    case TransformKind::kYear: {
      int64_t days = source_is_date ? v : FloorDiv(v, per_day);
      int64_t y; unsigned m, d;
      CivilFromDays(days, &y, &m, &d);
      if (t.kind == TransformKind::kYear) return y - 1970;
      return (y - 1970) * 12 + (static_cast<int64_t>(m) - 1);
    }
    default: return std::nullopt;
  }
}

}  // namespace thaw::iceberg
