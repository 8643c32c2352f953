// clang-format off
// Arrow's headers first: they use Arrow's RETURN_NOT_OK, which Thaw's status.h replaces.
#include <arrow/array/builder_primitive.h>
#include <arrow/compute/api_vector.h>
#include <arrow/datum.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>
#include <arrow/ipc/writer.h>
#include <arrow/util/compression.h>

#include "thaw/records/spill.h"
// clang-format on

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "thaw/parquet/arrow_status.h"

namespace thaw::records {

Result<std::unique_ptr<SpillDir>> SpillDir::Make(const std::string& base) {
  std::string dir = base;
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    dir = tmp && *tmp ? tmp : "/tmp";
  }
  std::string tmpl = dir + "/thaw-spill-XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    return Status::IOError(
        "cannot create a spill directory in {}: {} (give a writable directory with --spill-dir)",
        dir, std::strerror(errno));
  }
  auto d = std::unique_ptr<SpillDir>(new SpillDir());
  d->path_ = tmpl;
  return d;
}

SpillDir::~SpillDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string SpillDir::NewFileName() { return path_ + "/run-" + std::to_string(next_++) + ".arrow"; }

struct RunWriter::Impl {
  std::string ctx;
  std::shared_ptr<arrow::io::FileOutputStream> out;
  std::shared_ptr<arrow::ipc::RecordBatchWriter> writer;
};

Result<std::unique_ptr<RunWriter>> RunWriter::Open(const std::string& path,
                                                   const std::shared_ptr<arrow::Schema>& schema) {
  auto w = std::unique_ptr<RunWriter>(new RunWriter());
  w->impl_ = std::make_unique<Impl>();
  Impl& s = *w->impl_;
  s.ctx = "spill file " + path;
  ARROW_ASSIGN_OR_RAISE_CTX(s.out, arrow::io::FileOutputStream::Open(path), s.ctx);
  // LZ4 where it saves a tenth: values that decode far beyond their stored
  // size (dictionary-encoded, repetitive JSON) spill a fraction of it, and
  // incompressible ones are written as they are.
  auto options = arrow::ipc::IpcWriteOptions::Defaults();
  // Compressed on this thread: the caller is already one of the reader's
  // workers, and Arrow's pool would hand every buffer to another thread and
  // back (a cold read of overlapping files spent a sixth of its CPU switching).
  options.use_threads = false;
  if (auto codec = arrow::util::Codec::Create(arrow::Compression::LZ4_FRAME); codec.ok()) {
    options.codec = std::move(*codec);
    options.min_space_savings = 0.1;
  }
  ARROW_ASSIGN_OR_RAISE_CTX(s.writer, arrow::ipc::MakeFileWriter(s.out, schema, options), s.ctx);
  return w;
}

RunWriter::~RunWriter() {
  if (impl_ && impl_->out) (void)impl_->out->Close();
}

Status RunWriter::Write(const arrow::RecordBatch& batch) {
  return pq::FromArrow(impl_->writer->WriteRecordBatch(batch), impl_->ctx);
}

Result<int64_t> RunWriter::Close() {
  Impl& s = *impl_;
  RETURN_NOT_OK(pq::FromArrow(s.writer->Close(), s.ctx));
  ARROW_ASSIGN_OR_RAISE_CTX(int64_t size, s.out->Tell(), s.ctx);
  RETURN_NOT_OK(pq::FromArrow(s.out->Close(), s.ctx));
  s.out.reset();
  return size;
}

Result<int64_t> WriteRun(const std::string& path, const arrow::Table& table, int64_t batch_rows) {
  const std::string ctx = "spill file " + path;
  ASSIGN_OR_RAISE(auto writer, RunWriter::Open(path, table.schema()));
  arrow::TableBatchReader batches(table);
  batches.set_chunksize(std::max<int64_t>(1, batch_rows));
  while (true) {
    std::shared_ptr<arrow::RecordBatch> b;
    RETURN_NOT_OK(pq::FromArrow(batches.ReadNext(&b), ctx));
    if (!b) break;
    RETURN_NOT_OK(writer->Write(*b));
  }
  return writer->Close();
}

struct RunReader::Impl {
  bool keep_open = true;
  int num_batches = 0;
  int next = 0;
  std::shared_ptr<arrow::io::ReadableFile> file;
  std::shared_ptr<arrow::ipc::RecordBatchFileReader> reader;

  Status OpenFile(const std::string& path) {
    const std::string ctx = "spill file " + path;
    ARROW_ASSIGN_OR_RAISE_CTX(file, arrow::io::ReadableFile::Open(path), ctx);
    // Decompressed on this thread, for the same reason as WriteRun's.
    auto options = arrow::ipc::IpcReadOptions::Defaults();
    options.use_threads = false;
    ARROW_ASSIGN_OR_RAISE_CTX(reader, arrow::ipc::RecordBatchFileReader::Open(file, options), ctx);
    num_batches = reader->num_record_batches();
    return Status::OK();
  }
  void CloseFile() {
    reader.reset();
    if (file) (void)file->Close();
    file.reset();
  }
};

RunReader::~RunReader() {
  if (impl_) impl_->CloseFile();
  if (!unlinked_) ::unlink(path_.c_str());
}

Result<std::unique_ptr<RunReader>> RunReader::Open(const std::string& path, bool keep_open) {
  auto r = std::unique_ptr<RunReader>(new RunReader());
  r->impl_ = std::make_unique<Impl>();
  r->impl_->keep_open = keep_open;
  r->path_ = path;
  RETURN_NOT_OK(r->impl_->OpenFile(path));
  if (keep_open) {
    // Open for good: the name can go now, the space is freed when it closes.
    ::unlink(path.c_str());
    r->unlinked_ = true;
  } else {
    r->impl_->CloseFile();
  }
  return r;
}

Result<std::shared_ptr<arrow::RecordBatch>> RunReader::Next() {
  Impl& s = *impl_;
  if (s.next >= s.num_batches) {
    s.CloseFile();
    if (!unlinked_) ::unlink(path_.c_str());
    unlinked_ = true;
    return std::shared_ptr<arrow::RecordBatch>();
  }
  if (!s.reader) RETURN_NOT_OK(s.OpenFile(path_));
  ARROW_ASSIGN_OR_RAISE_CTX(auto b, s.reader->ReadRecordBatch(s.next++), "spill file " + path_);
  if (!s.keep_open) s.CloseFile();
  return b;
}

Result<std::shared_ptr<arrow::Table>> GatherRows(
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
    const std::vector<std::pair<uint32_t, int64_t>>& rows) {
  std::vector<int64_t> base(batches.size() + 1, 0);
  for (size_t i = 0; i < batches.size(); ++i) base[i + 1] = base[i] + batches[i]->num_rows();
  arrow::Int64Builder idx;
  RETURN_NOT_OK(pq::FromArrow(idx.Reserve(static_cast<int64_t>(rows.size())), "spill"));
  for (const auto& [b, r] : rows) idx.UnsafeAppend(base[b] + r);
  ARROW_ASSIGN_OR_RAISE_CTX(auto indices, idx.Finish(), "spill");
  ARROW_ASSIGN_OR_RAISE_CTX(auto table, arrow::Table::FromRecordBatches(batches), "spill");
  ARROW_ASSIGN_OR_RAISE_CTX(auto taken,
                            arrow::compute::Take(arrow::Datum(table), arrow::Datum(indices)),
                            "sorting a spill run");
  return taken.table();
}

}  // namespace thaw::records
