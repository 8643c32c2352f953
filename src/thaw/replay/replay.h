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
#include <vector>

#include "thaw/common/status.h"
#include "thaw/records/record_reader.h"
#include "thaw/replay/kafka_client.h"
#include "thaw/replay/partitioner.h"
#include "thaw/replay/topic_check.h"
#include "thaw/iceberg/table.h"

namespace thaw::replay {

struct ReplayOptions {
  records::ReadOptions read;
  KafkaConfig kafka;
  std::string topic;
  Partitioner partitioner = Partitioner::kSame;
  bool create_topic = false;
  std::optional<int32_t> target_partitions;
  // --replication-factor for --create-topic; -1: the broker's
  // default.replication.factor.
  int32_t replication_factor = -1;
  // --topic-config for --create-topic; created topics keep everything
  // (retention.ms=-1, retention.bytes=-1) unless overridden here.
  std::map<std::string, std::string> topic_configs;
  // --force: proceed where the target topic would delete (retention) or
  // rewrite (LogAppendTime) replayed records; each is a warning instead.
  bool force = false;
  TimestampMode timestamps = TimestampMode::kOriginal;
  std::string job;                         // empty = not resumable
  std::string checkpoint_topic = "thaw-replay-jobs";
  bool exactly_once = false;
  bool link_headers = true;
  bool dry_run = false;
  double rate_mb_per_s = 0;                // 0 = unlimited
  int64_t checkpoint_every = 50000;        // records per checkpoint / transaction
  // A checkpoint (and, exactly-once, a commit) also happens after this long
  // (0 = a quarter of transaction.timeout.ms, at most 10 s) or this many bytes.
  int64_t checkpoint_interval_ms = 0;
  int64_t checkpoint_bytes = 64ll << 20;
  // Work that was not proven durable (an aborted transaction, a delivery
  // without proof) is redone from the last checkpoint up to this many times.
  int max_redo = 20;
  // After a completed (non-follow) run, read the target topic back and check
  // every source offset arrived once and in order (VerifyReplay).
  bool verify = false;
  // A range that selects no records, or asked partitions the table does not
  // have, are errors (checked before anything touches Kafka); with
  // allow_empty they are warnings and an empty range replays nothing.
  bool allow_empty = false;
  // What the user asked for explicitly (--partitions; any of --partitions,
  // --from/--to-offset, --from/--to-time), as opposed to what --where implies
  // in `read`: only these are held against the table.
  std::optional<std::set<int32_t>> asked_partitions;
  bool range_given = false;
  // Progress::estimated_records from the data files' offset bounds and the
  // range (one more pass over the manifests; for a progress bar).
  bool estimate_progress_total = false;
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
  std::function<Result<std::shared_ptr<const iceberg::Table>>()> reload;
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const std::string&)> report;  // notices (skipped snapshots, warnings, redone work)
  // With a job: keeps the table's thaw-replay/JOB tag at the snapshot the
  // job has checkpointed -- set at its first checkpoint, moved at most once
  // a minute while following and when the run stops, removed when the job
  // completes -- so that `thaw maintain` keeps what the job still has to
  // replay (docs/maintain.md). Null: no tag (--metadata, a read-only
  // catalog). A failure is reported once; the replay goes on.
  std::function<Status(std::optional<int64_t> snapshot_id)> protect;
};

// What --verify found: per source partition, the source offsets the job's
// range selects against what a read_committed consumer sees in the topic
// (by the thaw.source.* link headers).
struct VerifyResult {
  bool ok = false;
  bool against_table = false;  // false: only order/duplicates/count could be checked
  int64_t partitions = 0;
  int64_t records = 0;         // distinct source records found in the topic
  int64_t expected = 0;
  int64_t missing = 0;
  int64_t duplicates = 0;
  int64_t out_of_order = 0;
  int64_t unexpected = 0;      // linked records the range does not select
  std::string first_problem;   // e.g. "partition 3: offset 1200 missing"
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
  int64_t redone = 0;              // times work was redone from the last checkpoint
  int64_t duplicate_offsets = 0;   // rows sharing a (partition, offset) with another (one was replayed)
  int64_t duplicates_differing = 0;
  std::map<int32_t, int64_t> next_offsets;
  std::vector<std::string> warnings;
  std::optional<VerifyResult> verify;
};

struct Progress {
  int64_t records = 0, bytes = 0;
  // The records the range selects: the plan's record count (files the range
  // may touch, before deletes), or with estimate_progress_total that scaled
  // by the share of each file's offsets the range keeps; exact only when
  // `estimate_exact`.
  int64_t estimated_records = 0;
  bool estimate_exact = false;
  int64_t skipped = 0;  // records read but not sent (--where, --exclude-offsets)
  double seconds = 0;
  std::map<int32_t, int64_t> next_offsets;  // source partition -> next offset to send
};

// Loads the last committed checkpoint of a job; nullopt if none.
Result<std::optional<Checkpoint>> LoadCheckpoint(const KafkaConfig& kafka, const std::string& checkpoint_topic,
                                                 const std::string& job, int timeout_ms);

// What --dry-run reports: the run's plan, checked as a run checks it
// (docs/replay.md#dry-run).
struct ReplayPlan {
  std::string table;
  std::optional<int64_t> snapshot_id;  // nullopt: an empty table
  std::string layout;
  std::vector<int32_t> partitions;
  std::string range;  // empty: all
  int64_t data_files = 0;
  int64_t data_files_skipped = 0;  // by pruning
  int64_t delete_files = 0;
  int64_t records_at_most = 0;  // planned files' record counts, before range and deletes
  std::string topic;
  std::string brokers;
  std::string partitioner;
  std::vector<std::string> warnings;
};

Result<ReplayPlan> PlanReplay(std::shared_ptr<const iceberg::Table> table, const ReplayOptions& options);

// The plan as --dry-run prints it without --json.
std::string FormatPlan(const ReplayPlan& plan);

// Reads `topic` back (read_committed) and checks the records linked to
// `table_name`: with a table (`table` non-null) against the offsets `options`
// select from it; without, only order, duplicates and the count
// `expected_records` (-1: unknown).
Result<VerifyResult> VerifyReplay(std::shared_ptr<const iceberg::Table> table, const std::string& table_name,
                                  const ReplayOptions& options, int64_t expected_records);

Result<ReplaySummary> RunReplay(std::shared_ptr<const iceberg::Table> table, const ReplayOptions& options,
                                const std::function<void(const Progress&)>& on_progress);

}  // namespace thaw::replay
