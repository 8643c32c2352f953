#include "thaw/parquet/data_file_writer.h"

#include <arrow/array.h>
#include <arrow/array/data.h>
#include <arrow/builder.h>
#include <arrow/io/interfaces.h>
#include <arrow/memory_pool.h>
#include <arrow/table.h>
#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>
#include <parquet/arrow/writer.h>
#include <parquet/metadata.h>
#include <parquet/properties.h>
#include <parquet/schema.h>
#include <parquet/statistics.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "thaw/common/log.h"
#include "thaw/parquet/arrow_status.h"
#include "thaw/parquet/arrow_type.h"

namespace thaw::parquet {

namespace {

using pq::CatchParquet;
using pq::FromArrow;

// Field ids of the canonical layout (docs/layouts.md).
constexpr int32_t kPartitionId = 1;
constexpr int32_t kOffsetId = 2;
constexpr int32_t kTimestampId = 3;
constexpr int32_t kTimestampTypeId = 4;
constexpr int32_t kKeyId = 5;
constexpr int32_t kValueId = 6;
constexpr int32_t kHeadersId = 7;
constexpr int32_t kHeaderElementId = 8;
constexpr int32_t kHeaderKeyId = 9;
constexpr int32_t kHeaderValueId = 10;
constexpr int32_t kTopicId = 11;
constexpr int32_t kValueStructId = 12;             // the row layout's decoded value (docs/layouts.md, thaw-row)
constexpr int32_t kValueSchemaIdId = 13;           // the row layout's schema registry id of each value
constexpr int32_t kKeyStructId = 14;               // the row layout's decoded key (--key-format registry)
constexpr int32_t kKeySchemaIdId = 15;             // the row layout's schema registry id of each key
constexpr int32_t kRowIdId = 2147483540;           // _row_id (v3 row lineage)
constexpr int32_t kLastUpdatedSeqId = 2147483539;  // _last_updated_sequence_number

// Row groups hold binary columns with 32-bit offsets: a row group stays well
// below 2 GiB (one record past the limit at most).
constexpr int64_t kMaxRowGroupBytes = 1LL << 30;
// Bytes counted per row (fixed-width columns, offsets) and per header on top
// of the payload, for the row-group size estimate.
constexpr int64_t kRowOverhead = 4 + 8 + 8 + 4 + 4 + 4 + 4;
constexpr int64_t kHeaderOverhead = 4 + 4 + 2;
// Parquet writes page headers and small pieces: they are gathered into
// writes of this size before reaching the OutputFile.
constexpr int64_t kSinkBufferBytes = 1 << 20;
// A row group is handed to Parquet in slices of about this many bytes:
// Parquet checks the page size only between the slices' write batches (1024
// values), so with large records one page -- buffered, then compressed, in
// memory -- would otherwise hold the whole row group.
constexpr int64_t kSliceBytes = 1 << 20;

std::shared_ptr<const arrow::KeyValueMetadata> IdMeta(int32_t id) {
  return arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)});
}

// Arrow's view of Thaw's OutputFile. Closing this stream does not close the
// file: DataFileWriter::Finish does, after the footer was written, so the
// file exists only then. Writes are gathered into larger ones.
class OutputFileStream : public arrow::io::OutputStream {
 public:
  explicit OutputFileStream(storage::OutputFile* file) : file_(file) {}

  arrow::Status Close() override {
    if (closed_) return arrow::Status::OK();
    ARROW_RETURN_NOT_OK(FlushBuffer());
    closed_ = true;
    return arrow::Status::OK();
  }
  arrow::Status Abort() override {
    closed_ = true;
    buffer_.clear();
    return arrow::Status::OK();
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return position_; }
  arrow::Status Write(const void* data, int64_t nbytes) override {
    if (closed_) return arrow::Status::Invalid(file_->location(), ": write after close");
    if (static_cast<int64_t>(buffer_.size()) + nbytes > kSinkBufferBytes) ARROW_RETURN_NOT_OK(FlushBuffer());
    if (nbytes >= kSinkBufferBytes) {
      ARROW_RETURN_NOT_OK(Pass(data, nbytes));
    } else {
      buffer_.append(static_cast<const char*>(data), static_cast<size_t>(nbytes));
    }
    position_ += nbytes;
    return arrow::Status::OK();
  }
  arrow::Status Flush() override { return FlushBuffer(); }

  // The first error of the OutputFile, with its own code and text.
  const Status& error() const { return error_; }

 private:
  arrow::Status FlushBuffer() {
    if (buffer_.empty()) return arrow::Status::OK();
    ARROW_RETURN_NOT_OK(Pass(buffer_.data(), static_cast<int64_t>(buffer_.size())));
    buffer_.clear();
    return arrow::Status::OK();
  }
  arrow::Status Pass(const void* data, int64_t nbytes) {
    Status st = file_->Write(data, nbytes);
    if (!st.ok()) {
      if (error_.ok()) error_ = st;
      return arrow::Status::IOError(st.message());
    }
    return arrow::Status::OK();
  }

  storage::OutputFile* file_;
  std::string buffer_;
  int64_t position_ = 0;
  bool closed_ = false;
  Status error_;
};

template <typename T>
struct MinMax {
  bool any = false;
  T min{}, max{};
  void Add(const T& v) {
    if (!any) {
      min = max = v;
      any = true;
      return;
    }
    if (v < min) min = v;
    if (max < v) max = v;
  }
};

std::string IntBound(int32_t v) {
  std::string s(4, '\0');
  const auto u = static_cast<uint32_t>(v);
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return s;
}
std::string LongBound(int64_t v) {
  std::string s(8, '\0');
  const auto u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return s;
}

// What one top-level schema column holds.
enum class Role {
  kPartition,
  kOffset,
  kTimestamp,
  kTimestampType,
  kKey,
  kValue,
  kHeaders,
  kTopic,
  kValueStruct,
  kValueSchemaId,
  kKeyStruct,
  kKeySchemaId,
  kRowId,
  kLastUpdatedSeq
};

class DataFileWriterImpl : public DataFileWriter {
 public:
  Status Init(storage::FileIO& io, const std::string& location, const iceberg::Schema& schema, int32_t spec_id,
              std::vector<iceberg::Datum> partition, DataFileWriterOptions options) {
    location_ = location;
    spec_id_ = spec_id;
    partition_ = std::move(partition);
    options_ = std::move(options);
    if (options_.row_group_bytes <= 0 || options_.row_group_bytes > kMaxRowGroupBytes) {
      return Status::Invalid("{}: row group size {} is outside 1 byte .. 1 GiB", location_, options_.row_group_bytes);
    }
    RETURN_NOT_OK(BuildSchema(schema));
    ASSIGN_OR_RAISE(file_, io.Create(location_));
    sink_ = std::make_shared<OutputFileStream>(file_.get());

    ::parquet::WriterProperties::Builder props;
    props.compression(arrow::Compression::ZSTD)
        ->compression_level(options_.zstd_level)
        ->enable_statistics()
        // Column and offset indexes (Parquet's page index), for readers that
        // seek to a page rather than decode a whole row group.
        ->enable_write_page_index()
        ->max_row_group_length(std::numeric_limits<int64_t>::max())
        ->created_by("thaw archive (parquet-cpp-arrow)");
    // Keys and values are mostly unique: a dictionary would be tried and dropped per page.
    for (const auto& path : binary_paths_) props.disable_dictionary(path);
    auto arrow_props = ::parquet::ArrowWriterProperties::Builder().build();
    return CatchParquet(location_, [&]() -> Status {
      auto writer = ::parquet::arrow::FileWriter::Open(*arrow_schema_, arrow::default_memory_pool(), sink_,
                                                       props.build(), arrow_props);
      if (!writer.ok()) return WriteError(writer.status(), "opening the Parquet writer");
      writer_ = std::move(*writer);
      return Status::OK();
    });
  }

  ~DataFileWriterImpl() override {
    if (!finished_) Abort();
  }

  Status Append(const records::RecordBatch& batch, size_t begin, size_t end) override {
    if (finished_) return Status::Invalid("{}: Append after Finish or Abort", location_);
    end = std::min(end, batch.records.size());
    for (size_t i = begin; i < end; ++i) {
      RETURN_NOT_OK(AppendOne(batch, batch.records[i]));
      if (buffered_bytes_ >= options_.row_group_bytes) RETURN_NOT_OK(FlushRowGroup());
    }
    return Status::OK();
  }

  Status AppendDecoded(const records::RecordBatch& batch, size_t begin, size_t end,
                       const DecodedValues& decoded) override {
    end = std::min(end, batch.records.size());
    if (!has_value_struct_) {
      return Status::Invalid("{}: decoded values given, but the table has no value struct column (field id {})",
                             location_, kValueStructId);
    }
    const int64_t n = end > begin ? static_cast<int64_t>(end - begin) : 0;
    if (!decoded.values || decoded.values->length() != n || static_cast<int64_t>(decoded.keep_raw.size()) != n) {
      return Status::Invalid("{}: {} decoded values for {} records", location_,
                             decoded.values ? decoded.values->length() : 0, n);
    }
    if (decoded.keys && decoded.keys->length() != n) {
      return Status::Invalid("{}: {} decoded keys for {} records", location_, decoded.keys->length(), n);
    }
    decoded_ = &decoded;
    Status st = Status::OK();
    for (size_t i = begin; i < end && st.ok(); ++i) {
      decoded_row_ = static_cast<int64_t>(i - begin);
      st = AppendOne(batch, batch.records[i]);
      if (st.ok() && buffered_bytes_ >= options_.row_group_bytes) st = FlushRowGroup();
    }
    decoded_ = nullptr;
    decoded_row_ = -1;
    return st;
  }

  int64_t appended_bytes() const override { return appended_bytes_; }
  int64_t written_bytes() const override { return sink_ ? sink_->Tell().ValueOr(0) : 0; }
  int64_t record_count() const override { return record_count_; }

  Result<iceberg::DataFile> Finish() override {
    if (finished_) return Status::Invalid("{}: Finish after Finish or Abort", location_);
    Status st = FlushRowGroup();
    if (st.ok()) {
      st = CatchParquet(location_, [&]() -> Status {
        auto closed = writer_->Close();
        if (!closed.ok()) return WriteError(closed, "writing the Parquet footer");
        auto flushed = sink_->Close();
        if (!flushed.ok()) return WriteError(flushed, "writing the Parquet footer");
        return Status::OK();
      });
    }
    if (st.ok()) st = file_->Close();
    if (!st.ok()) {
      Abort();
      return st;
    }
    finished_ = true;
    return MakeDataFile();
  }

  void Abort() override {
    if (finished_) return;
    finished_ = true;
    // Later writes (the Parquet writer's destructor writes a footer) fail
    // instead of reaching the aborted file.
    if (sink_) (void)sink_->Abort();
    if (file_) file_->Abort();
    if (writer_) {
      try {
        writer_.reset();
      } catch (...) {
      }
    }
  }

 private:
  Status Mismatch(const iceberg::NestedField& f, const char* want) const {
    return Status::Invalid(
        "{}: column '{}' (field id {}) is {}{}, but Thaw's canonical layout (docs/layouts.md) has {} there: "
        "archive writes only into tables with the canonical schema",
        location_, f.name, f.id, f.required ? "required " : "optional ", f.type ? f.type->ToString() : "?", want);
  }

  Status BuildSchema(const iceberg::Schema& schema) {
    arrow::FieldVector fields;
    bool seen[kKeySchemaIdId + 1] = {};
    for (const auto& f : schema.fields()) {
      const iceberg::TypeId t = f.type ? f.type->id : iceberg::TypeId::kUnknown;
      std::shared_ptr<arrow::DataType> type;
      Role role;
      switch (f.id) {
        case kPartitionId:
        case kTimestampTypeId:
          if (t != iceberg::TypeId::kInt || !f.required) return Mismatch(f, "a required int");
          type = arrow::int32();
          role = f.id == kPartitionId ? Role::kPartition : Role::kTimestampType;
          break;
        case kOffsetId:
          if (t != iceberg::TypeId::kLong || !f.required) return Mismatch(f, "a required long");
          type = arrow::int64();
          role = Role::kOffset;
          break;
        case kTimestampId:
          if (t == iceberg::TypeId::kTimestampTz) {
            type = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
          } else if (t == iceberg::TypeId::kTimestamp) {
            type = arrow::timestamp(arrow::TimeUnit::MICRO);
          } else {
            return Mismatch(f, "a required timestamptz");
          }
          if (!f.required) return Mismatch(f, "a required timestamptz");
          role = Role::kTimestamp;
          break;
        case kKeyId:
        case kValueId:
          if (t != iceberg::TypeId::kBinary || f.required) return Mismatch(f, "an optional binary");
          type = arrow::binary();
          role = f.id == kKeyId ? Role::kKey : Role::kValue;
          binary_paths_.push_back(f.name);
          break;
        case kHeadersId: {
          const iceberg::Type* list = f.type.get();
          const iceberg::Type* elem =
              (t == iceberg::TypeId::kList && list->fields.size() == 1) ? list->fields[0].type.get() : nullptr;
          if (f.required || !elem || list->fields[0].id != kHeaderElementId || elem->id != iceberg::TypeId::kStruct ||
              elem->fields.size() != 2 || elem->fields[0].id != kHeaderKeyId ||
              elem->fields[0].type->id != iceberg::TypeId::kString || elem->fields[1].id != kHeaderValueId ||
              elem->fields[1].type->id != iceberg::TypeId::kBinary || elem->fields[1].required) {
            return Mismatch(f, "an optional list<struct<9 key: string, 10 value: optional binary>> (element id 8)");
          }
          const auto& k = elem->fields[0];
          const auto& v = elem->fields[1];
          header_struct_ = arrow::struct_({arrow::field(k.name, arrow::utf8(), !k.required, IdMeta(kHeaderKeyId)),
                                           arrow::field(v.name, arrow::binary(), true, IdMeta(kHeaderValueId))});
          type =
              arrow::list(arrow::field("element", header_struct_, !list->fields[0].required, IdMeta(kHeaderElementId)));
          role = Role::kHeaders;
          break;
        }
        case kTopicId:
          if (t != iceberg::TypeId::kString || !f.required) return Mismatch(f, "a required string");
          if (!options_.topic) {
            return Status::Invalid(
                "{}: the table has a kafka_topic column (field id 11) but no topic was given for "
                "this file",
                location_);
          }
          type = arrow::utf8();
          role = Role::kTopic;
          break;
        case kValueStructId:
        case kKeyStructId: {
          const bool key = f.id == kKeyStructId;
          if (t != iceberg::TypeId::kStruct || f.required) {
            return Mismatch(f, key ? "an optional struct (the decoded key)" : "an optional struct (the decoded value)");
          }
          auto arrow_type = ArrowTypeOf(*f.type);
          if (!arrow_type.ok()) {
            return arrow_type.status().WithContext(fmt::format("{}: column '{}'", location_, f.name));
          }
          type = *arrow_type;
          role = key ? Role::kKeyStruct : Role::kValueStruct;
          if (!key) has_value_struct_ = true;
          break;
        }
        case kValueSchemaIdId:
        case kKeySchemaIdId: {
          const bool key = f.id == kKeySchemaIdId;
          if (t != iceberg::TypeId::kInt || f.required) {
            return Mismatch(f, key ? "an optional int (the key's schema id)" : "an optional int (the value's schema id)");
          }
          type = arrow::int32();
          role = key ? Role::kKeySchemaId : Role::kValueSchemaId;
          break;
        }
        default:
          return Status::Invalid(
              "{}: column '{}' (field id {}) is not part of Thaw's canonical layout (docs/layouts.md): archive "
              "writes only into tables with the canonical schema (ids 1-10, and 11 for several topics) or the row layout's (6 "
              "value_raw, 12-15 the decoded value and key and their schema ids)",
              location_, f.name, f.id);
      }
      seen[f.id] = true;
      fields.push_back(arrow::field(f.name, type, !f.required, IdMeta(f.id)));
      roles_.push_back(role);
    }
    for (int32_t id = kPartitionId; id <= kHeadersId; ++id) {
      if (!seen[id]) {
        return Status::Invalid(
            "{}: the table schema lacks field id {} of Thaw's canonical layout "
            "(docs/layouts.md)",
            location_, id);
      }
    }
    if (options_.topic && !seen[kTopicId]) {
      return Status::Invalid("{}: a topic was given but the table schema has no kafka_topic column (field id 11)",
                             location_);
    }
    if (options_.row_lineage) {
      fields.push_back(arrow::field("_row_id", arrow::int64(), true, IdMeta(kRowIdId)));
      roles_.push_back(Role::kRowId);
      fields.push_back(arrow::field("_last_updated_sequence_number", arrow::int64(), true, IdMeta(kLastUpdatedSeqId)));
      roles_.push_back(Role::kLastUpdatedSeq);
    }
    arrow_schema_ = arrow::schema(fields);
    return MakeBuilders();
  }

  Status MakeBuilders() {
    auto* pool = arrow::default_memory_pool();
    builders_.clear();
    for (size_t i = 0; i < roles_.size(); ++i) {
      std::unique_ptr<arrow::ArrayBuilder> b;
      auto st = arrow::MakeBuilder(pool, arrow_schema_->field(static_cast<int>(i))->type(), &b);
      if (!st.ok()) return FromArrow(st, location_);
      builders_.push_back(std::move(b));
    }
    return Status::OK();
  }

  // Appends with an arrow::Status check (out of memory, offsets overflow).
  template <typename B, typename... Args>
  Status Put(B* b, Args&&... args) {
    auto st = b->Append(std::forward<Args>(args)...);
    if (!st.ok()) return FromArrow(st, location_);
    return Status::OK();
  }

  Status AppendOne(const records::RecordBatch& batch, const records::Record& r) {
    int64_t payload = 0, overhead = kRowOverhead;
    const int64_t ts_us = r.timestamp_ms * 1000;
    std::pair<std::optional<int64_t>, std::optional<int64_t>> lineage;
    if (options_.row_lineage) lineage = options_.row_lineage(r);
    for (size_t c = 0; c < roles_.size(); ++c) {
      arrow::ArrayBuilder* b = builders_[c].get();
      switch (roles_[c]) {
        case Role::kPartition:
          RETURN_NOT_OK(Put(static_cast<arrow::Int32Builder*>(b), r.partition));
          break;
        case Role::kOffset:
          RETURN_NOT_OK(Put(static_cast<arrow::Int64Builder*>(b), r.offset));
          break;
        case Role::kTimestamp:
          RETURN_NOT_OK(Put(static_cast<arrow::TimestampBuilder*>(b), ts_us));
          break;
        case Role::kTimestampType:
          RETURN_NOT_OK(Put(static_cast<arrow::Int32Builder*>(b), static_cast<int32_t>(r.timestamp_type)));
          break;
        case Role::kKey:
        case Role::kValue: {
          auto* bb = static_cast<arrow::BinaryBuilder*>(b);
          const auto& v = roles_[c] == Role::kKey ? r.key : r.value;
          // A row-layout value the decoded struct reproduces exactly has no value_raw.
          if (v && (roles_[c] == Role::kKey || !decoded_ || decoded_->keep_raw[decoded_row_])) {
            RETURN_NOT_OK(Put(bb, v->data(), static_cast<int32_t>(v->size())));
            payload += static_cast<int64_t>(v->size());
          } else {
            auto st = bb->AppendNull();
            if (!st.ok()) return FromArrow(st, location_);
          }
          break;
        }
        case Role::kHeaders: {
          auto* lb = static_cast<arrow::ListBuilder*>(b);
          auto* sb = static_cast<arrow::StructBuilder*>(lb->value_builder());
          auto* kb = static_cast<arrow::StringBuilder*>(sb->field_builder(0));
          auto* vb = static_cast<arrow::BinaryBuilder*>(sb->field_builder(1));
          RETURN_NOT_OK(Put(lb));  // an empty list = no headers (docs/layouts.md)
          for (const auto& h : batch.HeadersOf(r)) {
            RETURN_NOT_OK(Put(sb));
            RETURN_NOT_OK(Put(kb, h.key.data(), static_cast<int32_t>(h.key.size())));
            payload += static_cast<int64_t>(h.key.size());
            overhead += kHeaderOverhead;
            if (h.value) {
              RETURN_NOT_OK(Put(vb, h.value->data(), static_cast<int32_t>(h.value->size())));
              payload += static_cast<int64_t>(h.value->size());
            } else {
              auto st = vb->AppendNull();
              if (!st.ok()) return FromArrow(st, location_);
            }
          }
          break;
        }
        case Role::kTopic:
          RETURN_NOT_OK(Put(static_cast<arrow::StringBuilder*>(b), *options_.topic));
          break;
        case Role::kValueStruct:
        case Role::kKeyStruct: {
          const bool key = roles_[c] == Role::kKeyStruct;
          const auto& array = decoded_ ? (key ? decoded_->keys : decoded_->values) : nullptr;
          if (array) {
            auto st = b->AppendArraySlice(arrow::ArraySpan(*array->data()), decoded_row_, 1);
            if (!st.ok()) return FromArrow(st, location_);
            const auto& bytes = key ? r.key : r.value;
            if (bytes) payload += static_cast<int64_t>(bytes->size());  // about the decoded size
          } else {
            auto st = b->AppendNull();
            if (!st.ok()) return FromArrow(st, location_);
          }
          break;
        }
        case Role::kValueSchemaId:
        case Role::kKeySchemaId: {
          auto* ib = static_cast<arrow::Int32Builder*>(b);
          const std::vector<std::optional<int32_t>>* ids =
              decoded_ ? (roles_[c] == Role::kKeySchemaId ? &decoded_->key_schema_ids : &decoded_->schema_ids)
                       : nullptr;
          const auto k = static_cast<size_t>(decoded_row_);
          if (ids && k < ids->size() && (*ids)[k]) {
            RETURN_NOT_OK(Put(ib, *(*ids)[k]));
          } else {
            auto st = ib->AppendNull();
            if (!st.ok()) return FromArrow(st, location_);
          }
          break;
        }
        case Role::kRowId:
        case Role::kLastUpdatedSeq: {
          const auto& v = roles_[c] == Role::kRowId ? lineage.first : lineage.second;
          auto* lb = static_cast<arrow::Int64Builder*>(b);
          if (v) {
            RETURN_NOT_OK(Put(lb, *v));
          } else {
            auto st = lb->AppendNull();
            if (!st.ok()) return FromArrow(st, location_);
          }
          break;
        }
      }
    }
    partition_bounds_.Add(r.partition);
    offset_bounds_.Add(r.offset);
    timestamp_bounds_.Add(ts_us);
    type_bounds_.Add(static_cast<int32_t>(r.timestamp_type));
    appended_bytes_ += payload;
    buffered_bytes_ += payload + overhead;
    slice_bytes_ += payload + overhead;
    ++buffered_rows_;
    ++record_count_;
    if (slice_bytes_ >= kSliceBytes) {
      slice_ends_.push_back(buffered_rows_);
      slice_bytes_ = 0;
    }
    return Status::OK();
  }

  Status FlushRowGroup() {
    if (buffered_rows_ == 0) return Status::OK();
    if (slice_ends_.empty() || slice_ends_.back() != buffered_rows_) slice_ends_.push_back(buffered_rows_);
    std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
    for (auto& b : builders_) {
      std::shared_ptr<arrow::Array> a;
      auto st = b->Finish(&a);
      if (!st.ok()) return FromArrow(st, location_);
      arrow::ArrayVector slices;
      int64_t begin = 0;
      for (int64_t end : slice_ends_) {
        slices.push_back(a->Slice(begin, end - begin));
        begin = end;
      }
      columns.push_back(std::make_shared<arrow::ChunkedArray>(std::move(slices), a->type()));
    }
    slice_ends_.clear();
    slice_bytes_ = 0;
    auto table = arrow::Table::Make(arrow_schema_, columns, buffered_rows_);
    Status st = CatchParquet(location_, [&]() -> Status {
      auto written = writer_->WriteTable(*table, buffered_rows_);  // exactly one row group
      if (!written.ok()) return WriteError(written, "writing a row group");
      return Status::OK();
    });
    buffered_rows_ = 0;
    buffered_bytes_ = 0;
    ++row_groups_;
    return st;
  }

  Status WriteError(const arrow::Status& st, const char* what) const {
    if (!sink_->error().ok()) return sink_->error();  // the storage error, with its code
    return FromArrow(st, fmt::format("{}: {}", location_, what));
  }

  Result<iceberg::DataFile> MakeDataFile() {
    iceberg::DataFile df;
    df.content = iceberg::FileContent::kData;
    df.path = location_;
    df.format = "parquet";
    df.spec_id = spec_id_;
    df.partition = partition_;
    df.record_count = record_count_;
    df.file_size = sink_->Tell().ValueOr(0);
    const auto md = writer_->metadata();
    if (!md) return Status::Corrupt("{}: the Parquet writer returned no footer", location_);
    const ::parquet::SchemaDescriptor* desc = md->schema();
    // Per leaf column, as Iceberg Java's ParquetUtil.footerMetrics: column
    // size = compressed chunk bytes, value count = the chunk's values (levels,
    // nulls and empty lists included), null count = the chunk statistics'.
    for (int rg = 0; rg < md->num_row_groups(); ++rg) {
      auto group = md->RowGroup(rg);
      for (int c = 0; c < group->num_columns(); ++c) {
        const int32_t id = desc->Column(c)->schema_node()->field_id();
        if (id < 0) continue;
        auto chunk = group->ColumnChunk(c);
        df.column_sizes[id] += chunk->total_compressed_size();
        df.value_counts[id] += chunk->num_values();
        auto stats = chunk->statistics();
        if (stats && stats->HasNullCount()) {
          df.null_value_counts[id] += stats->null_count();
        } else {
          return Status::Corrupt("{}: column {} of row group {} has no null count", location_, id, rg);
        }
      }
      auto first = group->ColumnChunk(0);
      int64_t start = first->data_page_offset();
      if (first->has_dictionary_page()) start = std::min(start, first->dictionary_page_offset());
      df.split_offsets.push_back(start);
    }
    if (record_count_ == 0) {
      // No row groups: the counts are zero, not absent.
      for (int c = 0; c < desc->num_columns(); ++c) {
        const int32_t id = desc->Column(c)->schema_node()->field_id();
        if (id < 0) continue;
        df.column_sizes[id] += 0;
        df.value_counts[id] += 0;
        df.null_value_counts[id] += 0;
      }
    }
    // Bounds (Appendix D) for the columns pruning uses; none for key, value
    // and headers (binary prefixes would be of no use to Thaw's planner).
    if (partition_bounds_.any) {
      df.lower_bounds[kPartitionId] = IntBound(partition_bounds_.min);
      df.upper_bounds[kPartitionId] = IntBound(partition_bounds_.max);
      df.lower_bounds[kOffsetId] = LongBound(offset_bounds_.min);
      df.upper_bounds[kOffsetId] = LongBound(offset_bounds_.max);
      df.lower_bounds[kTimestampId] = LongBound(timestamp_bounds_.min);
      df.upper_bounds[kTimestampId] = LongBound(timestamp_bounds_.max);
      df.lower_bounds[kTimestampTypeId] = IntBound(type_bounds_.min);
      df.upper_bounds[kTimestampTypeId] = IntBound(type_bounds_.max);
      if (options_.topic) {
        df.lower_bounds[kTopicId] = *options_.topic;
        df.upper_bounds[kTopicId] = *options_.topic;
      }
    }
    return df;
  }

  std::string location_;
  int32_t spec_id_ = 0;
  std::vector<iceberg::Datum> partition_;
  DataFileWriterOptions options_;
  std::shared_ptr<arrow::Schema> arrow_schema_;
  std::shared_ptr<arrow::DataType> header_struct_;
  std::vector<Role> roles_;
  std::vector<std::string> binary_paths_;
  std::vector<std::unique_ptr<arrow::ArrayBuilder>> builders_;
  std::unique_ptr<storage::OutputFile> file_;
  std::shared_ptr<OutputFileStream> sink_;
  std::unique_ptr<::parquet::arrow::FileWriter> writer_;
  int64_t appended_bytes_ = 0;
  int64_t buffered_bytes_ = 0;
  int64_t buffered_rows_ = 0;
  int64_t slice_bytes_ = 0;
  std::vector<int64_t> slice_ends_;  // row counts at which the buffered rows are sliced
  int64_t record_count_ = 0;
  int row_groups_ = 0;
  bool finished_ = false;
  bool has_value_struct_ = false;
  const DecodedValues* decoded_ = nullptr;  // during AppendDecoded
  int64_t decoded_row_ = -1;                // the record's row in decoded_->values
  MinMax<int32_t> partition_bounds_;
  MinMax<int64_t> offset_bounds_;
  MinMax<int64_t> timestamp_bounds_;
  MinMax<int32_t> type_bounds_;
};

}  // namespace

Result<std::unique_ptr<DataFileWriter>> DataFileWriter::Make(storage::FileIO& io, const std::string& location,
                                                             const iceberg::Schema& schema, int32_t spec_id,
                                                             std::vector<iceberg::Datum> partition,
                                                             DataFileWriterOptions options) {
  auto w = std::make_unique<DataFileWriterImpl>();
  RETURN_NOT_OK(w->Init(io, location, schema, spec_id, std::move(partition), std::move(options)));
  return std::unique_ptr<DataFileWriter>(std::move(w));
}

std::string CanonicalSchemaJson(bool with_topic) {
  using nlohmann::json;
  auto field = [](int id, const char* name, bool required, json type) {
    return json{{"id", id}, {"name", name}, {"required", required}, {"type", std::move(type)}};
  };
  json header = {{"type", "struct"},
                 {"fields", json::array({field(kHeaderKeyId, "key", true, "string"),
                                         field(kHeaderValueId, "value", false, "binary")})}};
  json headers = {{"type", "list"}, {"element-id", kHeaderElementId}, {"element-required", true}, {"element", header}};
  json fields =
      json::array({field(kPartitionId, "kafka_partition", true, "int"), field(kOffsetId, "kafka_offset", true, "long"),
                   field(kTimestampId, "kafka_timestamp", true, "timestamptz"),
                   field(kTimestampTypeId, "kafka_timestamp_type", true, "int"), field(kKeyId, "key", false, "binary"),
                   field(kValueId, "value", false, "binary"), field(kHeadersId, "headers", false, headers)});
  if (with_topic) fields.push_back(field(kTopicId, "kafka_topic", true, "string"));
  json schema = {{"type", "struct"}, {"schema-id", 0}, {"fields", fields}};
  return schema.dump();
}

}  // namespace thaw::parquet
