#include "thaw/parquet/parquet_file.h"

#include <arrow/io/interfaces.h>
#include <arrow/memory_pool.h>
#include <arrow/util/key_value_metadata.h>
#include <parquet/arrow/schema.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/statistics.h>

#include "thaw/parquet/arrow_status.h"

namespace thaw::pq {

namespace {

// Adapts Thaw's FileIO random access file to Arrow's interface.
class FileIOAdapter : public arrow::io::RandomAccessFile {
 public:
  explicit FileIOAdapter(std::unique_ptr<storage::RandomAccessFile> f) : f_(std::move(f)) {}
  arrow::Status Close() override { closed_ = true; return arrow::Status::OK(); }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return pos_; }
  arrow::Status Seek(int64_t pos) override { pos_ = pos; return arrow::Status::OK(); }
  arrow::Result<int64_t> GetSize() override { return f_->size(); }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override {
    ARROW_ASSIGN_OR_RAISE(int64_t n, ReadAt(pos_, nbytes, out));
    pos_ += n;
    return n;
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    ARROW_ASSIGN_OR_RAISE(auto buf, ReadAt(pos_, nbytes));
    pos_ += buf->size();
    return buf;
  }
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, void* out) override {
    nbytes = std::max<int64_t>(0, std::min(nbytes, f_->size() - position));
    Status st = f_->ReadAt(position, nbytes, out);
    if (!st.ok()) return arrow::Status::IOError(st.message());
    return nbytes;
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) override {
    nbytes = std::max<int64_t>(0, std::min(nbytes, f_->size() - position));
    ARROW_ASSIGN_OR_RAISE(auto buf, arrow::AllocateResizableBuffer(nbytes));
    ARROW_ASSIGN_OR_RAISE(int64_t n, ReadAt(position, nbytes, buf->mutable_data()));
    ARROW_RETURN_NOT_OK(buf->Resize(n));
    return std::shared_ptr<arrow::Buffer>(std::move(buf));
  }

 private:
  std::unique_ptr<storage::RandomAccessFile> f_;
  int64_t pos_ = 0;
  bool closed_ = false;
};

}  // namespace

int32_t FieldIdOf(const arrow::Field& f) {
  if (!f.metadata()) return -1;
  auto v = f.metadata()->Get("PARQUET:field_id");
  if (!v.ok()) return -1;
  try {
    return std::stoi(*v);
  } catch (...) {
    return -1;
  }
}

Result<std::unique_ptr<ParquetFile>> ParquetFile::Open(storage::FileIO& io, const std::string& location) {
  return OpenWith(io, location, nullptr);
}

Result<std::unique_ptr<ParquetFile>> ParquetFile::Clone(storage::FileIO& io) const {
  return OpenWith(io, location_, reader_->parquet_reader()->metadata());
}

Result<std::unique_ptr<ParquetFile>> ParquetFile::CloneStreaming(storage::FileIO& io) const {
  return OpenWith(io, location_, reader_->parquet_reader()->metadata(), /*streaming=*/true);
}

Result<std::unique_ptr<ParquetFile>> ParquetFile::OpenWith(storage::FileIO& io, const std::string& location,
                                                           std::shared_ptr<parquet::FileMetaData> metadata,
                                                           bool streaming) {
  auto file = io.Open(location);
  if (!file.ok()) {
    if (file.status().code() == StatusCode::kNotFound) {
      return Status::NotFound("data file {} is listed in the table's manifests but does not exist "
                              "(deleted by hand or by a bad expire/orphan clean-up?)", location);
    }
    return file.status();
  }
  auto adapter = std::make_shared<FileIOAdapter>(std::move(*file));
  const std::string ctx = "Parquet file " + location;
  return CatchParquet(ctx, [&]() -> Result<std::unique_ptr<ParquetFile>> {
    parquet::arrow::FileReaderBuilder builder;
    parquet::ReaderProperties rprops = parquet::default_reader_properties();
    if (streaming) {
      rprops.enable_buffered_stream();
      rprops.set_buffer_size(1 << 20);
    }
    RETURN_NOT_OK(FromArrow(builder.Open(adapter, rprops, std::move(metadata)), ctx));
    parquet::ArrowReaderProperties props;
    props.set_use_threads(false);
    if (streaming) props.set_pre_buffer(false);
    builder.properties(props);
    std::unique_ptr<parquet::arrow::FileReader> reader;
    RETURN_NOT_OK(FromArrow(builder.Build(&reader), ctx));
    auto pf = std::unique_ptr<ParquetFile>(new ParquetFile());
    pf->location_ = location;
    pf->reader_ = std::move(reader);
    int64_t acc = 0;
    for (int i = 0; i < pf->num_row_groups(); ++i) {
      pf->first_rows_.push_back(acc);
      acc += pf->row_group_num_rows(i);
    }
    return pf;
  });
}

int ParquetFile::num_row_groups() const { return reader_->num_row_groups(); }
int64_t ParquetFile::row_group_num_rows(int rg) const {
  return reader_->parquet_reader()->metadata()->RowGroup(rg)->num_rows();
}
int64_t ParquetFile::row_group_byte_size(int rg) const {
  return reader_->parquet_reader()->metadata()->RowGroup(rg)->total_byte_size();
}
int64_t ParquetFile::num_rows() const { return reader_->parquet_reader()->metadata()->num_rows(); }

namespace {
const parquet::arrow::SchemaField* FindChild(const std::vector<parquet::arrow::SchemaField>& fields, int32_t id,
                                             const std::string& name, int* index) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (id >= 0 && FieldIdOf(*fields[i].field) == id) {
      if (index) *index = static_cast<int>(i);
      return &fields[i];
    }
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (FieldIdOf(*fields[i].field) < 0 && fields[i].field->name() == name) {
      if (index) *index = static_cast<int>(i);
      return &fields[i];
    }
  }
  return nullptr;
}
}  // namespace

int ParquetFile::TopLevelField(int32_t field_id, const std::string& name) const {
  int idx = -1;
  FindChild(reader_->manifest().schema_fields, field_id, name, &idx);
  return idx;
}

int ParquetFile::LeafColumn(const std::vector<std::pair<int32_t, std::string>>& path) const {
  const std::vector<parquet::arrow::SchemaField>* level = &reader_->manifest().schema_fields;
  const parquet::arrow::SchemaField* f = nullptr;
  for (const auto& [id, name] : path) {
    f = FindChild(*level, id, name, nullptr);
    if (!f) return -1;
    level = &f->children;
  }
  return f && f->children.empty() ? f->column_index : -1;
}

std::optional<std::pair<int64_t, int64_t>> ParquetFile::IntStats(int rg, int leaf) const {
  if (leaf < 0) return std::nullopt;
  auto md = reader_->parquet_reader()->metadata()->RowGroup(rg)->ColumnChunk(leaf);
  if (!md->is_stats_set()) return std::nullopt;
  auto stats = md->statistics();
  if (!stats || !stats->HasMinMax()) return std::nullopt;
  if (stats->physical_type() == parquet::Type::INT64) {
    auto* s = static_cast<parquet::Int64Statistics*>(stats.get());
    return std::make_pair(s->min(), s->max());
  }
  if (stats->physical_type() == parquet::Type::INT32) {
    auto* s = static_cast<parquet::Int32Statistics*>(stats.get());
    return std::make_pair<int64_t, int64_t>(s->min(), s->max());
  }
  return std::nullopt;
}

Result<std::unique_ptr<arrow::RecordBatchReader>> ParquetFile::Read(const std::vector<int>& row_groups,
                                                                    const std::vector<int>& top_level,
                                                                    int64_t batch_size) {
  const std::string ctx = "Parquet file " + location_;
  return CatchParquet(ctx, [&]() -> Result<std::unique_ptr<arrow::RecordBatchReader>> {
    std::vector<int> leaves;
    const auto& fields = reader_->manifest().schema_fields;
    std::function<void(const parquet::arrow::SchemaField&)> collect = [&](const parquet::arrow::SchemaField& f) {
      if (f.column_index >= 0) leaves.push_back(f.column_index);
      for (const auto& c : f.children) collect(c);
    };
    for (int i : top_level) collect(fields[i]);
    reader_->set_batch_size(batch_size);
    ARROW_ASSIGN_OR_RAISE_CTX(auto rb, reader_->GetRecordBatchReader(row_groups, leaves), ctx);
    return std::unique_ptr<arrow::RecordBatchReader>(std::move(rb));
  });
}

}  // namespace thaw::pq
