// Partition transforms (spec "Partition Transforms", Appendix B for bucket).
// Used for pruning: applying a transform to a literal and projecting a
// predicate on a source column onto the partition column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "thaw/common/status.h"

namespace thaw::iceberg {

enum class TransformKind { kIdentity, kBucket, kTruncate, kYear, kMonth, kDay, kHour, kVoid, kUnknown };

struct Transform {
  TransformKind kind = TransformKind::kIdentity;
  int32_t param = 0;  // bucket N / truncate W
  std::string text;   // as written in metadata

  static Transform Parse(std::string_view text);  // unknown transforms are kept, not errors
  // True when a transform preserves order (so a range on the source maps to a
  // range on the partition value): identity, truncate, year..hour.
  bool preserves_order() const;
};

// Iceberg's 32-bit murmur3 (x86_32, seed 0) over bytes.
int32_t Murmur3_32(std::string_view bytes);
// bucket of a long/int (hashed as 8-byte little-endian long).
int32_t BucketLong(int64_t v, int32_t n);
int32_t BucketBytes(std::string_view v, int32_t n);

// Applies an order-preserving transform to a long source value in the source
// column's unit (µs for timestamps, days for dates). Returns nullopt for
// transforms that cannot be applied to a long.
std::optional<int64_t> ApplyToLong(const Transform& t, int64_t v, bool source_is_date, bool source_is_nanos);

}  // namespace thaw::iceberg
