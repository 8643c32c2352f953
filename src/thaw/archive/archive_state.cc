#include "thaw/archive/archive_state.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

#include "thaw/iceberg/table_scan.h"

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

Status FileKafkaKey(const iceberg::TableMetadata& md, const iceberg::DataFile& f, bool has_topic_column,
                    int32_t* partition, std::optional<std::string>* topic) {
  const auto* spec = md.SpecById(f.spec_id);
  if (!spec || spec->fields.size() != f.partition.size()) {
    return Status::Corrupt("data file {} has partition {} that its spec {} does not describe", f.path,
                           f.partition.empty() ? "()" : f.partition[0].ToString(), f.spec_id);
  }
  bool have_partition = false;
  for (size_t i = 0; i < spec->fields.size(); ++i) {
    const auto& d = f.partition[i];
    if (spec->fields[i].source_id() == kPartitionFieldId && d.kind == iceberg::Datum::kInt) {
      *partition = static_cast<int32_t>(d.i);
      have_partition = true;
    } else if (spec->fields[i].source_id() == kTopicFieldId && d.kind == iceberg::Datum::kBytes) {
      *topic = d.s;
    }
  }
  if (!have_partition) {
    return Status::Corrupt("data file {} has no kafka_partition value in its partition tuple", f.path);
  }
  if (has_topic_column && !*topic) {
    auto lo = f.lower_bounds.find(kTopicFieldId), hi = f.upper_bounds.find(kTopicFieldId);
    if (lo != f.lower_bounds.end() && hi != f.upper_bounds.end() && lo->second == hi->second) *topic = lo->second;
  }
  return Status::OK();
}

Result<TopicOffsets> NextOffsetsFromData(std::shared_ptr<storage::FileIO> io, const iceberg::TableMetadata& md,
                                         const iceberg::Snapshot& snapshot, const std::string& single_topic) {
  TopicOffsets out;
  const bool has_topic_column = md.current_schema().FindById(kTopicFieldId) != nullptr;
  ASSIGN_OR_RAISE(auto scan, iceberg::TableScan::Make(std::move(io), &md, &snapshot, {}));
  scan.KeepMetricsFor({kOffsetFieldId, kTopicFieldId});
  ASSIGN_OR_RAISE(auto planned, scan.PlanFiles());
  for (const auto& t : planned) {
    const iceberg::DataFile& f = *t.file;
    int32_t partition = 0;
    std::optional<std::string> topic;
    RETURN_NOT_OK(FileKafkaKey(md, f, has_topic_column, &partition, &topic));
    if (has_topic_column && !topic) {
      return Status::Corrupt("data file {} holds no single kafka_topic (no identity partition, unequal bounds)",
                             f.path);
    }
    auto hi = f.upper_bounds.find(kOffsetFieldId);
    std::optional<int64_t> last;
    if (hi != f.upper_bounds.end()) last = iceberg::DecodeIntegerBound(hi->second);
    if (!last) {
      return Status::Corrupt(
          "data file {} has no kafka_offset upper bound (column metrics off: write.metadata.metrics.*), so the "
          "offsets it holds are not known",
          f.path);
    }
    int64_t& next = out[topic.value_or(single_topic)][partition];
    next = std::max(next, *last + 1);
  }
  return out;
}

}  // namespace thaw::archive
