// Iceberg schema and partition spec JSON (spec Appendix C), written the way
// Iceberg Java's SchemaParser / PartitionSpecParser write them: for the
// `schema` and `partition-spec` keys of a manifest's Avro header, and for
// table metadata built from parsed structs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "thaw/common/status.h"
#include "thaw/iceberg/schema.h"
#include "thaw/iceberg/table_metadata.h"

namespace thaw::iceberg {

// {"type":"struct","schema-id":N,"fields":[{"id","name","required","type",
// "doc"?,"initial-default"?}, ...]} with nested struct / list / map objects.
nlohmann::ordered_json SchemaToJson(const Schema& schema);
// One type: a primitive's string ("decimal(9,2)", "fixed[16]") or the
// struct / list / map object.
nlohmann::ordered_json TypeToJson(const Type& type);
// The spec's fields array: [{"name","transform","source-id","field-id"}]
// ("source-ids" for multi-argument v3 transforms).
nlohmann::ordered_json PartitionFieldsToJson(const PartitionSpec& spec);

// The type a partition field's values have: identity, truncate and void keep
// the source column's type, bucket / year / month / hour give int, day gives
// date. Errors name the field when its source column is missing from `schema`
// or its transform is unknown.
Result<TypePtr> PartitionFieldType(const PartitionField& field, const Schema& schema);

}  // namespace thaw::iceberg
