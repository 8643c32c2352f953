#include "thaw/archive/row_avro.h"

#include <arrow/array.h>
#include <arrow/builder.h>
#include "thaw/records/struct_fields.h"

namespace thaw::archive {

namespace {

class AvroValueCodec : public ValueCodec {
 public:
  AvroValueCodec(std::shared_ptr<const records::AvroValueSchema> schema, std::optional<int32_t> schema_id)
      : schema_(std::move(schema)), schema_id_(schema_id) {}

  std::string format() const override { return "avro"; }
  const iceberg::TypePtr& value_type() const override { return schema_->iceberg_type(); }

  Result<bool> Decode(std::string_view bytes, arrow::StructBuilder* builder) override {
    // Framed with another schema id (or not framed): not a datum of this
    // schema. Malformed datums append nothing (AvroValueSchema::Decode).
    if (schema_id_ && records::ConfluentSchemaId(bytes) != schema_id_) return false;
    Status st = schema_->Decode(bytes, schema_id_.has_value(), builder);
    if (st.code() == StatusCode::kCorrupt) return false;
    RETURN_NOT_OK(st);
    return true;
  }

  Status BindEncoder(const std::shared_ptr<arrow::Array>& values,
                     const std::vector<std::optional<int32_t>>&) override {
    if (!values || values->type_id() != arrow::Type::STRUCT) {
      return Status::Internal("the Avro value codec needs a struct array");
    }
    values_ = std::static_pointer_cast<arrow::StructArray>(values);
    fields_ = std::make_unique<records::StructFields>();  // this column's children, across its rows
    return Status::OK();
  }

  bool Encode(int64_t row, std::string* out) override {
    // A row the schema cannot write keeps its bytes in value_raw.
    return values_ && !values_->IsNull(row) && schema_->Encode(*values_, row, schema_id_, out, fields_.get()).ok();
  }

 private:
  std::shared_ptr<const records::AvroValueSchema> schema_;
  std::optional<int32_t> schema_id_;
  std::shared_ptr<arrow::StructArray> values_;
  std::unique_ptr<records::StructFields> fields_;
};

}  // namespace

std::unique_ptr<ValueCodec> MakeAvroValueCodec(std::shared_ptr<const records::AvroValueSchema> schema,
                                               std::optional<int32_t> schema_id) {
  return std::make_unique<AvroValueCodec>(std::move(schema), schema_id);
}

}  // namespace thaw::archive
