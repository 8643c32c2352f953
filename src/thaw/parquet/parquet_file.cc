#include "thaw/parquet/parquet_file.h"

#include <arrow/array/concatenate.h>
#include <arrow/array/data.h>
#include <arrow/chunked_array.h>
#include <arrow/io/caching.h>
#include <arrow/io/interfaces.h>
#include <arrow/memory_pool.h>
#include <arrow/util/future.h>
#include <arrow/util/key_value_metadata.h>
#include <parquet/arrow/schema.h>
#include <parquet/column_reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/size_statistics.h>
#include <parquet/statistics.h>

#include "thaw/parquet/arrow_status.h"
#include "thaw/storage/lru_cache.h"
#include "thaw/storage/object_store.h"

namespace thaw::pq {

namespace {

// Adapts Thaw's FileIO random access file to Arrow's interface.
class FileIOAdapter : public arrow::io::RandomAccessFile {
 public:
  explicit FileIOAdapter(std::unique_ptr<storage::RandomAccessFile> f) : f_(std::move(f)) {}
  arrow::Status Close() override {
    closed_ = true;
    return arrow::Status::OK();
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return pos_; }
  arrow::Status Seek(int64_t pos) override {
    pos_ = pos;
    return arrow::Status::OK();
  }
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

// Parsed footers of object-store files, per process: Iceberg data files never
// change once written, and a second open (another scan, a clone on another
// thread) then costs no HEAD and no footer GET.
struct CachedFooter {
  std::shared_ptr<parquet::FileMetaData> metadata;
  int64_t file_size = -1;
};
constexpr int64_t kFooterCacheBytes = 64 << 20;

storage::ByteLruCache<CachedFooter>& FooterCache() {
  static auto* cache = new storage::ByteLruCache<CachedFooter>(kFooterCacheBytes);
  return *cache;
}

std::string FooterKey(const storage::ArrowFileIO& io, const std::string& location) {
  return fmt::format("{}\x1f{}", io.id(), location);
}

// Column chunks from object storage: ranges closer than the hole limit are
// fetched as one request, and up to kPrefetchRanges requests run ahead of
// the decoder on Arrow's IO thread pool (bounded memory in flight).
constexpr int64_t kRemoteHoleSizeLimit = 256 << 10;
constexpr int64_t kRemoteRangeSizeLimit = 32 << 20;
constexpr int64_t kPrefetchRanges = 8;

// Read's pre-buffering on object stores: lazy, a few ranges ahead of the
// decoder. Prefetch's: every range requested at once.
arrow::io::CacheOptions RemoteCacheOptions(bool lazy) {
  arrow::io::CacheOptions cache = arrow::io::CacheOptions::LazyDefaults();
  cache.hole_size_limit = kRemoteHoleSizeLimit;
  cache.range_size_limit = kRemoteRangeSizeLimit;
  cache.lazy = lazy;
  cache.prefetch_limit = lazy ? kPrefetchRanges : 0;
  return cache;
}

// A Parquet file reader whose column page readers skip data pages by a
// filter per leaf column (ReadRows): the reader it wraps does the rest.
using DataPageFilter = std::function<bool(const parquet::DataPageStats&)>;
using PageFilterFor = std::function<DataPageFilter(int leaf)>;

class FilteredRowGroup : public parquet::RowGroupReader::Contents {
 public:
  FilteredRowGroup(std::shared_ptr<parquet::RowGroupReader> inner, const parquet::ReaderProperties* props,
                   PageFilterFor filter_for)
      : inner_(std::move(inner)), props_(props), filter_for_(std::move(filter_for)) {}
  std::unique_ptr<parquet::PageReader> GetColumnPageReader(int i) override {
    auto pages = inner_->GetColumnPageReader(i);
    if (auto filter = filter_for_(i)) pages->set_data_page_filter(std::move(filter));
    return pages;
  }
  const parquet::RowGroupMetaData* metadata() const override { return inner_->metadata(); }
  const parquet::ReaderProperties* properties() const override { return props_; }

 private:
  std::shared_ptr<parquet::RowGroupReader> inner_;
  const parquet::ReaderProperties* props_;
  PageFilterFor filter_for_;
};

class FilteredContents : public parquet::ParquetFileReader::Contents {
 public:
  FilteredContents(std::unique_ptr<parquet::ParquetFileReader::Contents> inner,
                   std::shared_ptr<const parquet::ReaderProperties> props, PageFilterFor filter_for)
      : inner_(std::move(inner)), props_(std::move(props)), filter_for_(std::move(filter_for)) {}
  void Close() override { inner_->Close(); }
  std::shared_ptr<parquet::RowGroupReader> GetRowGroup(int i) override {
    return std::make_shared<parquet::RowGroupReader>(
        std::make_unique<FilteredRowGroup>(inner_->GetRowGroup(i), props_.get(), filter_for_));
  }
  std::shared_ptr<parquet::FileMetaData> metadata() const override { return inner_->metadata(); }
  std::shared_ptr<parquet::PageIndexReader> GetPageIndexReader() override { return inner_->GetPageIndexReader(); }
  parquet::BloomFilterReader& GetBloomFilterReader() override { return inner_->GetBloomFilterReader(); }

 private:
  std::unique_ptr<parquet::ParquetFileReader::Contents> inner_;
  std::shared_ptr<const parquet::ReaderProperties> props_;
  PageFilterFor filter_for_;
};

// One batch, then the end (ReadRows).
class OneBatchReader : public arrow::RecordBatchReader {
 public:
  explicit OneBatchReader(std::shared_ptr<arrow::RecordBatch> batch) : schema_(batch->schema()), batch_(std::move(batch)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    *batch = std::move(batch_);
    batch_ = nullptr;
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::Schema> schema_;
  std::shared_ptr<arrow::RecordBatch> batch_;
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
  return OpenWith(io, location, nullptr, false, nullptr, false);
}

Result<std::unique_ptr<ParquetFile>> ParquetFile::OpenDataFile(storage::FileIO& io, const std::string& location,
                                                               std::shared_ptr<const iceberg::NameMapping> mapping,
                                                               int64_t file_size) {
  return OpenWith(io, location, nullptr, false, std::move(mapping), true, file_size > 0 ? file_size : -1);
}

Result<std::unique_ptr<ParquetFile>> ParquetFile::Clone(storage::FileIO& io) const {
  return OpenWith(io, location_, reader_->parquet_reader()->metadata(), false, mapping_, require_ids_, file_size_);
}

Result<std::unique_ptr<ParquetFile>> ParquetFile::CloneStreaming(storage::FileIO& io) const {
  return OpenWith(io, location_, reader_->parquet_reader()->metadata(), /*streaming=*/true, mapping_, require_ids_,
                  file_size_);
}

Result<std::unique_ptr<ParquetFile>> ParquetFile::OpenWith(storage::FileIO& io, const std::string& location,
                                                           std::shared_ptr<parquet::FileMetaData> metadata,
                                                           bool streaming,
                                                           std::shared_ptr<const iceberg::NameMapping> mapping,
                                                           bool require_ids, int64_t file_size) {
  auto not_found = [&](const Status& st) {
    if (st.code() != StatusCode::kNotFound) return st;
    return Status::NotFound(
        "data file {} is listed in the table's manifests but does not exist "
        "(deleted by hand or by a bad expire/orphan clean-up?): {}",
        location, st.message());
  };
  std::shared_ptr<arrow::io::RandomAccessFile> adapter;
  auto* remote = dynamic_cast<storage::ArrowFileIO*>(&io);
  bool from_cache = false;
  if (remote) {
    if (!metadata) {
      if (auto hit = FooterCache().Get(FooterKey(*remote, location))) {
        metadata = hit->metadata;
        file_size = hit->file_size;
        from_cache = true;
      }
    }
    auto f = file_size >= 0 ? remote->OpenArrowFile(location, file_size) : remote->OpenArrowFile(location);
    if (!f.ok()) return not_found(f.status());
    adapter = std::move(*f);
    if (file_size < 0) {
      auto size = adapter->GetSize();
      if (size.ok()) file_size = *size;
    }
  } else {
    auto file = io.Open(location);
    if (!file.ok()) return not_found(file.status());
    file_size = (*file)->size();
    adapter = std::make_shared<FileIOAdapter>(std::move(*file));
  }
  const std::string ctx = "Parquet file " + location;
  return CatchParquet(ctx, [&]() -> Result<std::unique_ptr<ParquetFile>> {
    parquet::arrow::FileReaderBuilder builder;
    parquet::ReaderProperties rprops = parquet::default_reader_properties();
    if (streaming) {
      rprops.enable_buffered_stream();
      rprops.set_buffer_size(1 << 20);
    }
    const bool footer_known = metadata != nullptr;
    auto opened = builder.Open(adapter, rprops, std::move(metadata));
    if (!opened.ok() && remote) return remote->ErrorStatus(opened, location, "read of the Parquet footer");
    RETURN_NOT_OK(FromArrow(opened, ctx));
    parquet::ArrowReaderProperties props;
    props.set_use_threads(false);
    // Pre-buffering (object stores) is started by Read or Prefetch, not by
    // Arrow's reader, so that a prefetch is not fetched a second time.
    props.set_pre_buffer(false);
    builder.properties(props);
    std::unique_ptr<parquet::arrow::FileReader> reader;
    RETURN_NOT_OK(FromArrow(builder.Build(&reader), ctx));
    auto pf = std::unique_ptr<ParquetFile>(new ParquetFile());
    pf->location_ = location;
    pf->file_size_ = file_size;
    pf->remote_ = remote != nullptr;
    pf->streaming_ = streaming;
    pf->reader_ = std::move(reader);
    pf->source_ = adapter;
    pf->reader_properties_ = std::make_shared<parquet::ReaderProperties>(rprops);
    if (remote && !footer_known && !from_cache) {
      auto md = pf->reader_->parquet_reader()->metadata();
      // Parsed metadata takes a few times its serialised size.
      FooterCache().Put(FooterKey(*remote, location), CachedFooter{md, file_size},
                        4 * static_cast<int64_t>(md->size()) + 1024);
    }
    int64_t acc = 0;
    for (int i = 0; i < pf->num_row_groups(); ++i) {
      pf->first_rows_.push_back(acc);
      acc += pf->row_group_num_rows(i);
    }
    pf->mapping_ = std::move(mapping);
    RETURN_NOT_OK(pf->ApplyNameMapping(require_ids));
    return pf;
  });
}

int ParquetFile::num_row_groups() const { return reader_->num_row_groups(); }
int64_t ParquetFile::row_group_num_rows(int rg) const {
  return reader_->parquet_reader()->metadata()->RowGroup(rg)->num_rows();
}
int64_t ParquetFile::num_rows() const { return reader_->parquet_reader()->metadata()->num_rows(); }

int64_t ParquetFile::row_group_fetch_bytes(int rg, const std::vector<int>& top_level) const {
  auto md = reader_->parquet_reader()->metadata()->RowGroup(rg);
  int64_t n = 0;
  for (int leaf : LeavesOf(top_level)) n += md->ColumnChunk(leaf)->total_compressed_size();
  return n;
}

int64_t ParquetFile::row_group_decoded_bytes(int rg, const std::vector<int>& top_level) const {
  auto md = reader_->parquet_reader()->metadata()->RowGroup(rg);
  std::vector<int> leaves;
  if (top_level.empty()) {
    for (int c = 0; c < md->num_columns(); ++c) leaves.push_back(c);
  } else {
    leaves = LeavesOf(top_level);
  }
  int64_t total = 0;
  for (int leaf : leaves) {
    auto cc = md->ColumnChunk(leaf);
    const int64_t n = std::max<int64_t>(cc->num_values(), 0);
    int64_t bytes = n / 8 + 1;  // validity bitmap
    switch (cc->type()) {
      case parquet::Type::BOOLEAN:
        bytes += n / 8 + 1;
        break;
      case parquet::Type::INT32:
      case parquet::Type::FLOAT:
        bytes += 4 * n;
        break;
      case parquet::Type::INT64:
      case parquet::Type::DOUBLE:
        bytes += 8 * n;
        break;
      case parquet::Type::INT96:
        bytes += 12 * n;
        break;
      case parquet::Type::FIXED_LEN_BYTE_ARRAY:
        bytes += static_cast<int64_t>(std::max(md->schema()->Column(leaf)->type_length(), 0)) * n;
        break;
      case parquet::Type::BYTE_ARRAY: {
        bytes += 4 * n;  // offsets
        std::optional<int64_t> data;
        if (auto size = cc->size_statistics(); size && size->unencoded_byte_array_data_bytes) {
          data = *size->unencoded_byte_array_data_bytes;
        } else if (cc->has_dictionary_page()) {
          // Dictionary pages store each distinct value once and the data
          // pages small indices: the uncompressed size says nothing of the
          // values' length. Their min/max statistics do (about).
          if (auto st = cc->statistics(); st && st->HasMinMax()) {
            const int64_t non_null = st->HasNullCount() ? std::max<int64_t>(n - st->null_count(), 0) : n;
            const auto avg = static_cast<int64_t>(st->EncodeMin().size() + st->EncodeMax().size() + 1) / 2;
            data = avg * non_null;
          }
        }
        bytes += data.value_or(0);
        break;
      }
      default:
        break;
    }
    total += std::max(bytes, cc->total_uncompressed_size());
  }
  return total;
}

int64_t ParquetFile::row_group_dictionary_bytes(int rg, const std::vector<int>& top_level) const {
  auto md = reader_->parquet_reader()->metadata()->RowGroup(rg);
  int64_t total = 0;
  for (int leaf : LeavesOf(top_level)) {
    auto cc = md->ColumnChunk(leaf);
    if (!cc->has_dictionary_page()) continue;
    const int64_t stored = cc->data_page_offset() - cc->dictionary_page_offset();
    if (stored <= 0) continue;
    const double ratio = static_cast<double>(std::max<int64_t>(cc->total_uncompressed_size(), 1)) /
                         static_cast<double>(std::max<int64_t>(cc->total_compressed_size(), 1));
    total += static_cast<int64_t>(2.0 * static_cast<double>(stored) * std::max(ratio, 1.0));
  }
  return total;
}

std::vector<int> ParquetFile::LeavesOf(const std::vector<int>& top_level) const {
  std::vector<int> leaves;
  const auto& fields = reader_->manifest().schema_fields;
  std::function<void(const parquet::arrow::SchemaField&)> collect = [&](const parquet::arrow::SchemaField& f) {
    if (f.column_index >= 0) leaves.push_back(f.column_index);
    for (const auto& c : f.children) collect(c);
  };
  for (int i : top_level) collect(fields[i]);
  return leaves;
}

Status ParquetFile::Prefetch(const std::vector<int>& row_groups, const std::vector<int>& top_level) {
  if (streaming_) return Status::Invalid("Parquet file {}: a streaming reader cannot prefetch", location_);
  const std::string ctx = "Parquet file " + location_;
  return CatchParquet(ctx, [&]() -> Status {
    std::vector<int> leaves = LeavesOf(top_level);
    reader_->parquet_reader()->PreBuffer(row_groups, leaves, arrow::io::default_io_context(),
                                         RemoteCacheOptions(/*lazy=*/false));
    prefetched_.emplace(row_groups, std::move(leaves));
    return Status::OK();
  });
}

void ParquetFile::WaitForPrefetch() {
  if (!prefetched_) return;
  (void)reader_->parquet_reader()->WhenBuffered(prefetched_->first, prefetched_->second).status();
}

namespace {

std::shared_ptr<arrow::Field> WithFieldId(const std::shared_ptr<arrow::Field>& f, std::optional<int32_t> id) {
  if (!id) return f;
  return f->WithMergedMetadata(arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(*id)}));
}

// Gives `sf` (and its children) the ids the mapping entries in `level` assign
// to their names; `alias` is also looked up (Parquet lists name their
// element "element" or "item"; the mapping says "element"). Returns the
// Arrow field with ids in its metadata and records the ids in `ids`.
std::shared_ptr<arrow::Field> MapField(const parquet::arrow::SchemaField* sf,
                                       const std::shared_ptr<arrow::Field>& field,
                                       const std::vector<iceberg::MappedField>* level, std::string_view alias,
                                       std::unordered_map<const parquet::arrow::SchemaField*, int32_t>* ids) {
  const iceberg::MappedField* m = nullptr;
  if (level) {
    m = iceberg::NameMapping::Find(*level, field->name());
    if (!m && !alias.empty()) m = iceberg::NameMapping::Find(*level, alias);
  }
  if (m && m->field_id && sf) (*ids)[sf] = *m->field_id;
  const std::vector<iceberg::MappedField>* children = m ? &m->fields : nullptr;
  const auto& type = field->type();
  auto child_sf = [&](int k) -> const parquet::arrow::SchemaField* {
    return sf && k < static_cast<int>(sf->children.size()) ? &sf->children[k] : nullptr;
  };
  auto map_child = [&](const std::shared_ptr<arrow::Field>& f, const parquet::arrow::SchemaField* csf,
                       const std::vector<iceberg::MappedField>* lvl,
                       std::string_view a) { return MapField(csf, f, lvl, a, ids); };
  std::shared_ptr<arrow::DataType> mapped_type = type;
  switch (type->id()) {
    case arrow::Type::STRUCT: {
      std::vector<std::shared_ptr<arrow::Field>> kids;
      for (int k = 0; k < type->num_fields(); ++k) {
        kids.push_back(map_child(type->field(k), child_sf(k), children, ""));
      }
      mapped_type = arrow::struct_(kids);
      break;
    }
    case arrow::Type::LIST:
      mapped_type = arrow::list(map_child(type->field(0), child_sf(0), children, "element"));
      break;
    case arrow::Type::LARGE_LIST:
      mapped_type = arrow::large_list(map_child(type->field(0), child_sf(0), children, "element"));
      break;
    case arrow::Type::FIXED_SIZE_LIST:
      mapped_type = arrow::fixed_size_list(map_child(type->field(0), child_sf(0), children, "element"),
                                           static_cast<const arrow::FixedSizeListType&>(*type).list_size());
      break;
    case arrow::Type::MAP: {
      // map<entries: struct<key, value>>: the mapping lists key and value
      // directly under the map; the entries struct has no id of its own.
      const auto& mt = static_cast<const arrow::MapType&>(*type);
      const parquet::arrow::SchemaField* entries = child_sf(0);
      auto entry_sf = [&](int k) -> const parquet::arrow::SchemaField* {
        return entries && k < static_cast<int>(entries->children.size()) ? &entries->children[k] : nullptr;
      };
      auto key = map_child(mt.key_field(), entry_sf(0), children, "key");
      auto item = map_child(mt.item_field(), entry_sf(1), children, "value");
      mapped_type = std::make_shared<arrow::MapType>(key, item, mt.keys_sorted());
      break;
    }
    default:
      break;
  }
  return WithFieldId(field->WithType(mapped_type), m ? m->field_id : std::nullopt);
}

// The same data as `data`, typed as `type` (same layout, other field metadata).
std::shared_ptr<arrow::ArrayData> Retype(const std::shared_ptr<arrow::ArrayData>& data,
                                         const std::shared_ptr<arrow::DataType>& type) {
  auto out = data->Copy();
  out->type = type;
  for (size_t k = 0; k < out->child_data.size() && static_cast<int>(k) < type->num_fields(); ++k) {
    out->child_data[k] = Retype(out->child_data[k], type->field(static_cast<int>(k))->type());
  }
  return out;
}

// Batches of a name-mapped file, with the mapped ids in their fields.
class MappedBatchReader : public arrow::RecordBatchReader {
 public:
  MappedBatchReader(std::unique_ptr<arrow::RecordBatchReader> inner,
                    const std::vector<std::shared_ptr<arrow::Field>>& top)
      : inner_(std::move(inner)) {
    std::vector<std::shared_ptr<arrow::Field>> fields;
    for (const auto& f : inner_->schema()->fields()) {
      std::shared_ptr<arrow::Field> mapped = f;
      for (const auto& t : top) {
        if (t->name() == f->name() && t->type()->Equals(*f->type(), /*check_metadata=*/false)) {
          mapped = t;
          break;
        }
      }
      fields.push_back(mapped);
    }
    schema_ = arrow::schema(fields, inner_->schema()->metadata());
  }
  std::shared_ptr<arrow::Schema> schema() const override { return schema_; }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    std::shared_ptr<arrow::RecordBatch> raw;
    ARROW_RETURN_NOT_OK(inner_->ReadNext(&raw));
    if (!raw) {
      *batch = nullptr;
      return arrow::Status::OK();
    }
    std::vector<std::shared_ptr<arrow::ArrayData>> columns;
    for (int c = 0; c < raw->num_columns(); ++c) {
      columns.push_back(Retype(raw->column_data(c), schema_->field(c)->type()));
    }
    *batch = arrow::RecordBatch::Make(schema_, raw->num_rows(), std::move(columns));
    return arrow::Status::OK();
  }

 private:
  std::unique_ptr<arrow::RecordBatchReader> inner_;
  std::shared_ptr<arrow::Schema> schema_;
};

}  // namespace

Status ParquetFile::ApplyNameMapping(bool require_ids) {
  require_ids_ = require_ids;
  const auto& fields = reader_->manifest().schema_fields;
  for (const auto& f : fields) {
    if (FieldIdOf(*f.field) >= 0) return Status::OK();  // ids win over any mapping
  }
  if (fields.empty() || !require_ids) return Status::OK();
  if (!mapping_) {
    return Status::NotFound(
        "data file {} was written without Parquet field ids and the table has no '{}' property to map its column "
        "names to field ids (Iceberg spec, Column Projection). Set the property: pyiceberg's add_files sets it; "
        "or write the JSON mapping of the table's schema into it (e.g. Iceberg Java "
        "NameMappingParser.toJson(MappingUtil.create(table.schema())))",
        location_, iceberg::kNameMappingProperty);
  }
  mapped_ = true;
  for (const auto& f : fields) mapped_top_.push_back(MapField(&f, f.field, &mapping_->fields(), "", &mapped_ids_));
  return Status::OK();
}

int32_t ParquetFile::IdOf(const parquet::arrow::SchemaField& f) const {
  if (!mapped_) return FieldIdOf(*f.field);
  auto it = mapped_ids_.find(&f);
  return it == mapped_ids_.end() ? -1 : it->second;
}

const parquet::arrow::SchemaField* ParquetFile::FindChild(const std::vector<parquet::arrow::SchemaField>& fields,
                                                          int32_t id, const std::string& name, int* index) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (id >= 0 && IdOf(fields[i]) == id) {
      if (index) *index = static_cast<int>(i);
      return &fields[i];
    }
  }
  if (mapped_) return nullptr;  // a name mapping decides: unmapped columns are absent
  for (size_t i = 0; i < fields.size(); ++i) {
    if (FieldIdOf(*fields[i].field) < 0 && fields[i].field->name() == name) {
      if (index) *index = static_cast<int>(i);
      return &fields[i];
    }
  }
  return nullptr;
}

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
    std::vector<int> leaves = LeavesOf(top_level);
    if (prefetched_ && (prefetched_->first != row_groups || prefetched_->second != leaves)) prefetched_.reset();
    if (remote_ && !streaming_ && !prefetched_) {
      reader_->parquet_reader()->PreBuffer(row_groups, leaves, arrow::io::default_io_context(),
                                           RemoteCacheOptions(/*lazy=*/true));
    }
    reader_->set_batch_size(batch_size);
    ARROW_ASSIGN_OR_RAISE_CTX(auto rb, reader_->GetRecordBatchReader(row_groups, leaves), ctx);
    if (mapped_) return std::unique_ptr<arrow::RecordBatchReader>(new MappedBatchReader(std::move(rb), mapped_top_));
    return std::unique_ptr<arrow::RecordBatchReader>(std::move(rb));
  });
}

Result<std::unique_ptr<arrow::RecordBatchReader>> ParquetFile::ReadRows(int rg, const std::vector<int>& top_level,
                                                                        int64_t from, int64_t to) {
  const std::string ctx = "Parquet file " + location_;
  if (rg < 0 || rg >= num_row_groups()) {
    return Status::Internal("{}: row group {} asked of {}", ctx, rg, num_row_groups());
  }
  const int64_t rows = row_group_num_rows(rg);
  if (from < 0 || to > rows || from > to) {
    return Status::Internal("{}: rows [{}, {}) of row group {} (of {} rows) asked", ctx, from, to, rg, rows);
  }
  return CatchParquet(ctx, [&]() -> Result<std::unique_ptr<arrow::RecordBatchReader>> {
    const auto& fields = reader_->manifest().schema_fields;
    const parquet::SchemaDescriptor* schema = reader_->parquet_reader()->metadata()->schema();
    // Per skippable leaf: the rows its pages have covered so far, and the
    // first row of the first page kept (-1: none yet).
    struct Skip {
      int64_t row = 0;
      int64_t first_kept = -1;
    };
    std::map<int, std::shared_ptr<Skip>> skips;
    for (int f : top_level) {
      const auto& sf = fields.at(static_cast<size_t>(f));
      if (!sf.children.empty() || sf.column_index < 0) continue;
      if (schema->Column(sf.column_index)->max_repetition_level() != 0) continue;
      skips.emplace(sf.column_index, std::make_shared<Skip>());
    }
    PageFilterFor filter_for = [&skips, from, to](int leaf) -> DataPageFilter {
      auto it = skips.find(leaf);
      if (it == skips.end()) return nullptr;
      return [skip = it->second, from, to](const parquet::DataPageStats& page) {
        // Not repeated: a page's values are its rows.
        const int64_t begin = skip->row, end = skip->row + page.num_values;
        skip->row = end;
        if (end <= from || begin >= to) return true;
        if (skip->first_kept < 0) skip->first_kept = begin;
        return false;
      };
    };
    auto contents = parquet::ParquetFileReader::Contents::Open(source_, *reader_properties_,
                                                                reader_->parquet_reader()->metadata());
    auto filtered = std::make_unique<FilteredContents>(std::move(contents), reader_properties_, filter_for);
    auto file = std::make_unique<parquet::ParquetFileReader>();
    file->Open(std::move(filtered));
    parquet::ArrowReaderProperties props;
    props.set_use_threads(false);
    // Not pre-buffered: ParquetFileReader::PreBuffer works only on the file
    // reader Arrow makes itself, not on FilteredContents.
    props.set_pre_buffer(false);
    ARROW_ASSIGN_OR_RAISE_CTX(auto reader,
                              parquet::arrow::FileReader::Make(arrow::default_memory_pool(), std::move(file), props), ctx);
    std::shared_ptr<arrow::Schema> full;
    RETURN_NOT_OK(FromArrow(reader->GetSchema(&full), ctx));
    std::vector<std::shared_ptr<arrow::Field>> out_fields;
    std::vector<std::shared_ptr<arrow::Array>> columns;
    for (int f : top_level) {
      std::shared_ptr<arrow::ChunkedArray> chunked;
      RETURN_NOT_OK(FromArrow(reader->RowGroup(rg)->Column(f)->Read(&chunked), ctx));
      const auto& sf = fields.at(static_cast<size_t>(f));
      int64_t first = 0;  // the row group row of chunked's first row
      if (auto it = skips.find(sf.column_index); it != skips.end()) {
        first = it->second->first_kept >= 0 ? it->second->first_kept : from;  // no page kept: no rows asked
      }
      if (from - first < 0 || chunked->length() < to - first) {
        return Status::Corrupt("{}: row group {} column '{}' gave {} rows from row {}, where rows [{}, {}) were asked",
                               ctx, rg, sf.field->name(), chunked->length(), first, from, to);
      }
      auto sliced = chunked->Slice(from - first, to - from);
      std::shared_ptr<arrow::Array> column;
      if (sliced->num_chunks() == 1) {
        column = sliced->chunk(0);
      } else {
        // Arrow splits a binary column past 2 GiB into chunks; one batch
        // cannot hold it: the caller reads the row group the ordinary way.
        auto joined = arrow::Concatenate(sliced->chunks());
        if (!joined.ok()) {
          return Status::Unsupported("{}: rows [{}, {}) of row group {} do not fit one batch ({})", ctx, from, to, rg,
                                     joined.status().message());
        }
        column = std::move(*joined);
      }
      out_fields.push_back(full->field(f));
      columns.push_back(std::move(column));
    }
    auto out_schema = arrow::schema(out_fields, full->metadata());
    auto batch = arrow::RecordBatch::Make(out_schema, to - from, std::move(columns));
    std::unique_ptr<arrow::RecordBatchReader> rb(new OneBatchReader(std::move(batch)));
    if (mapped_) return std::unique_ptr<arrow::RecordBatchReader>(new MappedBatchReader(std::move(rb), mapped_top_));
    return std::unique_ptr<arrow::RecordBatchReader>(std::move(rb));
  });
}

}  // namespace thaw::pq
