// Spill files of the record reader's external sort: sorted runs of decoded
// rows written as Arrow IPC files in a private directory that is removed
// with its owner.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/table.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "thaw/common/status.h"

namespace thaw::records {

class SpillDir {
 public:
  // Creates a private directory (mode 0700) under `base`; empty base =
  // $TMPDIR, or /tmp.
  static Result<std::unique_ptr<SpillDir>> Make(const std::string& base);
  ~SpillDir();  // removes the directory and what is left in it

  const std::string& path() const { return path_; }
  std::string NewFileName();

 private:
  std::string path_;
  std::atomic<int64_t> next_{0};
};

// Writes a run to `path` as an Arrow IPC file, a batch at a time (rows
// already in run order): for input that is in order already, written as it
// is decoded.
class RunWriter {
 public:
  static Result<std::unique_ptr<RunWriter>> Open(const std::string& path,
                                                 const std::shared_ptr<arrow::Schema>& schema);
  ~RunWriter();
  Status Write(const arrow::RecordBatch& batch);
  // Returns the bytes written.
  Result<int64_t> Close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes `table` (already in run order) to `path` as an Arrow IPC file in
// batches of about `batch_rows` rows. Returns the bytes written.
Result<int64_t> WriteRun(const std::string& path, const arrow::Table& table, int64_t batch_rows);

// Reads a run back one batch at a time. With keep_open the file stays open
// and is unlinked at once (its space is freed when the reader closes);
// without, it is opened for each batch -- no descriptor held between
// batches, for merges of more runs than the process may keep open -- and
// removed at the end. Either way the file is gone when the reader is.
class RunReader {
 public:
  static Result<std::unique_ptr<RunReader>> Open(const std::string& path, bool keep_open = true);
  ~RunReader();
  // The next batch, or null at the end.
  Result<std::shared_ptr<arrow::RecordBatch>> Next();
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  bool unlinked_ = false;
};

// Rows of `batches` (all of one schema) in the order given by `rows`, a
// list of (batch index, row index): the sorted run to spill.
Result<std::shared_ptr<arrow::Table>> GatherRows(
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
    const std::vector<std::pair<uint32_t, int64_t>>& rows);

}  // namespace thaw::records
