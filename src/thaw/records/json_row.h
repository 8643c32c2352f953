// A row's value as JSON for layouts that keep no raw value bytes (Kafka
// Connect sink, plain row tables, decoded structs), from the table schema;
// Iceberg's initial-defaults. The type mapping is documented in
// docs/layouts.md ("Rows as JSON"); single values are json_value.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"
#include "thaw/records/json_value.h"

namespace arrow {
class RecordBatch;
}  // namespace arrow

namespace thaw::records {

struct Layout;
struct ColumnPath;

// An Iceberg single-value JSON default (`initial-default`, spec Appendix D)
// in Thaw's JSON mapping for `type` (structs keyed by field id become
// objects keyed by the current names, binary hex becomes base64, ...).
Result<std::string> DefaultValueJson(std::string_view metadata_json, const iceberg::Type& type);
// Checks the initial-default of a column (`initial_default`) and those of
// the fields nested in it.
Status CheckInitialDefaults(const ColumnPath& column, const std::optional<std::string>& initial_default);

// Builds the JSON value of a row for layouts whose value is made of table
// columns (`Layout::value_json`), from the table schema rather than from the
// columns a data file happens to hold: every field of the schema, in schema
// order, under its current name, matched to the file by field id (by name
// in files without ids), nested structs, lists and maps included. A field
// the file lacks is its v3 initial-default, else null (Iceberg's read rules,
// as pyiceberg and Iceberg Java read it).
class JsonRowBuilder {
 public:
  // Binds the layout's value columns to one decoded Arrow batch. Without
  // value columns the builder is empty() and builds nothing.
  static Result<JsonRowBuilder> Bind(const Layout& layout, const arrow::RecordBatch& batch);

  JsonRowBuilder();
  ~JsonRowBuilder();
  JsonRowBuilder(JsonRowBuilder&&) noexcept;
  JsonRowBuilder& operator=(JsonRowBuilder&&) noexcept;

  bool empty() const;
  // Appends row `row`'s value to *out; false when the value is null (an
  // unwrapped struct that is null, or holds only writer internals).
  bool Append(int64_t row, std::string* out) const;

  struct Node;

 private:
  std::unique_ptr<Node> root_;
  bool unwrap_ = false;
};

}  // namespace thaw::records
