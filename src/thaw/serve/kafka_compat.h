// TEMPORARY stand-ins for the Kafka types serve/ uses, until the codegen
// branch's errors.h and wire.h are merged: once they exist this header
// includes them and defines nothing (the lead may then drop it and include
// them directly). The local values are Kafka's (Errors.java).
#pragma once

#include <array>
#include <cstdint>

#if __has_include("thaw/kafka/protocol/errors.h")
#include "thaw/kafka/protocol/errors.h"
#else
namespace thaw::kafka {
enum class ErrorCode : int16_t {
  kNone = 0,
  kOffsetOutOfRange = 1,
  kUnknownTopicOrPartition = 3,
  kKafkaStorageError = 56,
};
}  // namespace thaw::kafka
#endif

#if __has_include("thaw/kafka/protocol/wire.h")
#include "thaw/kafka/protocol/wire.h"
#define THAW_SERVE_HAVE_KAFKA_UUID 1
#else
namespace thaw::kafka {
// A topic id: 16 bytes, big-endian halves as Kafka's Uuid writes them.
struct Uuid {
  std::array<uint8_t, 16> bytes{};
  bool operator==(const Uuid&) const = default;
};
}  // namespace thaw::kafka
#endif
