// Runs `thaw serve`: loads the served tables, starts the group coordinator,
// the listener and the snapshot refresh, and runs until SIGINT or SIGTERM.
// On a signal: stop accepting, let in-flight requests answer, close the
// group coordinator (its offsets are already durable), return OK (exit 0).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "thaw/catalog/catalog_config.h"
#include "thaw/common/status.h"
#include "thaw/kafka/server/server.h"
#include "thaw/serve/topic_registry.h"

namespace thaw::kafka::server {

struct ServeConfig {
  catalog::CatalogConfig catalog;  // resolved from --catalog, --catalog-property, [catalog], pyiceberg's config
  std::vector<serve::TopicConfig> topics;
  std::string table_prefix;                           // serve every Kafka-shaped table of this namespace
  std::optional<serve::TopicConfig> prefix_defaults;  // layout / compression for those
  ServerOptions server;
  std::string advertised_host;  // empty: the listen host
  int advertised_port = -1;     // -1: the bound port
  std::string state_dir;
  serve::ServeOptions serve;
  std::chrono::milliseconds initial_rebalance_delay{3000};
  int threads = 4;
};

Status RunServe(const ServeConfig& config);

}  // namespace thaw::kafka::server
