// The topics a `thaw serve` exposes, by name and by topic id, sharing one
// batch cache (ServeOptions::cache_bytes): the kafka::server::TopicLogs the
// protocol server reads through. Thread-safe; the set of topics is fixed at
// Make.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "thaw/catalog/catalog.h"
#include "thaw/common/status.h"
#include "thaw/kafka/server/topic_log.h"
#include "thaw/serve/batch_cache.h"
#include "thaw/serve/served_topic.h"

namespace thaw::serve {

class TopicRegistry : public kafka::server::TopicLogs {
 public:
  // Opens every topic (ServedTopic::Make). A missing table, a table that
  // is not Kafka-shaped, a bad or duplicate topic name is an error naming
  // the topic and the table, before anything is served.
  static Result<std::unique_ptr<TopicRegistry>> Make(std::shared_ptr<catalog::Catalog> catalog,
                                                     std::vector<TopicConfig> topics, ServeOptions options);

  // `--table-prefix NS`: a topic per Kafka-shaped table of namespace `ns`
  // (its layout, detected or `defaults.layout`, has an offset column, and it
  // holds one source topic), named after the table; `defaults` gives layout and compression (its name and
  // table are ignored). Tables that are not Kafka-shaped are skipped and
  // listed in *skipped (name: why) when given. An empty result is not an
  // error here.
  static Result<std::vector<TopicConfig>> DiscoverTopics(catalog::Catalog& catalog, std::string_view ns,
                                                         const TopicConfig& defaults,
                                                         std::vector<std::string>* skipped = nullptr);

  // kafka::server::TopicLogs. Null when unknown; All() in the order given
  // at Make.
  std::shared_ptr<kafka::server::TopicLog> Find(std::string_view name) const override;
  std::shared_ptr<kafka::server::TopicLog> FindById(const kafka::Uuid& id) const override;
  std::vector<std::shared_ptr<kafka::server::TopicLog>> All() const override;
  // RefreshIfChanged on every topic (every topic is tried; the first error,
  // naming its topic, is returned; the others keep their new snapshots).
  Status RefreshAll() override;

  // The same lookups typed as ServedTopic, for serve's own users (RunServe,
  // tests) that need more than the server's interface (config(), stats()).
  std::shared_ptr<ServedTopic> FindTopic(std::string_view name) const;
  std::shared_ptr<ServedTopic> FindById(const std::array<uint8_t, 16>& id) const;
  std::vector<std::shared_ptr<ServedTopic>> topics() const { return topics_; }

  const std::shared_ptr<BatchCache>& cache() const { return cache_; }
  const ServeOptions& options() const { return options_; }

 private:
  TopicRegistry() = default;
  ServeOptions options_;
  std::shared_ptr<BatchCache> cache_;
  std::vector<std::shared_ptr<ServedTopic>> topics_;
};

// Kafka's rule for topic names: 1..249 characters of [a-zA-Z0-9._-], not
// "." or "..". The error says which character is wrong.
Status ValidateTopicName(std::string_view name);

}  // namespace thaw::serve
