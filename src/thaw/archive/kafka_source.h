// archive's side of Kafka: a librdkafka consumer reading chosen partitions of
// one topic from given offsets with isolation.level=read_committed (aborted
// transactions and control records never surface; their offsets stay gaps).
// No consumer-group assignment: archive assigns partitions itself, because the
// table's snapshot summary -- not the group's committed offsets -- says where
// each partition resumes. Group offsets may be committed for monitoring.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/records/record.h"
#include "thaw/kafka/rdkafka/client_glue.h"

namespace thaw::archive {

// Where a partition with no offset in the table starts.
struct FromOffset {
  enum class Kind { kEarliest, kLatest, kOffset } kind = Kind::kEarliest;
  int64_t offset = 0;                                        // kOffset
  static Result<FromOffset> Parse(const std::string& text);  // earliest | latest | N
};

struct SourceOptions {
  kafka::rdkafka::KafkaConfig kafka;
  std::string topic;
  std::vector<int32_t> partitions;    // empty = every partition of the topic
  std::map<int32_t, int64_t> resume;  // next offset per partition, from the table
  FromOffset from;                    // for partitions not in `resume`
  bool follow = false;
  // With follow and no `partitions`: how often the topic is checked for
  // partitions added while archiving (archived from their earliest offset).
  int64_t partition_check_ms = 5000;
  std::string group_id;  // for monitoring commits; empty = none
  int timeout_ms = 30000;
};

class KafkaSource {
 public:
  // Resolves the topic's partitions (kNotFound naming the topic and the
  // brokers when it does not exist; an unknown --partitions entry is
  // kInvalidArgument), their start offsets (a resume offset below the log
  // start offset -- retention deleted records never archived -- is
  // kAborted naming the partition and both offsets: records would be lost),
  // and without `follow` the stop offsets: each partition's last stable offset
  // now.
  static Result<std::unique_ptr<KafkaSource>> Make(const SourceOptions& options);
  virtual ~KafkaSource() = default;

  // Grows under follow when the topic gains partitions (SourceOptions).
  virtual const std::map<int32_t, int64_t>& start_offsets() const = 0;
  virtual const std::map<int32_t, int64_t>& stop_offsets() const = 0;  // empty with follow

  // Appends consumed records to `out` (their bytes kept alive by
  // out->keepalive), in offset order per partition, until about `max_bytes`
  // were added or `timeout` passed. Records at or past a partition's stop
  // offset are not returned.
  virtual Status Poll(records::RecordBatch* out, int64_t max_bytes, std::chrono::milliseconds timeout) = 0;

  // The next offset to archive per partition: after the last record returned,
  // or further when only control records / aborted transactions follow (the
  // consumer's position), so a commit records the position past the gaps.
  virtual std::map<int32_t, int64_t> positions() const = 0;

  // The topic's end (high watermark) per partition as the consumer last
  // heard it from the brokers (librdkafka's cached watermarks: no request),
  // for the archive-lag metric; partitions not fetched yet are absent.
  virtual std::map<int32_t, int64_t> end_offsets() const = 0;

  // Without follow: every partition reached its stop offset.
  virtual bool Done() const = 0;

  // Commits `next` to the consumer group (monitoring only; errors are logged).
  virtual void CommitGroupOffsets(const std::map<int32_t, int64_t>& next) = 0;
};

}  // namespace thaw::archive
