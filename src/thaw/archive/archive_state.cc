#include "thaw/archive/archive_state.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

namespace thaw::archive {

std::string EncodeNextOffsets(const TopicOffsets& offsets) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [topic, parts] : offsets) {
    nlohmann::ordered_json t = nlohmann::ordered_json::object();
    for (const auto& [p, next] : parts) t[std::to_string(p)] = next;
    j[topic] = std::move(t);
  }
  return j.dump();
}

Result<TopicOffsets> DecodeNextOffsets(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Status::Corrupt(
        "snapshot summary property {} = '{}' is not {{\"topic\": {{\"partition\": next offset}}}}: {}", kNextOffsetsKey,
        text.size() > 200 ? text.substr(0, 200) + "..." : text, why);
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not JSON");
  if (!j.is_object()) return bad("not a JSON object");
  TopicOffsets out;
  for (const auto& [topic, parts] : j.items()) {
    if (topic.empty()) return bad("an empty topic name");
    if (!parts.is_object()) return bad("topic '" + topic + "' does not map to an object");
    auto& dst = out[topic];
    for (const auto& [key, next] : parts.items()) {
      int32_t p = -1;
      auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), p);
      if (key.empty() || ec != std::errc() || end != key.data() + key.size() || p < 0) {
        return bad("topic '" + topic + "': '" + key + "' is not a partition number");
      }
      if (!next.is_number_integer() || next.get<int64_t>() < 0) {
        return bad("topic '" + topic + "' partition " + key + ": the next offset is not a non-negative integer");
      }
      dst[p] = next.get<int64_t>();
    }
  }
  return out;
}

Result<TopicOffsets> ReadNextOffsets(const iceberg::TableMetadata& md) {
  std::optional<int64_t> id;
  auto main = md.refs.find("main");
  if (main != md.refs.end()) {
    id = main->second.snapshot_id;
  } else {
    id = md.current_snapshot_id;
  }
  std::set<int64_t> seen;  // a parent cycle in broken metadata must not loop forever
  while (id && seen.insert(*id).second) {
    const iceberg::Snapshot* s = md.SnapshotById(*id);
    if (!s) break;  // expired ancestors: nothing further back is known
    auto it = s->summary.find(kNextOffsetsKey);
    if (it != s->summary.end()) {
      auto r = DecodeNextOffsets(it->second);
      if (!r.ok()) {
        return Status::Corrupt("table at {}: snapshot {}: {}", md.location, s->snapshot_id, r.status().message());
      }
      return r;
    }
    id = s->parent_snapshot_id;
  }
  return TopicOffsets{};
}

}  // namespace thaw::archive
