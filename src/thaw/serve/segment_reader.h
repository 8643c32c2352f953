// Reading one segment -- an offset range [lo, hi) of one or more Kafka
// partitions -- with the RecordReader and cutting each partition's records
// into record batches v2 (served_topic.h explains segments). Several
// partitions are read by one RecordReader (ReadOrder::kPerPartition), so a
// row group holding them all is decoded once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "thaw/common/status.h"
#include "thaw/kafka/protocol/record_batch.h"
#include "thaw/records/read_plan.h"
#include "thaw/records/record_reader.h"
#include "thaw/serve/batch_cache.h"

namespace thaw::serve {

struct BatchCut {
  int64_t max_bytes = int64_t{256} << 10;  // keys + values + headers per batch (one bigger record: a batch alone)
  int32_t max_records = 16384;
};

struct SegmentReadOptions {
  BatchCut cut;
  kafka::BatchOptions batch;  // compression, leader epoch
  int64_t memory_budget = int64_t{512} << 20;
  std::string spill_dir;
};

struct SegmentReadResult {
  std::map<int32_t, Segment> segments;  // one per partition asked (possibly empty)
  records::RecordReader::DecodeStats decode;
  int64_t batches = 0;
};

// Reads [lo, hi) of `partitions` from `plan` (hi = INT64_MAX: to the end).
Result<SegmentReadResult> ReadSegments(const std::shared_ptr<const records::ReadPlan>& plan,
                                       const std::set<int32_t>& partitions, int64_t lo, int64_t hi,
                                       const SegmentReadOptions& options);

// Cuts one partition's records (given in ascending offset order, possibly
// from many RecordBatches) into batches appended to a Segment. A record is
// copied as a view (its bytes stay owned by the source batch's keepalive)
// until its batch is encoded.
class BatchCutter {
 public:
  BatchCutter(const BatchCut& cut, const kafka::BatchOptions& batch, Segment* out)
      : cut_(cut), batch_(batch), out_(out) {}
  // Adds source.records[begin, end) (all of this cutter's partition).
  Status Add(const records::RecordBatch& source, size_t begin, size_t end);
  // Encodes the pending records.
  Status Finish();
  int64_t batches() const { return batches_; }

 private:
  Status Flush();
  BatchCut cut_;
  kafka::BatchOptions batch_;
  Segment* out_;
  records::RecordBatch pending_;
  int64_t pending_bytes_ = 0;
  int64_t batches_ = 0;
};

}  // namespace thaw::serve
