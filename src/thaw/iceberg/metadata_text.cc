#include "thaw/iceberg/metadata_text.h"

#include <nlohmann/json.hpp>

namespace thaw::iceberg {

std::string MetadataText::Dump(const nlohmann::json& doc) {
  auto snapshots = doc.is_object() ? doc.find("snapshots") : doc.end();
  if (!doc.is_object() || snapshots == doc.end() || !snapshots->is_array()) {
    snapshots_.clear();
    return doc.dump();
  }
  std::unordered_map<int64_t, std::string> kept;
  kept.reserve(snapshots->size());
  std::string out;
  out.reserve(last_size_ + last_size_ / 8 + 4096);
  out += '{';
  bool first = true;
  // An object's items in the order dump() writes them (nlohmann keeps keys sorted).
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!first) out += ',';
    first = false;
    out += nlohmann::json(it.key()).dump();
    out += ':';
    if (it != snapshots) {
      out += it.value().dump();
      continue;
    }
    out += '[';
    bool first_snapshot = true;
    for (const auto& s : *snapshots) {
      if (!first_snapshot) out += ',';
      first_snapshot = false;
      auto id = s.is_object() ? s.find("snapshot-id") : s.end();
      if (!s.is_object() || id == s.end() || !id->is_number_integer()) {
        out += s.dump();
        continue;
      }
      const int64_t key = id->get<int64_t>();
      if (kept.count(key)) {  // an id twice in one document: not cached
        out += s.dump();
        continue;
      }
      auto cached = snapshots_.find(key);
      std::string text = cached != snapshots_.end() ? std::move(cached->second) : s.dump();
      out += text;
      kept.emplace(key, std::move(text));
    }
    out += ']';
  }
  out += '}';
  snapshots_ = std::move(kept);
  last_size_ = out.size();
  return out;
}

}  // namespace thaw::iceberg
