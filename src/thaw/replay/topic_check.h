// Will the target topic keep what a replay sends, as it was sent? A topic's
// configuration can delete replayed history (retention against the records'
// original, often months-old timestamps), rewrite it (LogAppendTime), or
// reject it (timestamp bounds, record size, null keys on a compacted topic).
// Thaw reads the topic's configs before producing anything and refuses, with
// the fix in the message; --force turns the delete/rewrite cases into
// warnings (a short-retention copy can be what a user wants). Records are
// checked again one by one, for what planning could not know.
//
// Pure logic: no Kafka client here (unit-tested in tests/unit/replay).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::replay {

enum class TimestampMode {
  kOriginal,  // the record's own timestamp (CreateTime)
  kNow,       // produce time; the original kept in a thaw.source.timestamp header
};

struct TopicLimits {
  std::optional<int64_t> retention_ms;       // nullopt: kept forever (-1)
  std::optional<int64_t> retention_bytes;    // per partition; nullopt: unlimited
  bool log_append_time = false;              // message.timestamp.type=LogAppendTime
  std::optional<int64_t> before_max_ms;      // oldest accepted: now - before_max
  std::optional<int64_t> after_max_ms;       // newest accepted: now + after_max
  std::optional<int64_t> max_message_bytes;
  bool compacted = false;                    // cleanup.policy contains compact

  static Result<TopicLimits> FromConfigs(const std::map<std::string, std::string>& configs);
};

// What planning knows about the records to send.
struct PlannedRecords {
  std::optional<std::pair<int64_t, int64_t>> timestamp_range_ms;  // from column metrics
  int64_t bytes = 0;             // the planned files' size (a lower bound of what is sent)
  int32_t target_partitions = 1;
};

// Checks before producing. Refusals come back as an error naming the config,
// the records and the fix; forced ones are appended to `warnings`.
Status CheckTopic(const std::string& topic, const TopicLimits& limits, const PlannedRecords& planned,
                  TimestampMode mode, bool force, int64_t now_ms, std::vector<std::string>* warnings);

// Checks one record as it will be sent (timestamp_ms < 0: produce time).
// Returns an error for what the broker would reject, or -- unless `force` --
// what retention would delete at once.
Status CheckRecord(const std::string& topic, const TopicLimits& limits, int64_t timestamp_ms, int64_t size_bytes,
                   bool null_key, bool force, int64_t now_ms, int32_t source_partition, int64_t source_offset);

// The configs --create-topic sets: keep everything, then the user's
// --topic-config on top.
std::map<std::string, std::string> CreatedTopicConfigs(const std::map<std::string, std::string>& user);

// "7d", "36h", "90s", "250ms" -- a human rendering of a duration.
std::string HumanDuration(int64_t ms);

}  // namespace thaw::replay
