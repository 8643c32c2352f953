#include "thaw/iceberg/manifest_schema.h"

#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

namespace thaw::iceberg {

using ojson = nlohmann::ordered_json;

namespace {

ojson Optional(ojson type) { return ojson::array({"null", std::move(type)}); }

ojson AvroField(const char* name, int32_t id, ojson type, bool optional = false) {
  ojson f = ojson::object();
  f["name"] = name;
  f["type"] = optional ? Optional(std::move(type)) : std::move(type);
  if (optional) f["default"] = nullptr;
  f["field-id"] = id;
  return f;
}

ojson Record(const std::string& name, ojson fields) {
  ojson r = ojson::object();
  r["type"] = "record";
  r["name"] = name;
  r["fields"] = std::move(fields);
  return r;
}

// map<int, V> as Java writes non-string-keyed maps.
ojson IntMap(int32_t key_id, int32_t value_id, const char* value_type) {
  ojson items = Record(fmt::format("k{}_v{}", key_id, value_id),
                       ojson::array({AvroField("key", key_id, "int"), AvroField("value", value_id, value_type)}));
  ojson a = ojson::object();
  a["type"] = "array";
  a["items"] = std::move(items);
  a["logicalType"] = "map";
  return a;
}

ojson Array(const char* items, int32_t element_id) {
  ojson a = ojson::object();
  a["type"] = "array";
  a["items"] = items;
  a["element-id"] = element_id;
  return a;
}

// Bytes of the fixed Java stores a decimal of this precision in
// (TypeUtil.decimalRequiredBytes): the fewest whose signed range holds
// 10^precision - 1.
int DecimalBytes(int precision) {
  int n = 1;
  while (static_cast<int>(std::floor((8.0 * n - 1) * std::log10(2.0))) < precision) ++n;
  return n;
}

// A named Avro type is defined once; later uses refer to it by name.
ojson Named(ojson def, std::set<std::string>* defined) {
  const std::string name = def["name"].get<std::string>();
  if (!defined->insert(name).second) return name;
  return def;
}

Result<ojson> AvroTypeOf(const Type& t, std::set<std::string>* defined) {
  auto logical = [](const char* base, const char* logical_type) {
    ojson j = ojson::object();
    j["type"] = base;
    j["logicalType"] = logical_type;
    return j;
  };
  switch (t.id) {
    case TypeId::kBoolean:
      return ojson("boolean");
    case TypeId::kInt:
      return ojson("int");
    case TypeId::kLong:
      return ojson("long");
    case TypeId::kFloat:
      return ojson("float");
    case TypeId::kDouble:
      return ojson("double");
    case TypeId::kDate:
      return logical("int", "date");
    case TypeId::kTime:
      return logical("long", "time-micros");
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz: {
      ojson j = logical("long", "timestamp-micros");
      j["adjust-to-utc"] = t.id == TypeId::kTimestampTz;
      return j;
    }
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      ojson j = logical("long", "timestamp-nanos");
      j["adjust-to-utc"] = t.id == TypeId::kTimestampTzNs;
      return j;
    }
    case TypeId::kString:
      return ojson("string");
    case TypeId::kBinary:
    case TypeId::kGeometry:
    case TypeId::kGeography:
      return ojson("bytes");
    case TypeId::kUnknown:
      return ojson("null");
    case TypeId::kUuid: {
      ojson j = ojson::object();
      j["type"] = "fixed";
      j["name"] = "uuid_fixed";
      j["size"] = 16;
      j["logicalType"] = "uuid";
      return Named(std::move(j), defined);
    }
    case TypeId::kFixed: {
      ojson j = ojson::object();
      j["type"] = "fixed";
      j["name"] = fmt::format("fixed_{}", t.length);
      j["size"] = t.length;
      return Named(std::move(j), defined);
    }
    case TypeId::kDecimal: {
      ojson j = ojson::object();
      j["type"] = "fixed";
      j["name"] = fmt::format("decimal_{}_{}", t.precision, t.scale);
      j["size"] = DecimalBytes(t.precision);
      j["logicalType"] = "decimal";
      j["precision"] = t.precision;
      j["scale"] = t.scale;
      return Named(std::move(j), defined);
    }
    default:
      break;
  }
  return Status::Unsupported("a partition value of type {} cannot be written to a manifest", t.ToString());
}

Result<avro::SchemaPtr> Parse(const ojson& j, const char* what) {
  auto s = avro::ParseSchema(j.dump());
  if (!s.ok()) return s.status().WithContext(fmt::format("building the {} Avro schema", what));
  return s;
}

}  // namespace

std::string SanitizeAvroName(const std::string& name) {
  auto escape = [](unsigned char c) {
    if (std::isdigit(c)) return std::string("_") + static_cast<char>(c);
    return fmt::format("_x{:X}", c);
  };
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool ok = c < 0x80 && (std::isalpha(c) || c == '_' || (i > 0 && std::isdigit(c)));
    out += ok ? std::string(1, static_cast<char>(c)) : escape(c);
  }
  return out.empty() ? std::string("_") : out;
}

Result<avro::SchemaPtr> ManifestEntryAvroSchema(int format_version,
                                                const std::vector<PartitionStructField>& partition) {
  if (format_version != 2 && format_version != 3) {
    return Status::Unsupported("Thaw writes manifests of format v2 and v3, not v{}", format_version);
  }
  std::set<std::string> defined;
  ojson part_fields = ojson::array();
  for (const auto& pf : partition) {
    auto t = AvroTypeOf(*pf.type, &defined);
    if (!t.ok()) return t.status().WithContext(fmt::format("partition field '{}' (id {})", pf.name, pf.field_id));
    ojson f = AvroField(SanitizeAvroName(pf.name).c_str(), pf.field_id, std::move(*t), /*optional=*/true);
    part_fields.push_back(std::move(f));
  }
  ojson file = ojson::array();
  file.push_back(AvroField("content", 134, "int"));
  file.push_back(AvroField("file_path", 100, "string"));
  file.push_back(AvroField("file_format", 101, "string"));
  file.push_back(AvroField("partition", 102, Record("r102", std::move(part_fields))));
  file.push_back(AvroField("record_count", 103, "long"));
  file.push_back(AvroField("file_size_in_bytes", 104, "long"));
  file.push_back(AvroField("column_sizes", 108, IntMap(117, 118, "long"), true));
  file.push_back(AvroField("value_counts", 109, IntMap(119, 120, "long"), true));
  file.push_back(AvroField("null_value_counts", 110, IntMap(121, 122, "long"), true));
  file.push_back(AvroField("nan_value_counts", 137, IntMap(138, 139, "long"), true));
  file.push_back(AvroField("lower_bounds", 125, IntMap(126, 127, "bytes"), true));
  file.push_back(AvroField("upper_bounds", 128, IntMap(129, 130, "bytes"), true));
  file.push_back(AvroField("key_metadata", 131, "bytes", true));
  file.push_back(AvroField("split_offsets", 132, Array("long", 133), true));
  file.push_back(AvroField("equality_ids", 135, Array("int", 136), true));
  file.push_back(AvroField("sort_order_id", 140, "int", true));
  if (format_version >= 3) file.push_back(AvroField("first_row_id", 142, "long", true));
  file.push_back(AvroField("referenced_data_file", 143, "string", true));
  if (format_version >= 3) {
    file.push_back(AvroField("content_offset", 144, "long", true));
    file.push_back(AvroField("content_size_in_bytes", 145, "long", true));
  }
  ojson entry = ojson::array();
  entry.push_back(AvroField("status", 0, "int"));
  entry.push_back(AvroField("snapshot_id", 1, "long", true));
  entry.push_back(AvroField("sequence_number", 3, "long", true));
  entry.push_back(AvroField("file_sequence_number", 4, "long", true));
  entry.push_back(AvroField("data_file", 2, Record("r2", std::move(file))));
  return Parse(Record("manifest_entry", std::move(entry)), "manifest_entry");
}

Result<avro::SchemaPtr> ManifestListAvroSchema(int format_version) {
  if (format_version != 2 && format_version != 3) {
    return Status::Unsupported("Thaw writes manifest lists of format v2 and v3, not v{}", format_version);
  }
  ojson summary = ojson::array();
  summary.push_back(AvroField("contains_null", 509, "boolean"));
  summary.push_back(AvroField("contains_nan", 518, "boolean", true));
  summary.push_back(AvroField("lower_bound", 510, "bytes", true));
  summary.push_back(AvroField("upper_bound", 511, "bytes", true));
  ojson partitions = ojson::object();
  partitions["type"] = "array";
  partitions["items"] = Record("r508", std::move(summary));
  partitions["element-id"] = 508;

  ojson f = ojson::array();
  f.push_back(AvroField("manifest_path", 500, "string"));
  f.push_back(AvroField("manifest_length", 501, "long"));
  f.push_back(AvroField("partition_spec_id", 502, "int"));
  f.push_back(AvroField("content", 517, "int"));
  f.push_back(AvroField("sequence_number", 515, "long"));
  f.push_back(AvroField("min_sequence_number", 516, "long"));
  f.push_back(AvroField("added_snapshot_id", 503, "long"));
  f.push_back(AvroField("added_files_count", 504, "int"));
  f.push_back(AvroField("existing_files_count", 505, "int"));
  f.push_back(AvroField("deleted_files_count", 506, "int"));
  f.push_back(AvroField("added_rows_count", 512, "long"));
  f.push_back(AvroField("existing_rows_count", 513, "long"));
  f.push_back(AvroField("deleted_rows_count", 514, "long"));
  f.push_back(AvroField("partitions", 507, std::move(partitions), true));
  f.push_back(AvroField("key_metadata", 519, "bytes", true));
  if (format_version >= 3) f.push_back(AvroField("first_row_id", 520, "long", true));
  return Parse(Record("manifest_file", std::move(f)), "manifest_file");
}

}  // namespace thaw::iceberg
