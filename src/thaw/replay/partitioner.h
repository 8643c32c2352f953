// Target partition choice for replayed records.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace thaw::replay {

// kKey is Kafka's default partitioner as librdkafka's `murmur2_random`
// implements it: a non-null key (empty included) -> JavaKeyPartition; a null
// key -> a random partition per record (replay.cc). The Java client's sticky
// partitioner also spreads null keys, one batch at a time.
enum class Partitioner { kSame, kKey, kRandom };

// Kafka's murmur2 (the Java client's DefaultPartitioner / BuiltInPartitioner
// hash): seed 0x9747b28c, over the serialized key bytes.
int32_t KafkaMurmur2(std::string_view bytes);
// The Java client's partition for a non-null key: toPositive(murmur2) % n.
int32_t JavaKeyPartition(std::string_view key, int32_t num_partitions);

}  // namespace thaw::replay
