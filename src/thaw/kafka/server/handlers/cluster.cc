// The cluster as clients see it: ApiVersions, Metadata, DescribeCluster,
// FindCoordinator, DescribeConfigs. Thaw is a one-broker cluster (node 0 at
// the advertised address) that leads every served partition and coordinates
// every group. With ACLs, finding a group's coordinator needs DESCRIBE on
// the group (GROUP_AUTHORIZATION_FAILED otherwise), as in Kafka.
#include <algorithm>

#include "thaw/kafka/server/handlers/authorize.h"
#include "thaw/kafka/server/handlers/handlers.h"

namespace thaw::kafka::server {

asio::awaitable<msg::ApiVersionsResponse> HandleApiVersions(RequestContext& ctx, const msg::ApiVersionsRequest& req) {
  msg::ApiVersionsResponse resp;
  for (const ApiHandler& h : ApiHandlers()) {
    msg::ApiVersionsResponse::ApiVersion v;
    v.api_key = h.key;
    v.min_version = h.min_version;
    v.max_version = h.max_version;
    resp.api_keys.push_back(v);
  }
  co_return resp;
}

asio::awaitable<msg::DescribeClusterResponse> HandleDescribeCluster(RequestContext& ctx,
                                                                    const msg::DescribeClusterRequest& req) {
  msg::DescribeClusterResponse resp;
  const BrokerIdentity& id = ctx.broker.identity;
  constexpr int8_t kBrokerEndpoints = 1;
  if (req.endpoint_type != kBrokerEndpoints) {
    resp.error_code = static_cast<int16_t>(ErrorCode::kUnsupportedEndpointType);
    resp.error_message = "Thaw has broker endpoints only (no controller endpoints)";
    co_return resp;
  }
  resp.cluster_id = id.cluster_id;
  resp.controller_id = id.node_id;
  msg::DescribeClusterResponse::DescribeClusterBroker b;
  b.broker_id = id.node_id;
  b.host = id.advertised_host;
  b.port = id.advertised_port;
  resp.brokers.push_back(b);
  co_return resp;
}

asio::awaitable<msg::FindCoordinatorResponse> HandleFindCoordinator(RequestContext& ctx,
                                                                    const msg::FindCoordinatorRequest& req) {
  constexpr int8_t kGroupKey = 0;
  const BrokerIdentity& id = ctx.broker.identity;
  const bool group = req.key_type == kGroupKey;
  // Each key's error and message: a group the principal may DESCRIBE is
  // coordinated here; a transactional id never is.
  auto answer = [&](const std::string& key) -> std::pair<ErrorCode, const char*> {
    if (!group) {
      return {ErrorCode::kCoordinatorNotAvailable, "Thaw has no transaction coordinator: it serves topics read-only"};
    }
    if (!Authorized(ctx, AclOperation::kDescribe, AclResourceType::kGroup, key)) {
      return {ErrorCode::kGroupAuthorizationFailed, "not authorized: DESCRIBE on the group (--acl-file)"};
    }
    return {ErrorCode::kNone, nullptr};
  };
  msg::FindCoordinatorResponse resp;
  if (ctx.api_version < 4) {
    const auto [error, message] = answer(req.key);
    const bool ok = error == ErrorCode::kNone;
    resp.error_code = static_cast<int16_t>(error);
    if (message) resp.error_message = message;
    resp.node_id = ok ? id.node_id : -1;
    resp.host = ok ? id.advertised_host : "";
    resp.port = ok ? id.advertised_port : -1;
  } else {
    for (const auto& key : req.coordinator_keys) {
      const auto [error, message] = answer(key);
      const bool ok = error == ErrorCode::kNone;
      msg::FindCoordinatorResponse::Coordinator c;
      c.key = key;
      c.error_code = static_cast<int16_t>(error);
      if (message) c.error_message = message;
      c.node_id = ok ? id.node_id : -1;
      c.host = ok ? id.advertised_host : "";
      c.port = ok ? id.advertised_port : -1;
      resp.coordinators.push_back(std::move(c));
    }
  }
  co_return resp;
}

}  // namespace thaw::kafka::server
