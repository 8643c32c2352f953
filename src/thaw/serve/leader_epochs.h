// Leader epochs of one served topic (KIP-320), so that a consumer notices
// when a new snapshot removed offsets it may already have read -- a
// rollback, a delete of the newest rows -- the way it notices truncation
// after an unclean leader election, instead of falling into
// auto.offset.reset (which with `earliest` re-reads the whole partition).
//
// Per partition: a history of (epoch, start offset), as Kafka's leader-epoch
// cache keeps it (start offsets and epochs both ascending), starting at
// epoch 0 from offset 0, and the highest high watermark served in the
// current epoch. Truncate(p, hw) with hw below it starts a new epoch at hw:
// entries starting at or after hw are dropped (as a Kafka replica drops
// them when it truncates) and the partition's highest epoch ever + 1 begins
// at hw.
// Record batches at or after an epoch's start carry it; Metadata, Fetch and
// ListOffsets answer the latest; OffsetForLeaderEpoch answers EndOffsetFor.
//
// Persisted (JSON, replaced atomically) so that epochs never go backwards
// across restarts (a client ignores Metadata whose epoch is older than the
// one it knows): DIR/epochs/TOPIC.json, with the table's uuid -- a file
// written for another table under the same topic name is ignored -- and the
// snapshot served when it was written. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "thaw/common/status.h"

namespace thaw::serve {

struct EpochStart {
  int32_t epoch = 0;
  int64_t start_offset = 0;
  bool operator==(const EpochStart&) const = default;
};

// The epoch of the record at `offset` in a history (ascending starts): the
// last entry starting at or before it (the first entry's before any).
int32_t EpochAt(const std::vector<EpochStart>& history, int64_t offset);

class LeaderEpochs {
 public:
  // Kept in memory only (path empty) or in `path`, loaded from it when it
  // exists and was written for `table_uuid`. A file that does not parse is
  // an error naming it (delete it to start the topic's epochs over).
  static Result<std::unique_ptr<LeaderEpochs>> Open(std::string path, std::string table_uuid);

  // The latest epoch of partition p (0 until a truncation).
  int32_t Current(int32_t p) const;
  // The epoch of the record at `offset`: the last entry starting at or before it.
  int32_t EpochAt(int32_t p, int64_t offset) const;
  std::vector<EpochStart> History(int32_t p) const;
  // OffsetForLeaderEpoch for `requested`, the log ending at `high_watermark`:
  // the requested epoch if it is the latest, with the high watermark; else
  // the greatest epoch <= requested (requested itself when it is older than
  // every entry) with the start of the first epoch after it; (-1, -1) for
  // an epoch above the latest or -1.
  std::pair<int32_t, int64_t> EndOffsetFor(int32_t p, int32_t requested, int64_t high_watermark) const;

  // The high watermark served for p now (raises the highest seen).
  void Observe(int32_t p, int64_t high_watermark);
  // p's high watermark in a new snapshot: when below the highest served in
  // the current epoch, a new epoch starts there. Returns the new epoch, or
  // nullopt when nothing was removed.
  std::optional<int32_t> Truncate(int32_t p, int64_t high_watermark);
  // Partitions with a served high watermark, and that high watermark.
  std::map<int32_t, int64_t> Observed() const;

  // The snapshot the file was written for (nullopt: never written, or no snapshot).
  std::optional<int64_t> saved_snapshot() const;
  // Writes the file (a no-op in memory, or when nothing changed since the
  // last Save for the same snapshot).
  Status Save(std::optional<int64_t> snapshot_id);

 private:
  struct Partition {
    std::vector<EpochStart> history{{0, 0}};  // never empty
    int64_t high_watermark = 0;               // highest served in the current epoch
    int32_t max_epoch = 0;                    // the highest epoch it ever had (never reused)
  };
  LeaderEpochs(std::string path, std::string table_uuid) : path_(std::move(path)), table_uuid_(std::move(table_uuid)) {}
  Status Load();

  const std::string path_;
  const std::string table_uuid_;
  mutable std::mutex mu_;
  std::map<int32_t, Partition> parts_;
  std::optional<int64_t> saved_snapshot_;
  bool dirty_ = false;
};

}  // namespace thaw::serve
