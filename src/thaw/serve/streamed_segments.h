// Segments of partitions whose files overlap in offset range (served_topic.h
// decides which): cut as they are read, by SegmentCursors kept open between
// Fetches, instead of by row-group statistics.
//
// A partition compacted in another column's order (or written by a writer
// that shuffles) has row groups that all span most of its offsets. Cut by
// statistics, every segment would decode all of them; here a consumer
// reading on continues the reader that cut its previous segment, so one
// pass over the partition decodes each row group about once, and the
// segments it cuts ([lo, hi), about `segment_bytes` of records each) are
// cached for every other consumer reading the same range.
//
// Cuts are remembered per partition (lo -> hi, and a digest of the row
// groups that may hold records of [lo, hi)) across snapshots: a snapshot
// that only appends later offsets leaves them, and their cache keys, valid;
// one that rewrites or deletes inside a range gives it a new digest, and the
// cut is forgotten. A cut whose segment was evicted is read again to the
// same hi. A new cut stops where the next known cut starts.
//
// Cursors: at most max_cursors (64: one per partition of a consumer reading
// many partitions at once, when the cache has no room for their segments),
// least recently used closed first. Each gets a share of memory_budget when
// it opens (half of what the others leave, at least 1/128 of it and 4 MiB),
// so all together stay within the budget + max(budget / 2, 256 MiB).
// Two consumers asking for the same new cut wait for one read.
#pragma once

#include <cstdint>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/records/read_plan.h"
#include "thaw/serve/batch_cache.h"
#include "thaw/serve/digest.h"
#include "thaw/serve/segment_reader.h"

namespace thaw::serve {

// What a row group of a plan is made of, for digests: file path, row
// group, sequence numbers and the delete files that apply.
std::string RowGroupDescription(const records::PlannedFile& f, int row_group);

// One snapshot's view of one partition, as a SegmentAt call needs it.
struct StreamedPartition {
  std::shared_ptr<const records::ReadPlan> plan;
  int32_t partition = 0;
  std::string key_prefix;  // topic, table, compression, layout (ServedTopic::State)
  std::shared_ptr<const std::vector<records::RowGroupRef>> row_groups;
};

class StreamedSegments {
 public:
  struct Options {
    SegmentReadOptions read;  // batch cut, compression, spill dir; read.memory_budget = all cursors together
    size_t max_cursors = 64;
    int64_t segment_bytes = int64_t{4} << 20;
  };
  struct Stats {
    int64_t cursors_opened = 0;
    int64_t cursors_continued = 0;  // segments cut by a cursor left where the previous one ended
    int64_t cursors_closed = 0;     // evicted (LRU) or dropped at a refresh
    int64_t segments_cut = 0;
    int64_t waits = 0;  // asked for a cut another consumer was reading
    records::RecordReader::DecodeStats decode;
    int64_t batches = 0;
  };

  StreamedSegments(Options options, std::shared_ptr<BatchCache> cache);
  ~StreamedSegments();

  // The segment holding `offset`, or the first records after it; nullptr
  // when the partition has no record at or after `offset`. A segment may be
  // empty (hi > lo, no records): the caller goes on at its hi.
  // `target_bytes` > 0: a new cut ends at about that many bytes of records
  // instead of Options::segment_bytes (a Fetch's own share, when the cache
  // has no room for bigger cuts: served_topic.cc).
  Result<std::shared_ptr<const Segment>> SegmentAt(const StreamedPartition& part, int64_t offset,
                                                   int64_t target_bytes = 0);

  // Whether an idle cursor of this plan and partition stands at `offset`
  // (a consumer's previous Fetch was cut by it: its next one continues it).
  bool HasCursorAt(const StreamedPartition& part, int64_t offset) const;

  // Closes the idle cursors of other plans than `current` (a refresh).
  void Retain(const records::ReadPlan* current);

  Stats stats() const;

 private:
  struct Cut {
    int64_t hi = 0;
    std::string digest;
  };
  std::string DigestOf(const StreamedPartition& part, int64_t lo, int64_t hi) const;
  std::string KeyOf(const StreamedPartition& part, int64_t lo, int64_t hi, const std::string& digest) const;
  // An idle cursor of this plan and partition at `lo`, or a new one.
  Result<std::unique_ptr<SegmentCursor>> TakeCursor(const StreamedPartition& part, int64_t lo);
  void ReturnCursor(std::unique_ptr<SegmentCursor> c);
  void DropCursor(std::unique_ptr<SegmentCursor> c);  // closes it, returning its share of the budget
  Result<Segment> ReadWith(SegmentCursor& c, int64_t limit, int64_t target);
  void CountLocked(SegmentCursor& c);   // adds what c decoded since last counted to stats_
  void ForgetLocked(SegmentCursor& c);  // a cursor closing: counted, its budget share returned

  const Options options_;
  std::shared_ptr<BatchCache> cache_;
  mutable std::mutex mu_;
  std::map<int32_t, std::map<int64_t, Cut>> cuts_;  // partition -> lo -> cut
  struct Idle {
    std::unique_ptr<SegmentCursor> cursor;
  };
  std::list<Idle> idle_;                             // front = most recently used
  std::map<const SegmentCursor*, int64_t> budgets_;  // every open cursor's share, idle or busy
  int64_t budget_used_ = 0;
  // New cuts being read: (partition, lo) -> their segment.
  std::map<std::pair<int32_t, int64_t>, std::shared_future<Result<std::shared_ptr<const Segment>>>> reading_;
  Stats stats_;
};

}  // namespace thaw::serve
