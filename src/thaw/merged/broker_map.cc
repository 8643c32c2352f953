#include "thaw/merged/broker_map.h"

#include <charconv>

#include "thaw/common/log.h"

namespace thaw::merged {

namespace {

bool ParsePort(std::string_view s, uint16_t* out) {
  int v = -1;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 1 || v > 65535) return false;
  *out = static_cast<uint16_t>(v);
  return true;
}

}  // namespace

Result<BrokerPorts> ParseBrokerPorts(std::string_view text) {
  BrokerPorts p;
  const size_t dash = text.find('-');
  const bool ok = dash == std::string_view::npos
                      ? ParsePort(text, &p.first)
                      : ParsePort(text.substr(0, dash), &p.first) && ParsePort(text.substr(dash + 1), &p.last);
  if (!ok) {
    return Status::Invalid("--broker-ports '{}' must be START or START-END, ports 1..65535 (e.g. 19093-19192)", text);
  }
  if (dash == std::string_view::npos) p.last = static_cast<uint16_t>(std::min(65535, p.first + 99));
  if (p.last < p.first) return Status::Invalid("--broker-ports '{}': END is below START", text);
  return p;
}

std::optional<uint16_t> BrokerMap::PortFor(int32_t node_id) const {
  if (node_id < 0 || node_id > ports_.last - ports_.first) return std::nullopt;
  return static_cast<uint16_t>(ports_.first + node_id);
}

std::optional<UpstreamAddress> BrokerMap::Upstream(int32_t node_id) const {
  std::lock_guard lock(mu_);
  auto it = upstream_.find(node_id);
  if (it == upstream_.end()) return std::nullopt;
  return it->second;
}

void BrokerMap::Learn(int32_t node_id, const std::string& host, int32_t port) {
  if (node_id < 0 || port <= 0 || port > 65535) return;
  bool is_new = false;
  {
    std::lock_guard lock(mu_);
    auto [it, inserted] = upstream_.try_emplace(node_id);
    is_new = inserted;
    if (!inserted && (it->second.host != host || it->second.port != port)) {
      log::Info("upstream broker {} moved from {}:{} to {}:{}", node_id, it->second.host, it->second.port, host, port);
    }
    it->second = {host, static_cast<uint16_t>(port)};
  }
  if (is_new && on_new_node_) on_new_node_(node_id);
}

std::pair<std::string, int32_t> BrokerMap::Rewrite(int32_t node_id, const std::string& host, int32_t port) {
  Learn(node_id, host, port);
  auto mine = PortFor(node_id);
  return {host_, mine ? *mine : -1};
}

void BrokerMap::RewriteMetadata(msg::MetadataResponse& resp) {
  for (auto& b : resp.brokers) std::tie(b.host, b.port) = Rewrite(b.node_id, b.host, b.port);
}

void BrokerMap::RewriteFindCoordinator(msg::FindCoordinatorResponse& resp) {
  // v0-3 carry one coordinator at the top level, v4+ a list (KIP-699).
  if (resp.error_code == 0 && resp.node_id >= 0 && !resp.host.empty()) {
    std::tie(resp.host, resp.port) = Rewrite(resp.node_id, resp.host, resp.port);
  }
  for (auto& c : resp.coordinators) {
    if (c.error_code == 0 && c.node_id >= 0) std::tie(c.host, c.port) = Rewrite(c.node_id, c.host, c.port);
  }
}

void BrokerMap::RewriteDescribeCluster(msg::DescribeClusterResponse& resp) {
  // endpoint_type 2 lists controllers (KIP-919): their ports are not brokers'
  // and Thaw forwards no controller traffic, so they are named with port -1.
  for (auto& b : resp.brokers) {
    if (resp.endpoint_type == 2) {
      b.host = host_;
      b.port = -1;
    } else {
      std::tie(b.host, b.port) = Rewrite(b.broker_id, b.host, b.port);
    }
  }
}

}  // namespace thaw::merged
