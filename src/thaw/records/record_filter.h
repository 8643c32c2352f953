// --where for records: parses and binds an expression (src/thaw/expr/) to a
// table's Kafka fields and columns, narrows the read's ranges by what the
// expression implies (planning prunes with them), and evaluates it on each
// record, reading table columns from the record's decoded row.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "thaw/common/status.h"
#include "thaw/expr/where.h"
#include "thaw/iceberg/table_metadata.h"
#include "thaw/records/layout.h"
#include "thaw/records/record.h"
#include "thaw/records/record_reader.h"

namespace thaw::records {

class RecordFilter {
 public:
  // Binds `where` against the table's current schema and the layout the
  // read will use; narrows `options` (partitions, offsets, times) and adds
  // projected columns.
  static Result<std::shared_ptr<RecordFilter>> Make(std::string_view where, const iceberg::TableMetadata& metadata,
                                                    ReadOptions* options);
  bool Matches(const RecordBatch& batch, const Record& record) const;
  const std::string& canonical() const { return canonical_; }
  const expr::KafkaBounds& bounds() const { return bounds_; }

 private:
  RecordFilter() = default;
  std::optional<expr::Expression> expr_;
  std::vector<ColumnPath> columns_;  // slot 6 + i
  expr::KafkaBounds bounds_;
  std::string canonical_;
};

}  // namespace thaw::records
