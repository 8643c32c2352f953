// Runs `thaw serve`: loads the served tables, starts the group coordinator,
// the listener and the snapshot refresh, and runs until SIGINT or SIGTERM.
// Here, not in kafka/server/: it is what wires the Iceberg backend
// (TopicRegistry) into the protocol server, which knows only TopicLogs.
// On a signal: stop accepting, let in-flight requests answer, close the
// group coordinator (its offsets are already durable), return OK (exit 0).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "thaw/catalog/catalog_config.h"
#include "thaw/common/status.h"
#include "thaw/kafka/client/connection.h"
#include "thaw/kafka/server/server.h"
#include "thaw/merged/broker_map.h"
#include "thaw/serve/topic_registry.h"

namespace thaw::serve {

struct ServeConfig {
  catalog::CatalogConfig catalog;  // resolved from --catalog, --catalog-property, [catalog], pyiceberg's config
  std::vector<TopicConfig> topics;
  std::string table_prefix;                    // serve every Kafka-shaped table of this namespace
  std::optional<TopicConfig> prefix_defaults;  // layout / compression for those
  kafka::server::ServerOptions server;
  std::string advertised_host;  // empty: the listen host
  int advertised_port = -1;     // -1: the bound port
  std::string state_dir;
  ServeOptions serve;
  std::chrono::milliseconds initial_rebalance_delay{3000};
  int threads = 4;
  // --upstream: run as the tiered proxy in front of this cluster
  // (merged/proxy.h); the topics are upstream topics, their tables their
  // history. Empty: serve the tables as a cluster of Thaw's own.
  std::vector<merged::UpstreamAddress> upstream;
  merged::BrokerPorts broker_ports;  // first == 0: --listen's port + 1, 100 ports
  kafka::client::ConnectionOptions upstream_options;  // -X/-F upstream client properties
  // Called with SIGINT or SIGTERM when the server starts to stop for it (the
  // command line turns it into the exit code, docs/cli.md#exit-codes).
  std::function<void(int signo)> on_stop_signal;
};

Status RunServe(const ServeConfig& config);

// RunServe with config.upstream (tiered_main.cc), once the tables are open.
Status RunTieredServe(const ServeConfig& config, TopicRegistry& tables);

}  // namespace thaw::serve
