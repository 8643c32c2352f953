// The one place broker addresses are rewritten (tiered proxy, merged/).
//
// Each upstream broker is reachable through a Thaw port of its own on the
// advertised host: node id N answers on `--broker-ports` START + N. The map is
// a pure function of the node id, so it is stable across restarts and two
// Thaw instances configured alike hand out the same addresses. A node id
// outside the range has no port: its listener cannot open, which is logged
// once, and responses keep naming it with port -1 ... never the upstream's
// own address, so a client never bypasses Thaw.
//
// Every response that names brokers goes through Rewrite*, which also
// records the upstream address of each node (where Thaw connects a client
// that arrives on that node's port) and reports nodes seen for the first
// time, so that their listeners open without a restart.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "thaw/common/status.h"
#include "thaw/kafka/protocol/messages.h"

namespace thaw::merged {

namespace msg = kafka::msg;

struct BrokerPorts {
  uint16_t first = 0;
  uint16_t last = 0;  // inclusive
};

// START[-END]; a bare START means START..START+99. The error names the flag.
Result<BrokerPorts> ParseBrokerPorts(std::string_view text);

struct UpstreamAddress {
  std::string host;
  uint16_t port = 0;
};

class BrokerMap {
 public:
  BrokerMap(std::string advertised_host, BrokerPorts ports) : host_(std::move(advertised_host)), ports_(ports) {}

  const std::string& advertised_host() const { return host_; }
  const BrokerPorts& ports() const { return ports_; }
  // Thaw's port for `node_id`; nullopt outside the range.
  std::optional<uint16_t> PortFor(int32_t node_id) const;
  // Where a node's clients are connected to (learned from the responses).
  std::optional<UpstreamAddress> Upstream(int32_t node_id) const;

  // Called (on the rewriting thread) with a node id seen for the first time.
  void OnNewNode(std::function<void(int32_t)> f) { on_new_node_ = std::move(f); }

  void RewriteMetadata(msg::MetadataResponse& resp);
  void RewriteFindCoordinator(msg::FindCoordinatorResponse& resp);
  void RewriteDescribeCluster(msg::DescribeClusterResponse& resp);

  // Records a node's upstream address (tests; the control connection).
  void Learn(int32_t node_id, const std::string& host, int32_t port);

 private:
  // Learns, then returns the (host, port) clients are to use for the node.
  std::pair<std::string, int32_t> Rewrite(int32_t node_id, const std::string& host, int32_t port);

  const std::string host_;
  const BrokerPorts ports_;
  mutable std::mutex mu_;
  std::map<int32_t, UpstreamAddress> upstream_;
  std::function<void(int32_t)> on_new_node_;
};

}  // namespace thaw::merged
