// What the protocol server asks of "a topic's log": the interface the Kafka
// handlers (Metadata, ListOffsets, OffsetForLeaderEpoch, Fetch, the group
// handlers' topic checks) and the tiered proxy (merged/) read through. The
// server knows this interface only; `serve/` implements it for Iceberg tables
// (serve::ServedTopic, serve::TopicRegistry).
//
// Offsets are Kafka offsets of one partition; every call naming a partition
// outside [0, partition_count()) fails with NotFound (UNKNOWN_TOPIC_OR_PARTITION).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/kafka/protocol/errors.h"
#include "thaw/kafka/protocol/wire.h"

namespace thaw::kafka::server {

// The leader epoch a log reports when it has not been bumped (KIP-320).
inline constexpr int32_t kInitialLeaderEpoch = 0;

struct PartitionOffsets {
  int64_t log_start = 0;       // lowest offset present (0 for an empty partition)
  int64_t high_watermark = 0;  // highest offset present + 1 (0 for an empty partition)
  int32_t leader_epoch = kInitialLeaderEpoch;
  int64_t last_stable() const { return high_watermark; }
};

struct FetchResult {
  // kNone, kOffsetOutOfRange (fetch offset < log_start or > high_watermark)
  // or kUnknownTopicOrPartition (partition < 0 or >= partition_count()).
  ErrorCode error = ErrorCode::kNone;
  PartitionOffsets offsets;
  // Whole record batches v2 to concatenate into the response's Records, in
  // offset order; empty at the high watermark and on errors.
  std::vector<std::shared_ptr<const std::string>> batches;
  int64_t bytes = 0;  // sum of the batches' sizes
};

// An offset and the timestamp of its record.
using OffsetAndTime = std::pair<int64_t, int64_t>;

class TopicLog {
 public:
  virtual ~TopicLog() = default;

  virtual const std::string& name() const = 0;
  // Stable across restarts; never the null or the metadata topic id.
  virtual Uuid topic_id() const = 0;
  virtual int32_t partition_count() const = 0;

  // Log start and high watermark.
  virtual Result<PartitionOffsets> Offsets(int32_t partition) = 0;
  // The first offset (in offset order) whose timestamp is >= ts_ms; nullopt
  // when none is.
  virtual Result<std::optional<OffsetAndTime>> OffsetForTime(int32_t partition, int64_t ts_ms) = 0;
  // The record with the greatest timestamp (the lowest offset among equals);
  // nullopt for an empty partition.
  virtual Result<std::optional<OffsetAndTime>> MaxTimestamp(int32_t partition) = 0;
  // Whole batches from the one containing fetch_offset (or the first after
  // it), the first always complete (KIP-74), then more while the total stays
  // <= max_bytes.
  virtual Result<FetchResult> Fetch(int32_t partition, int64_t fetch_offset, int64_t max_bytes) = 0;
  // A hint: start reading what a Fetch at `offset` for up to `max_bytes`
  // (the partition's share) will need. Returns at once.
  virtual void ReadAhead(int32_t partition, int64_t offset, int64_t max_bytes) = 0;

  // KIP-320: the latest leader epoch, the epoch of the record at `offset`,
  // OffsetForLeaderEpoch's (epoch, end offset) for `requested`, and the error
  // for a request naming `current` (-1: not checked) as the epoch.
  virtual int32_t LeaderEpoch(int32_t partition) const = 0;
  virtual int32_t LeaderEpochAt(int32_t partition, int64_t offset) const = 0;
  virtual Result<std::pair<int32_t, int64_t>> EndOffsetForEpoch(int32_t partition, int32_t requested) = 0;
  virtual ErrorCode CheckLeaderEpoch(int32_t partition, int32_t current) const = 0;

  // Picks up what was appended since (a new table snapshot). On an error
  // what was served stays served.
  virtual Status RefreshIfChanged() = 0;

  // DescribeConfigs: the topic's own settings, as (name, value), reported as
  // dynamic topic configs in place of Kafka's defaults (e.g. compression.type)
  // or after them (e.g. thaw.table). Not pure: a log without settings of its
  // own reports the defaults only.
  virtual std::vector<std::pair<std::string, std::string>> ConfigOverrides() const { return {}; }
};

// The logs a server answers for, by name and by topic id. Thread-safe.
class TopicLogs {
 public:
  virtual ~TopicLogs() = default;
  // Null when unknown.
  virtual std::shared_ptr<TopicLog> Find(std::string_view name) const = 0;
  virtual std::shared_ptr<TopicLog> FindById(const Uuid& id) const = 0;
  // In a stable order.
  virtual std::vector<std::shared_ptr<TopicLog>> All() const = 0;
  // RefreshIfChanged on every log; the first error, naming its topic.
  virtual Status RefreshAll() = 0;
};

}  // namespace thaw::kafka::server
