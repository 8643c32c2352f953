// Target partition choice for replayed records.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace thaw::replay {

enum class Partitioner { kSame, kKey, kRandom };

// Kafka's murmur2 (the Java client's DefaultPartitioner / BuiltInPartitioner
// hash): seed 0x9747b28c, over the serialized key bytes.
int32_t KafkaMurmur2(std::string_view bytes);
// The Java client's partition for a non-null key: toPositive(murmur2) % n.
int32_t JavaKeyPartition(std::string_view key, int32_t num_partitions);

}  // namespace thaw::replay
