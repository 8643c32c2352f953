// An Iceberg table served as a Kafka topic: the kafka::server::TopicLog
// (kafka/server/topic_log.h) the Metadata, ListOffsets, Fetch and
// OffsetForLeaderEpoch handlers of `thaw serve` read through. Calls block
// (they read manifests, Parquet footers and row groups): the server runs
// them on its thread pool. Thread-safe.
//
// Partitions are the table's: partition_count() = the highest partition
// the table holds + 1 (at least 1; never shrinks while serving). A
// partition below it with no rows is empty: log start = high watermark = 0.
//
// Offsets are exact, not statistics: log start = the lowest offset present
// (deleted rows are not present), high watermark = the highest present + 1,
// last stable offset = high watermark (tables hold committed records only).
//
// Leader epochs (KIP-320; leader_epochs.h): 0 until a new snapshot
// removes offsets consumers may already have read -- a partition's high
// watermark falls below the highest one served (a rollback, a delete of
// the newest rows) -- and then a new epoch starting at the new high
// watermark. Metadata, ListOffsets and Fetch answer a partition's latest
// epoch and fence requests naming another; every record batch carries the
// epoch of its last record; OffsetForLeaderEpoch ends an old epoch where the
// next one starts. A consumer that read past the new end then detects the
// truncation and moves back to it, as after an unclean leader election,
// instead of resetting through auto.offset.reset. Appends (and compaction's
// replace snapshots) never bump it: only a refresh whose snapshots since the
// served one include another operation, or leave that lineage, compares the
// high watermarks. The epochs are kept in ServeOptions::state_dir across
// restarts (a restart compares the snapshot it served last with the current).
//
// Segments and batches. Each partition is cut into segments at the first
// offsets of its row groups (ReadPlan::RowGroups, by offset statistics): a
// segment is a run of row groups whose offset ranges overlap (at most 4
// unless more start at the same offset), covering [its first row group's
// first offset, the next segment's) -- the last one open-ended -- so a
// table whose row groups hold disjoint offset ranges has one segment per
// row group. Each segment is read with the RecordReader (the path inspect
// and replay use, so all three agree record for record) and cut into record
// batches v2 of at most ServeOptions::batch_bytes of keys, values and
// headers (a bigger record gets a batch of its own) and batch_records
// records, also cut where the timestamp type changes, where the timestamp
// changes in LogAppendTime records (such a batch carries one timestamp),
// and where an offset delta would not fit 31 bits. Batch boundaries depend
// only on the segment's rows, so batches are cached (batch_cache.h). When a
// segment's row groups hold several Kafka partitions (an unpartitioned
// Kafka Connect sink table), they are decoded once for all the partitions
// whose segment has the same range and row groups, and the cache is filled
// for each.
//
// Partitions whose row groups overlap so much that a segment cut this way
// would decode more than 8 of them (files compacted in another column's
// order, shuffled writers), or that have a row group of more than 65,536
// rows (a segment is encoded whole), are streamed instead: segments of about 4 MiB of
// records are cut as they are read, by readers kept open between Fetches,
// so a consumer reading on decodes each row group about once per pass and
// the cuts are cached for every consumer of the same range
// (streamed_segments.h).
//
// Offsets come from row-group statistics where those are exact (a file
// holding only the partition, without delete files); otherwise the first
// and last segments' offset columns are read (no values decoded).
//
// Refresh: RefreshIfChanged reloads the table through the catalog; a new
// snapshot replaces the plan for the calls that start after it. Cache
// entries of segments the snapshot did not change stay valid.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "thaw/catalog/catalog.h"
#include "thaw/common/status.h"
#include "thaw/common/thread_pool.h"
#include "thaw/kafka/protocol/errors.h"
#include "thaw/kafka/protocol/record_batch.h"
#include "thaw/kafka/protocol/wire.h"
#include "thaw/kafka/server/topic_log.h"
#include "thaw/records/decode_gate.h"
#include "thaw/records/layout.h"
#include "thaw/records/read_plan.h"
#include "thaw/serve/batch_cache.h"

namespace thaw::serve {

class StreamedSegments;
struct EarlyFetch;
struct SegmentReadOptions;
struct SegmentReadResult;

class LeaderEpochs;

// The epoch batches are encoded with (Fetch stamps a later one on the way out).
inline constexpr int32_t kLeaderEpoch = kafka::server::kInitialLeaderEpoch;

// What the server asks of a topic's log is defined beside the server; the
// names stay here for serve's own code and tests.
using PartitionOffsets = kafka::server::PartitionOffsets;
using FetchResult = kafka::server::FetchResult;
using OffsetAndTime = kafka::server::OffsetAndTime;

// One served topic: `thaw serve --topic NAME=NS.TABLE` or a [[topic]] table.
struct TopicConfig {
  std::string name;   // the Kafka topic name ([a-zA-Z0-9._-], at most 249 characters)
  std::string table;  // NS.TABLE in the catalog
  records::LayoutOptions layout;
  kafka::Compression compression = kafka::Compression::kNone;
  int compression_level = -1;  // codec default
  // The source topic served, for a table that holds several (required then;
  // records::ReadOptions::source_topic).
  std::optional<std::string> source_topic = std::nullopt;
  // serve --upstream only (`:prefer=table`): offsets both tiers hold are read
  // from the table (sparing the brokers' disks), once the upstream has let
  // the connection read the partition.
  bool prefer_table = false;
  // serve --upstream only (`:cold_suffix=S`): the table alone is also served
  // as topic NAME + S (merged/cold_views.h). Empty: no such view.
  std::string cold_suffix;
};

struct ServeOptions {
  // How often the server calls TopicRegistry::RefreshAll (the server's
  // timer; also refreshed when a consumer waits at the end of a partition).
  std::chrono::milliseconds refresh{5000};
  // RefreshIfChanged within this long of the previous reload's start
  // returns that reload's result without asking the catalog again (many
  // consumers waiting at the end of a topic make one reload, not one each).
  std::chrono::milliseconds min_check_interval{200};
  // Encoded batches kept in memory (all topics together).
  int64_t cache_bytes = int64_t{1} << 30;
  // A batch holds at most this many bytes of keys, values and headers ...
  int64_t batch_bytes = int64_t{256} << 10;
  // ... and at most this many records.
  int32_t batch_records = 16384;
  // Segments read ahead of consumers at once, per topic (0: none).
  int read_ahead = 2;
  // Passed to the RecordReader (ReadOptions::memory_budget, spill_dir).
  int64_t memory_budget = int64_t{512} << 20;
  std::string spill_dir;
  // Decoding in progress, all topics' readers together (TopicRegistry makes
  // one of memory_budget / 2; records::DecodeGate).
  std::shared_ptr<records::DecodeGate> decode_gate;
  // Leader epochs are kept in STATE_DIR/epochs/TOPIC.json; empty: in memory.
  std::string state_dir;
  // The partitionLeaderEpoch cached batches are encoded with. -1 (serve
  // --upstream): the batches carry no epoch, as the tiered proxy sends them
  // (merged/tiering.h), so they leave the cache as they are; Fetch stamps no
  // later epoch on them either.
  int32_t batch_leader_epoch = kafka::server::kInitialLeaderEpoch;
};

class ServedTopic : public kafka::server::TopicLog {
 public:
  // Loads the table, plans its current snapshot and checks it is
  // Kafka-shaped (a layout with an offset column). Errors name the topic
  // and the table.
  static Result<std::shared_ptr<ServedTopic>> Make(std::shared_ptr<catalog::Catalog> catalog, TopicConfig config,
                                                   const ServeOptions& options, std::shared_ptr<BatchCache> cache);
  ~ServedTopic() override;

  const std::string& name() const override { return config_.name; }
  const TopicConfig& config() const { return config_; }
  // Stable across restarts and snapshots: derived from the table's uuid (its
  // location for a v1 table without one) and the topic name (RFC 9562
  // version 8 layout; never the null or the metadata topic id).
  kafka::Uuid topic_id() const override;
  const std::array<uint8_t, 16>& topic_id_bytes() const { return topic_id_; }
  int32_t partition_count() const override;
  // The snapshot served now (nullopt for a table without snapshots).
  std::optional<int64_t> snapshot_id() const;

  // Log start and high watermark. NotFound for a partition outside
  // [0, partition_count()).
  Result<PartitionOffsets> Offsets(int32_t partition) override;
  // ListOffsets by time: the first offset (in offset order) whose timestamp
  // is >= ts_ms, with that record's timestamp; nullopt when none is.
  Result<std::optional<OffsetAndTime>> OffsetForTime(int32_t partition, int64_t ts_ms) override;
  // ListOffsets -3 (MAX_TIMESTAMP): the offset and timestamp of the record
  // with the greatest timestamp (the lowest offset among equals); nullopt
  // for an empty partition.
  Result<std::optional<OffsetAndTime>> MaxTimestamp(int32_t partition) override;
  // Whole batches from the one containing fetch_offset (or, if that offset
  // was deleted, the first after it), the first always complete (KIP-74),
  // then more while the total stays <= max_bytes.
  // A consumer reading on finds the next segment decoded: after each Fetch
  // the segment that follows what it returned is read ahead in the
  // background (at most ServeOptions::read_ahead at once per topic).
  Result<FetchResult> Fetch(int32_t partition, int64_t fetch_offset, int64_t max_bytes) override;
  // Starts reading the segment holding `offset` in the background (the
  // Fetch handler asks for every partition of a request but the first, so
  // they decode in parallel while it fills the first). Returns at once; a
  // no-op when the segment is cached or being read, or the read-ahead is
  // full.
  void ReadAhead(int32_t partition, int64_t offset, int64_t max_bytes) override;

  // KIP-320 (above): the partition's latest leader epoch, the epoch of the
  // record at `offset`, and OffsetForLeaderEpoch's (epoch, end offset) for
  // `requested` ((-1, -1) for an epoch above the latest, or -1).
  int32_t LeaderEpoch(int32_t partition) const override;
  int32_t LeaderEpochAt(int32_t partition, int64_t offset) const override;
  Result<std::pair<int32_t, int64_t>> EndOffsetForEpoch(int32_t partition, int32_t requested) override;
  // The error for a request naming `current` (-1: not checked) as the
  // partition's epoch: FENCED_LEADER_EPOCH when older, UNKNOWN_LEADER_EPOCH
  // when newer.
  kafka::ErrorCode CheckLeaderEpoch(int32_t partition, int32_t current) const override;

  // Reloads the table's metadata through the catalog; a new current
  // snapshot replaces the plan. Concurrent callers share one reload, and a
  // call within ServeOptions::min_check_interval of the last reload's start
  // returns its result. On an error the previous snapshot stays served.
  Status RefreshIfChanged() override;

  // DescribeConfigs: compression.type (the codec batches are encoded with)
  // and thaw.table (the table served).
  std::vector<std::pair<std::string, std::string>> ConfigOverrides() const override;

  // Work done so far (tests, logs): segments decoded, row groups and rows
  // the RecordReader decoded for them, batches encoded.
  struct Stats {
    int64_t segment_reads = 0;    // RecordReader runs for segments
    int64_t segments_filled = 0;  // segments produced by them (> reads when partitions share row groups)
    int64_t row_groups_decoded = 0;
    int64_t rows_decoded = 0;
    int64_t batches_encoded = 0;
    int64_t offset_reads = 0;  // metadata-only reads of a segment's first and last offsets
    int64_t refreshes = 0;     // new snapshots swapped in
    // Streamed partitions (above): segments cut as read, readers opened,
    // and segments read by a reader left where its previous segment ended.
    int64_t segments_cut = 0;
    int64_t cursors_opened = 0;
    int64_t cursors_continued = 0;
    int64_t cursors_open = 0;  // open now (reading or idle), each holding its readers' buffers
    int64_t read_aheads = 0;  // segment reads started ahead of consumers
    int64_t read_aheads_skipped = 0;  // ... not started: the cache had no room without evicting unread segments
    int64_t pressure_reads = 0;  // Fetches read as streamed for want of room for their whole segment
    int64_t early_answers = 0;  // Fetches answered before the rest of their segment was encoded
    int64_t seek_reads = 0;     // Fetches answered by decoding only their own rows (SeekRead)
  };
  Stats stats() const;

  struct State;  // one snapshot's plan and per-partition index (served_topic.cc)

 private:
  ServedTopic(std::shared_ptr<catalog::Catalog> catalog, TopicConfig config, ServeOptions options,
              std::shared_ptr<BatchCache> cache);
  std::shared_ptr<State> state() const;
  Result<PartitionOffsets> OffsetsIn(State& st, int32_t partition);
  // Segment i of the partition: cached, or read with every other partition
  // whose segment i' has the same range and row groups (decoded once).
  // With `early`, the Fetch waiting for it gets its batches as soon as they
  // are encoded (segment_reader.h's EarlyFetch).
  Result<std::shared_ptr<const Segment>> LoadSegment(State& st, int32_t partition, size_t i,
                                                     const EarlyFetch* early = nullptr);
  // Segment i read on the load pool for a Fetch from `fetch_offset`: the
  // batches it returns (whole batches from the one holding fetch_offset,
  // within max_bytes) as soon as they are encoded, while the rest of the
  // segment is encoded for the cache; or the whole segment, when another
  // read filled it first. `reaches_end`: they run to the segment's end.
  struct EarlyBatches {
    std::vector<EncodedBatch> batches;
    bool reaches_end = true;
  };
  Result<EarlyBatches> LoadForFetch(const std::shared_ptr<State>& st, int32_t partition, size_t i,
                                    int64_t fetch_offset, int64_t max_bytes);
  // A Fetch into segment i, neither cached nor being read, answered by
  // decoding only the rows it returns (records::ReadOptions::require_narrow:
  // the data pages that hold them); none when the segment is small, the
  // Fetch is near its start, or its row groups cannot be read in part
  // (offsets not ascending, an object store), and then the segment is read
  // whole.
  Result<std::optional<Segment>> SeekRead(State& st, int32_t partition, size_t i, int64_t fetch_offset,
                                          int64_t max_bytes);
  SegmentReadOptions SegmentOptions() const;
  // The bytes per record of the segments read so far (SeekRead's estimate).
  void LearnRecordBytes(const SegmentReadResult& read);
  ThreadPool& LoadPool();
  // Segment i read for the cache on the load pool, after a seek read
  // answered from part of it (queued once per segment; errors logged).
  void LoadInBackground(const std::shared_ptr<State>& st, int32_t partition, size_t i);
  // o's leader epoch; the high watermark counts as served when st is current.
  void Served(const State& st, int32_t partition, PartitionOffsets* o);
  // A partition's high watermark: the highest served, and the new snapshot's below it.
  struct Lowering {
    int64_t served = 0;
    int64_t now = 0;
  };
  // The partitions served whose high watermark `next` lowers, when its
  // snapshot may have removed rows since `from_snapshot`; empty otherwise.
  Result<std::map<int32_t, Lowering>> Lowered(State& next, std::optional<int64_t> from_snapshot);
  // Starts the new epochs (mu_ held) and logs them.
  void Truncate(const State& next, const std::map<int32_t, Lowering>& lowered);
  // Runs `read` on the read-ahead pool unless read_ahead reads are running.
  void Ahead(std::function<void()> read);
  // No room in the cache for a segment as big as the last one read without
  // evicting segments consumers are still in: segments not cached are read
  // streamed (Fetch).
  bool Pressed() const;

  std::shared_ptr<catalog::Catalog> catalog_;
  catalog::TableIdentifier id_;
  const TopicConfig config_;
  const ServeOptions options_;
  std::shared_ptr<BatchCache> cache_;
  std::array<uint8_t, 16> topic_id_{};

  mutable std::mutex mu_;  // guards state_ and partition_count_
  std::shared_ptr<State> state_;
  int32_t partition_count_ = 1;

  std::mutex refresh_mu_;  // one reload at a time
  uint64_t refresh_generation_ = 0;
  Status last_refresh_;
  std::chrono::steady_clock::time_point last_refresh_start_{};

  // First and last offsets of segments whose offsets were read (not
  // decoded), by segment key: kept across snapshots, so a refresh after an
  // append reads only the new last segments' offsets.
  std::mutex bounds_mu_;
  std::map<std::string, std::optional<std::pair<int64_t, int64_t>>> bounds_;

  std::unique_ptr<LeaderEpochs> epochs_;
  struct Counters;
  std::unique_ptr<Counters> counters_;
  std::unique_ptr<StreamedSegments> streams_;
  std::atomic<int> ahead_running_{0};
  std::atomic<int64_t> record_bytes_{1024};  // LearnRecordBytes
  std::atomic<int64_t> segment_bytes_{0};    // the last segment read whole: what the next one may take
  std::atomic<bool> stopping_{false};
  std::mutex background_mu_;
  std::set<std::string> background_;  // keys of the segments LoadInBackground queued and not yet read
  // Segment reads for waiting Fetches (LoadForFetch, LoadInBackground), made on first use.
  std::once_flag loads_once_;
  std::unique_ptr<ThreadPool> loads_;
  std::unique_ptr<ThreadPool> ahead_;  // last: joined first, while what its reads use is alive
};

// The topic id of `table_uuid` (or location) and topic name: exposed for tests.
std::array<uint8_t, 16> DeriveTopicId(std::string_view table_uuid, std::string_view topic);

}  // namespace thaw::serve
