#include "thaw/serve/topic_registry.h"

#include <algorithm>
#include <set>

#include "thaw/records/read_plan.h"
#include "thaw/records/record_reader.h"

namespace thaw::serve {

Status ValidateTopicName(std::string_view name) {
  if (name.empty()) return Status::Invalid("a topic name must not be empty");
  if (name == "." || name == "..") return Status::Invalid("'{}' is not a valid topic name", name);
  if (name.size() > 249) {
    return Status::Invalid("topic name '{}...' is {} characters long; Kafka allows at most 249", name.substr(0, 40),
                           name.size());
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) {
      return Status::Invalid(
          "topic name '{}' has '{}' at position {}: Kafka topic names use only letters, digits, '.', '_' and '-'", name,
          (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? fmt::format("\\x{:02x}", static_cast<int>(c))
                                                              : std::string(1, c),
          i);
    }
  }
  return Status::OK();
}

Result<std::unique_ptr<TopicRegistry>> TopicRegistry::Make(std::shared_ptr<catalog::Catalog> catalog,
                                                           std::vector<TopicConfig> topics, ServeOptions options) {
  std::unique_ptr<TopicRegistry> r(new TopicRegistry());
  // Half the budget for decoding in progress, the other half (and what
  // StreamedSegments allows beyond it) for what the readers hold between
  // decodes. A whole budget: 837-884 MiB against 719-743 with a 128 MiB cache
  // and budget, but 14 % faster there (docs/benchmarks.md, 2026-12-08).
  if (!options.decode_gate) {
    options.decode_gate = std::make_shared<records::DecodeGate>(std::max<int64_t>(options.memory_budget / 2, 1));
  }
  r->options_ = options;
  r->cache_ = std::make_shared<BatchCache>(options.cache_bytes);
  std::set<std::string> names;
  for (auto& t : topics) {
    if (!names.insert(t.name).second) {
      return Status::Invalid("topic '{}' is configured twice (tables {}); topic names must be unique", t.name, t.table);
    }
    ASSIGN_OR_RAISE(auto served, ServedTopic::Make(catalog, std::move(t), options, r->cache_));
    r->topics_.push_back(std::move(served));
  }
  return r;
}

Result<std::vector<TopicConfig>> TopicRegistry::DiscoverTopics(catalog::Catalog& catalog, std::string_view ns,
                                                               const TopicConfig& defaults,
                                                               std::vector<std::string>* skipped) {
  ASSIGN_OR_RAISE(auto ids, catalog.ListTables());
  std::vector<TopicConfig> out;
  for (const auto& id : ids) {
    if (id.ns_string() != ns) continue;
    auto why_not = [&]() -> Status {
      RETURN_NOT_OK(ValidateTopicName(id.name));
      ASSIGN_OR_RAISE(auto table, catalog.LoadTable(id));
      const auto& md = table.metadata;
      ASSIGN_OR_RAISE(const iceberg::Snapshot* snap, iceberg::SelectSnapshot(md, {}));
      const auto& schema = snap ? md.SchemaFor(*snap) : md.current_schema();
      ASSIGN_OR_RAISE(auto layout, records::ResolveLayout(md, schema, defaults.layout));
      if (!layout.offset) return Status::Invalid("its layout '{}' has no offset column", layout.name);
      if (layout.topic && !defaults.source_topic) {
        // A table of several topics is served one topic at a time, each named by the user.
        records::ReadOptions ro;
        ro.layout = defaults.layout;
        ASSIGN_OR_RAISE(auto plan,
                        records::ReadPlan::Make(std::make_shared<const iceberg::Table>(std::move(table)), ro));
        RETURN_NOT_OK(plan->RequireOneTopic(fmt::format("--topic NAME={}:source-topic=TOPIC", id.ToString())));
      }
      return Status::OK();
    }();
    if (!why_not.ok()) {
      if (skipped) skipped->push_back(fmt::format("{}: {}", id.ToString(), why_not.message()));
      continue;
    }
    TopicConfig c = defaults;
    c.name = id.name;
    if (c.layout.value_avro) c.layout.value_avro = c.layout.value_avro->ForTopic(c.name);  // subjects follow topics
    c.table = id.ToString();
    out.push_back(std::move(c));
  }
  return out;
}

std::shared_ptr<ServedTopic> TopicRegistry::FindTopic(std::string_view name) const {
  for (const auto& t : topics_) {
    if (t->name() == name) return t;
  }
  return nullptr;
}

std::shared_ptr<kafka::server::TopicLog> TopicRegistry::Find(std::string_view name) const { return FindTopic(name); }

std::shared_ptr<ServedTopic> TopicRegistry::FindById(const std::array<uint8_t, 16>& id) const {
  for (const auto& t : topics_) {
    if (t->topic_id_bytes() == id) return t;
  }
  return nullptr;
}

std::shared_ptr<kafka::server::TopicLog> TopicRegistry::FindById(const kafka::Uuid& id) const {
  return FindById(id.bytes);
}

std::vector<std::shared_ptr<kafka::server::TopicLog>> TopicRegistry::All() const {
  return {topics_.begin(), topics_.end()};
}

Status TopicRegistry::RefreshAll() {
  Status first;
  for (const auto& t : topics_) {
    Status st = t->RefreshIfChanged();
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

}  // namespace thaw::serve
