#include "thaw/replay/partitioner.h"

namespace thaw::replay {

int32_t KafkaMurmur2(std::string_view data) {
  const uint32_t seed = 0x9747b28c, m = 0x5bd1e995;
  const int r = 24;
  const size_t length = data.size();
  uint32_t h = seed ^ static_cast<uint32_t>(length);
  const size_t length4 = length / 4;
  const auto* d = reinterpret_cast<const uint8_t*>(data.data());
  for (size_t i = 0; i < length4; ++i) {
    const size_t i4 = i * 4;
    uint32_t k = uint32_t(d[i4]) | (uint32_t(d[i4 + 1]) << 8) | (uint32_t(d[i4 + 2]) << 16) | (uint32_t(d[i4 + 3]) << 24);
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  switch (length % 4) {
    case 3: h ^= uint32_t(d[(length & ~size_t{3}) + 2]) << 16; [[fallthrough]];
    case 2: h ^= uint32_t(d[(length & ~size_t{3}) + 1]) << 8; [[fallthrough]];
    case 1: h ^= uint32_t(d[length & ~size_t{3}]); h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<int32_t>(h);
}

int32_t JavaKeyPartition(std::string_view key, int32_t num_partitions) {
  return static_cast<int32_t>((static_cast<uint32_t>(KafkaMurmur2(key)) & 0x7fffffffu) % static_cast<uint32_t>(num_partitions));
}

}  // namespace thaw::replay
