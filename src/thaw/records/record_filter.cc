#include "thaw/records/record_filter.h"

#include <algorithm>
#include <limits>

#include <arrow/array.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include "thaw/records/arrow_access.h"

namespace thaw::records {

namespace {

enum Slot { kPartition = 0, kOffset, kTimestamp, kTimestampType, kKey, kValue, kFirstColumn };

expr::Value ToValue(const arrow::Array& a, int64_t i) {
  if (a.IsNull(i)) return expr::Value::Null();
  switch (a.type_id()) {
    case arrow::Type::BOOL: return expr::Value::Bool(static_cast<const arrow::BooleanArray&>(a).Value(i));
    case arrow::Type::INT8: return expr::Value::Int(static_cast<const arrow::Int8Array&>(a).Value(i));
    case arrow::Type::INT16: return expr::Value::Int(static_cast<const arrow::Int16Array&>(a).Value(i));
    case arrow::Type::INT32: return expr::Value::Int(static_cast<const arrow::Int32Array&>(a).Value(i));
    case arrow::Type::INT64: return expr::Value::Int(static_cast<const arrow::Int64Array&>(a).Value(i));
    case arrow::Type::DATE32: return expr::Value::Int(static_cast<const arrow::Date32Array&>(a).Value(i));
    case arrow::Type::TIMESTAMP: return expr::Value::Int(static_cast<const arrow::TimestampArray&>(a).Value(i));
    case arrow::Type::FLOAT: return expr::Value::Double(static_cast<const arrow::FloatArray&>(a).Value(i));
    case arrow::Type::DOUBLE: return expr::Value::Double(static_cast<const arrow::DoubleArray&>(a).Value(i));
    case arrow::Type::STRING: return expr::Value::Bytes(static_cast<const arrow::StringArray&>(a).GetView(i));
    case arrow::Type::LARGE_STRING: return expr::Value::Bytes(static_cast<const arrow::LargeStringArray&>(a).GetView(i));
    case arrow::Type::BINARY: return expr::Value::Bytes(static_cast<const arrow::BinaryArray&>(a).GetView(i));
    case arrow::Type::LARGE_BINARY: return expr::Value::Bytes(static_cast<const arrow::LargeBinaryArray&>(a).GetView(i));
    case arrow::Type::FIXED_SIZE_BINARY:
      return expr::Value::Bytes(static_cast<const arrow::FixedSizeBinaryArray&>(a).GetView(i));
    default: return expr::Value::Null();  // nested and exotic types compare as unknown
  }
}

class RecordRow : public expr::Row {
 public:
  RecordRow(const RecordBatch& b, const Record& r, const std::vector<ColumnPath>& cols) : b_(b), r_(r), cols_(cols) {}
  expr::Value Get(int slot) const override {
    switch (slot) {
      case kPartition: return expr::Value::Int(r_.partition);
      case kOffset: return expr::Value::Int(r_.offset);
      case kTimestamp: return expr::Value::Int(r_.timestamp_ms);
      case kTimestampType: return expr::Value::Int(static_cast<int64_t>(r_.timestamp_type));
      case kKey: return r_.key ? expr::Value::Bytes(*r_.key) : expr::Value::Null();
      case kValue: return r_.value ? expr::Value::Bytes(*r_.value) : expr::Value::Null();
      default: break;
    }
    const auto* batch = static_cast<const arrow::RecordBatch*>(r_.source_batch);
    const size_t c = static_cast<size_t>(slot - kFirstColumn);
    if (!batch || c >= cols_.size()) return expr::Value::Null();
    auto acc = Resolve(*batch, cols_[c]);
    if (!acc || acc->IsNull(r_.source_row)) return expr::Value::Null();
    return ToValue(*acc->array, r_.source_row);
  }
  expr::Value Header(std::string_view key) const override {
    for (const auto& h : b_.HeadersOf(r_)) {
      if (h.key == key) return h.value ? expr::Value::Bytes(*h.value) : expr::Value::Null();
    }
    return expr::Value::Null();
  }

 private:
  const RecordBatch& b_;
  const Record& r_;
  const std::vector<ColumnPath>& cols_;
};

std::string ColumnList(const iceberg::Schema& schema) {
  std::string out;
  for (const auto& f : schema.fields()) out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

}  // namespace

Result<std::shared_ptr<RecordFilter>> RecordFilter::Make(std::string_view where,
                                                         const iceberg::TableMetadata& metadata,
                                                         ReadOptions* options) {
  const iceberg::Schema& schema = metadata.current_schema();
  ASSIGN_OR_RAISE(Layout layout, ResolveLayout(metadata, schema, options->layout));
  auto f = std::shared_ptr<RecordFilter>(new RecordFilter());
  ASSIGN_OR_RAISE(auto e, expr::ParseWhere(where));
  f->expr_.emplace(std::move(e));
  auto resolve = [&](std::string_view name) -> Result<int> {
    if (name == "partition") return static_cast<int>(kPartition);
    if (name == "offset") return static_cast<int>(kOffset);
    if (name == "timestamp") return static_cast<int>(kTimestamp);
    if (name == "timestamp_type") return static_cast<int>(kTimestampType);
    if (name == "key") return static_cast<int>(kKey);
    if (name == "value") return static_cast<int>(kValue);
    // A table column by dotted path of names.
    const iceberg::NestedField* field = schema.FindByPath(name);
    if (!field) return Status::NotFound("table columns: {}", ColumnList(schema));
    ColumnPath path;
    std::string rest(name);
    std::string prefix;
    size_t start = 0;
    while (true) {
      size_t dot = rest.find('.', start);
      prefix = rest.substr(0, dot);
      const iceberg::NestedField* part = schema.FindByPath(prefix);
      if (!part) return Status::NotFound("table columns: {}", ColumnList(schema));
      path.ids.push_back(part->id);
      path.names.push_back(part->name);
      path.type = part->type;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    for (size_t i = 0; i < f->columns_.size(); ++i) {
      if (f->columns_[i].ids == path.ids) return static_cast<int>(kFirstColumn + i);
    }
    f->columns_.push_back(path);
    options->extra_columns.push_back(path.ids.front());
    return static_cast<int>(kFirstColumn + f->columns_.size() - 1);
  };
  RETURN_NOT_OK(f->expr_->Bind(resolve));
  f->canonical_ = f->expr_->ToString();
  f->bounds_ = f->expr_->Bounds();
  // Narrow the read: planning prunes files and row groups with these.
  const auto& b = f->bounds_;
  if (b.partitions && layout.partition) {
    std::set<int32_t> p = *b.partitions;
    if (options->partitions) {
      std::set<int32_t> both;
      std::set_intersection(p.begin(), p.end(), options->partitions->begin(), options->partitions->end(),
                            std::inserter(both, both.begin()));
      p = both;
    }
    options->partitions = p;
  }
  if (b.empty) options->partitions = std::set<int32_t>{};
  if (layout.offset) {
    if (b.offset_lo) options->from_offset = std::max(options->from_offset.value_or(*b.offset_lo), *b.offset_lo);
    if (b.offset_hi) options->to_offset = std::min(options->to_offset.value_or(*b.offset_hi + 1), *b.offset_hi + 1);
  }
  if (b.key_prefix && layout.key) options->key_prefix = *b.key_prefix;
  if (b.time_lo_ms) options->from_time_ms = std::max(options->from_time_ms.value_or(*b.time_lo_ms), *b.time_lo_ms);
  // Inclusive hi -> exclusive end; INT64_MAX (a bound past every time) is no bound.
  if (b.time_hi_ms && *b.time_hi_ms < std::numeric_limits<int64_t>::max()) {
    options->to_time_ms = std::min(options->to_time_ms.value_or(*b.time_hi_ms + 1), *b.time_hi_ms + 1);
  }
  return f;
}

bool RecordFilter::Matches(const RecordBatch& batch, const Record& record) const {
  return expr_->Evaluate(RecordRow(batch, record, columns_));
}

}  // namespace thaw::records
