// `thaw replay`: a table's records, in per-partition offset order, produced
// into a Kafka topic, optionally as a resumable job whose progress lives in
// the target cluster (and, with --exactly-once, in the same transactions as
// the records).
//
//   RecordReader (records/) --> Partitioner --> KafkaProducer (librdkafka)
//                                                 |
//                      checkpoint: topic thaw-replay-jobs, key = job name
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "thaw/common/status.h"
#include "thaw/records/record_reader.h"
#include "thaw/replay/kafka_client.h"
#include "thaw/replay/partitioner.h"
#include "thaw/storage/catalog.h"

namespace thaw::replay {

struct ReplayOptions {
  records::ReadOptions read;
  KafkaConfig kafka;
  std::string topic;
  Partitioner partitioner = Partitioner::kSame;
  bool create_topic = false;
  std::optional<int32_t> target_partitions;
  std::string job;                         // empty = not resumable
  std::string checkpoint_topic = "thaw-replay-jobs";
  bool exactly_once = false;
  bool link_headers = true;
  bool dry_run = false;
  double rate_mb_per_s = 0;                // 0 = unlimited
  int64_t checkpoint_every = 50000;        // records per checkpoint / transaction
  std::set<std::pair<int32_t, int64_t>> exclude;  // (partition, offset) never replayed
  std::function<bool(const records::RecordBatch&, const records::Record&)> filter;  // --where
  std::string range_description;           // canonical text of the range flags (stored in the job)
  int timeout_ms = 30000;
  // --follow: after the range, poll the table for new snapshots and replay
  // the data files appended since (see docs/replay.md for the rule on
  // overwrite/delete snapshots). `reload` fetches the table's latest
  // metadata; `stop` ends following (SIGINT/SIGTERM).
  bool follow = false;
  int poll_interval_ms = 2000;
  std::function<Result<std::shared_ptr<const storage::Table>>()> reload;
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const std::string&)> report;  // notices (skipped snapshots)
};

struct Checkpoint {
  std::string job;
  std::string table;
  std::string topic;
  int64_t snapshot_id = 0;
  std::string range;
  std::map<int32_t, int64_t> next_offsets;  // source partition -> next offset to replay
  int64_t records = 0;
  bool complete = false;
  int64_t updated_ms = 0;

  std::string ToJson() const;
  static Result<Checkpoint> FromJson(std::string_view text);
};

struct ReplaySummary {
  std::string table;
  std::string topic;
  int64_t snapshot_id = 0;
  int64_t records = 0;      // produced and acknowledged in this run
  int64_t bytes = 0;        // key + value + header bytes
  int64_t excluded = 0;
  int64_t filtered = 0;
  double seconds = 0;
  bool resumed = false;
  bool already_complete = false;
  int64_t snapshots_followed = 0;
  std::map<int32_t, int64_t> next_offsets;
};

struct Progress {
  int64_t records = 0, bytes = 0, estimated_records = 0;
  double seconds = 0;
};

// Loads the last committed checkpoint of a job; nullopt if none.
Result<std::optional<Checkpoint>> LoadCheckpoint(const KafkaConfig& kafka, const std::string& checkpoint_topic,
                                                 const std::string& job, int timeout_ms);

// Prints the plan (for --dry-run) to a string.
Result<std::string> DescribePlan(std::shared_ptr<const storage::Table> table, const ReplayOptions& options);

Result<ReplaySummary> RunReplay(std::shared_ptr<const storage::Table> table, const ReplayOptions& options,
                                const std::function<void(const Progress&)>& on_progress);

}  // namespace thaw::replay
