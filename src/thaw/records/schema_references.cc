#include "thaw/records/schema_references.h"

#include <charconv>

#include <nlohmann/json.hpp>

namespace thaw::records {

namespace {
constexpr std::string_view kValuePrefix = "thaw.row.schema-refs.";
constexpr std::string_view kKeyPrefix = "thaw.row.key-schema-refs.";
}  // namespace

std::string ReferencesPropertyKey(int32_t id, bool key) {
  return std::string(key ? kKeyPrefix : kValuePrefix) + std::to_string(id);
}

std::string ReferencesToJson(const SchemaReferences& refs) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& r : refs) j.push_back({{"name", r.name}, {"text", r.text}});
  return j.dump();
}

Result<SchemaReferences> ReferencesFromJson(const std::string& json, const std::string& key) {
  auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  SchemaReferences out;
  if (!j.is_array()) return Status::Corrupt("table property {}: not a JSON array of references", key);
  for (const auto& r : j) {
    if (!r.is_object() || !r.contains("name") || !r["name"].is_string() || !r.contains("text") ||
        !r["text"].is_string()) {
      return Status::Corrupt("table property {}: each reference needs a string name and text", key);
    }
    out.push_back({r["name"].get<std::string>(), r["text"].get<std::string>()});
  }
  return out;
}

Result<int32_t> SchemaIdOfProperty(std::string_view key, std::string_view prefix) {
  const std::string_view digits = key.substr(prefix.size());
  int32_t id = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    return Status::Corrupt("table property {}: '{}' is not a schema id", key, digits);
  }
  return id;
}

Result<std::map<int32_t, SchemaReferences>> ReferencesById(const std::map<std::string, std::string>& properties,
                                                           bool key_schemas) {
  const std::string_view prefix = key_schemas ? kKeyPrefix : kValuePrefix;
  std::map<int32_t, SchemaReferences> out;
  for (auto it = properties.lower_bound(std::string(prefix)); it != properties.end(); ++it) {
    const auto& [key, json] = *it;
    if (key.rfind(prefix, 0) != 0) break;
    ASSIGN_OR_RAISE(const int32_t id, SchemaIdOfProperty(key, prefix));
    ASSIGN_OR_RAISE(out[id], ReferencesFromJson(json, key));
  }
  return out;
}

}  // namespace thaw::records
