// K-way merge of record streams that are each in offset order, with the
// reader's duplicate rule applied as the streams meet.
//
// The record reader uses it for a partition whose files overlap in offset
// range and are too big to decode at once: every input (a data file sorted
// by offset, or a sorted run spilled to disk) yields one decoded chunk at a
// time, so memory is inputs x one chunk, whatever the partition size.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/records/record.h"

namespace thaw::records {

// Duplicate offsets (the same partition and offset more than once in a
// read): how many rows were dropped, and how many of those differ from the
// row kept in key, value, headers, timestamp or timestamp type.
struct DuplicateStats {
  int64_t duplicates = 0;
  int64_t differing = 0;
  DuplicateStats& operator+=(const DuplicateStats& o) {
    duplicates += o.duplicates;
    differing += o.differing;
    return *this;
  }
};

// True if two records carry the same Kafka contents (key, value, headers in
// order, timestamp and timestamp type); partition and offset are not compared.
bool SameContent(const Record& a, std::span<const Header> ha, const Record& b,
                 std::span<const Header> hb);

// One decoded piece of an input, in offset order.
struct RecordChunk {
  std::vector<Record> records;
  std::vector<Header> headers;
  std::vector<std::shared_ptr<const void>> keepalive;
};

class MergeInput {
 public:
  virtual ~MergeInput() = default;
  // Fills `out` (cleared first) with the next chunk; false at the end.
  virtual Result<bool> Next(RecordChunk* out) = 0;
  // Where the rows come from, for error messages.
  virtual std::string Describe() const = 0;
};

class KWayMerger {
 public:
  struct Input {
    std::unique_ptr<MergeInput> source;
    // Duplicate priority: of rows with equal offsets the one from the input
    // with the highest rank wins; equal ranks: the lower input index wins.
    int64_t rank = 0;
  };
  static Result<std::unique_ptr<KWayMerger>> Make(std::vector<Input> inputs);
  ~KWayMerger();

  // Fills `out` with up to `max_records` records in offset order, one per
  // offset (duplicates dropped and counted into `dups`); false at the end.
  Result<bool> Next(size_t max_records, RecordChunk* out, DuplicateStats* dups);
  size_t num_inputs() const;

 private:
  struct State;
  explicit KWayMerger(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace thaw::records
