// Reading one segment -- an offset range [lo, hi) of one or more Kafka
// partitions -- with the RecordReader and cutting each partition's records
// into record batches v2 (served_topic.h explains segments). Several
// partitions are read by one RecordReader (ReadOrder::kPerPartition), so a
// row group holding them all is decoded once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

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
  std::shared_ptr<records::DecodeGate> decode_gate;  // records::ReadOptions::decode_gate
  // Fail with kUnsupported rather than decode a whole row group the range
  // cuts (records::ReadOptions::require_narrow): serve's seek reads.
  bool require_narrow = false;
};

// A Fetch waiting for the segment it reads (served_topic.cc): once the
// segment's rows are read and its batches cut, the batches this Fetch
// returns -- from the one holding `fetch_offset`, whole batches while they
// stay within `max_bytes` (the first always, KIP-74) -- are encoded first and
// handed to `deliver`; the rest of the segment is encoded after, and the
// whole segment (the same batches) is the read's result, for the cache.
// `reaches_end`: the batches handed over run to the segment's end (the Fetch
// may take more from the next segment). Not called when the segment has no
// batch at or after `fetch_offset`.
struct EarlyFetch {
  int32_t partition = 0;
  int64_t fetch_offset = 0;
  int64_t max_bytes = 0;
  std::function<void(std::vector<EncodedBatch> batches, bool reaches_end)> deliver;
};

struct SegmentReadResult {
  std::map<int32_t, Segment> segments;  // one per partition asked (possibly empty)
  records::RecordReader::DecodeStats decode;
  int64_t batches = 0;
};

// Reads [lo, hi) of `partitions` from `plan` (hi = INT64_MAX: to the end).
// With `early` (one of `partitions`), its Fetch's batches are handed over
// before the rest of its segment is encoded (EarlyFetch).
Result<SegmentReadResult> ReadSegments(const std::shared_ptr<const records::ReadPlan>& plan,
                                       const std::set<int32_t>& partitions, int64_t lo, int64_t hi,
                                       const SegmentReadOptions& options, const EarlyFetch* early = nullptr);

// A RecordReader of one partition kept open between segments, for
// partitions whose files overlap in offset range so much that a segment
// cut by row-group statistics would decode most of the partition (files
// compacted in another column's order, say): there each segment is cut as
// the cursor reads forward, and a consumer reading on continues the same
// reader, so a pass over the partition decodes each row group about once.
class SegmentCursor {
 public:
  // Reads `partition` of `plan` from offset `from` on (options.memory_budget
  // is this reader's own).
  static Result<std::unique_ptr<SegmentCursor>> Make(const std::shared_ptr<const records::ReadPlan>& plan,
                                                     int32_t partition, int64_t from,
                                                     const SegmentReadOptions& options);
  // The offset the next Read starts at.
  int64_t next() const { return next_; }
  int32_t partition() const { return partition_; }
  const records::ReadPlan* plan() const { return plan_.get(); }
  // The segment [next(), hi): records below `limit` (INT64_MAX: none), and
  // when `target_bytes` > 0 no more once the records read reach it (the
  // rest of the reader's batch is kept for the next Read). hi is `limit` when a record at or past it
  // was seen, else the last record's offset + 1 (the end of the partition,
  // or the cut at target_bytes); next() becomes hi. An empty segment with
  // hi = lo: nothing at or after next().
  Result<Segment> Read(int64_t limit, int64_t target_bytes);
  records::RecordReader::DecodeStats decode_stats() const { return reader_->decode_stats(); }
  // What the reader decoded since the last call (its read-ahead included).
  records::RecordReader::DecodeStats TakeDecodeStats();
  int64_t batches() const { return batches_; }

 private:
  SegmentCursor() = default;
  std::shared_ptr<const records::ReadPlan> plan_;
  int32_t partition_ = 0;
  SegmentReadOptions options_;
  std::unique_ptr<records::RecordReader> reader_;
  records::RecordBatch pending_;  // read, not yet cut: pending_.records[pos_..]
  size_t pos_ = 0;
  bool done_ = false;
  int64_t next_ = 0;
  int64_t batches_ = 0;
  records::RecordReader::DecodeStats counted_;
};

// Cuts one partition's records (given in ascending offset order, possibly
// from many RecordBatches) into batches appended to a Segment. A record is
// copied as a view (its bytes stay owned by the source batch's keepalive)
// until its batch is encoded. Where a batch ends depends only on the records
// (BatchCut), never on when it is encoded.
class BatchCutter {
 public:
  // `defer`: batches are cut but not encoded until Encode(k) / EncodeAll()
  // (so that some can be encoded before others: EarlyFetch).
  BatchCutter(const BatchCut& cut, const kafka::BatchOptions& batch, Segment* out, bool defer = false)
      : cut_(cut), batch_(batch), out_(out), defer_(defer) {}
  // Adds source.records[begin, end) (all of this cutter's partition).
  Status Add(const records::RecordBatch& source, size_t begin, size_t end);
  // Cuts (and, unless deferred, encodes) the pending records.
  Status Finish();
  int64_t batches() const { return batches_; }

  // Deferred only, after Finish: the batches cut, by their last offsets ...
  size_t cut_count() const { return cuts_.size(); }
  int64_t cut_last_offset(size_t k) const {
    return encoded_[k] ? encoded_[k]->last_offset : cuts_[k].records.back().offset;
  }
  // ... batch k encoded (once; it stays in place) ...
  Result<const EncodedBatch*> Encode(size_t k);
  // ... and every batch not yet encoded, then all of them appended to the
  // Segment in offset order.
  Status EncodeAll();

 private:
  Status Flush();
  Result<EncodedBatch> EncodeOne(const records::RecordBatch& records);
  BatchCut cut_;
  kafka::BatchOptions batch_;
  Segment* out_;
  bool defer_ = false;
  records::RecordBatch pending_;
  int64_t pending_bytes_ = 0;
  int64_t batches_ = 0;
  std::vector<records::RecordBatch> cuts_;            // deferred: the records of each batch cut
  std::vector<std::optional<EncodedBatch>> encoded_;  // deferred: batch k once encoded (its records then dropped)
};

}  // namespace thaw::serve
