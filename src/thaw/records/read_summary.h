// What a read selects, in the forms every face shares: the canonical text of
// its range (a replay job resumes only with the same one) and per-partition
// statistics of the records it yields (inspect's summary; later serve's
// describe and offset calls).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/records/read_plan.h"
#include "thaw/records/record.h"
#include "thaw/records/record_merge.h"
#include "thaw/records/record_reader.h"

namespace thaw::records {

// "0,3-5" for {0, 3, 4, 5}.
std::string FormatPartitionSet(const std::set<int32_t>& partitions);

// The range `options` select (source topic, partitions, offsets, times), the
// number of excluded offsets and the canonical --where, as one line of text:
// "source-topic=T partitions=0,3-5 from-offset=10 to-offset=20 from-time=MS to-time=MS
// exclude=N offsets where=EXPR"; empty for everything.
std::string CanonicalRange(const ReadOptions& options, size_t exclusions = 0, std::string_view where = {});

// One partition's records, as a read yields them.
struct PartitionSummary {
  int64_t records = 0;
  int64_t min_offset = 0, max_offset = 0;
  int64_t min_timestamp_ms = 0, max_timestamp_ms = 0;
  // Missing offsets between min and max, inclusive ranges: the first
  // kMaxGaps; gap_count counts all.
  std::vector<std::pair<int64_t, int64_t>> gaps;
  int64_t gap_count = 0;
};

class ReadSummary {
 public:
  static constexpr size_t kMaxGaps = 1000;
  // Records of each partition must come in offset order (as a
  // RecordReader yields them; partitions may interleave).
  void Add(const Record& r);
  const std::map<int32_t, PartitionSummary>& partitions() const { return partitions_; }
  int64_t records() const { return records_; }

 private:
  std::map<int32_t, PartitionSummary> partitions_;
  int64_t records_ = 0;
};

// A table's records summarised: the plan read, the per-partition summary,
// duplicates dropped and what was decoded.
struct TableSummary {
  std::shared_ptr<const ReadPlan> plan;
  ReadSummary summary;
  DuplicateStats duplicates;
  RecordReader::DecodeStats decoded;
  iceberg::DeletionVectorCache::Stats deletion_vectors;  // of the last read
};

// Reads what `options` select and summarises the records `filter` keeps (all
// when null). Without a filter only the partition, offset and timestamp
// columns are decoded (ReadOptions::metadata_only); if duplicate offsets turn
// up, the read is repeated with every column to tell which differ.
using SummaryFilter = std::function<bool(const RecordBatch&, const Record&)>;
Result<TableSummary> Summarize(std::shared_ptr<const iceberg::Table> table, ReadOptions options,
                               const SummaryFilter& filter = nullptr);
// The same over a plan made earlier with `options` (ReadPlan::Make).
Result<TableSummary> Summarize(std::shared_ptr<const ReadPlan> plan, ReadOptions options,
                               const SummaryFilter& filter = nullptr);

}  // namespace thaw::records
