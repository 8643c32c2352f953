// Metadata and DescribeConfigs: the served topics, their partitions (node 0
// leads each, leader epoch the served topic's) and stable topic ids, and
// the topic settings a Kafka admin tool asks for.
//
// With ACLs, as Kafka: a topic the principal may not DESCRIBE is left out
// of a Metadata request for every topic, and named explicitly it gets
// TOPIC_AUTHORIZATION_FAILED whether it exists or not (by id: with its id
// and no name); DescribeConfigs needs DESCRIBE_CONFIGS on the topic or the
// cluster.
#include <algorithm>
#include <tuple>

#include "thaw/kafka/server/handlers/authorize.h"
#include "thaw/kafka/server/handlers/handlers.h"
#include "thaw/kafka/server/topic_log.h"

namespace thaw::kafka::server {

namespace {

msg::MetadataResponse::MetadataResponseTopic DescribeTopic(const BrokerIdentity& id, const TopicLog& t) {
  msg::MetadataResponse::MetadataResponseTopic mt;
  mt.error_code = 0;
  mt.name = t.name();
  mt.topic_id = t.topic_id();
  for (int32_t p = 0; p < t.partition_count(); ++p) {
    msg::MetadataResponse::MetadataResponsePartition mp;
    mp.partition_index = p;
    mp.leader_id = id.node_id;
    mp.leader_epoch = t.LeaderEpoch(p);
    mp.replica_nodes = {id.node_id};
    mp.isr_nodes = {id.node_id};
    mt.partitions.push_back(std::move(mp));
  }
  return mt;
}

}  // namespace

asio::awaitable<msg::MetadataResponse> HandleMetadata(RequestContext& ctx, const msg::MetadataRequest& req) {
  const BrokerIdentity& id = ctx.broker.identity;
  msg::MetadataResponse resp;
  msg::MetadataResponse::MetadataResponseBroker b;
  b.node_id = id.node_id;
  b.host = id.advertised_host;
  b.port = id.advertised_port;
  resp.brokers.push_back(b);
  resp.cluster_id = id.cluster_id;
  resp.controller_id = id.node_id;
  const TopicLogs& logs = *ctx.broker.topics;
  // v0: an empty list means every topic; v1+: null means every topic, empty none.
  const bool all = !req.topics || (ctx.api_version == 0 && req.topics->empty());
  if (all) {
    for (const auto& t : logs.All()) {
      if (Authorized(ctx, AclOperation::kDescribe, AclResourceType::kTopic, t->name(), /*log_denied=*/false)) {
        resp.topics.push_back(DescribeTopic(id, *t));
      }
    }
    co_return resp;
  }
  for (const auto& want : *req.topics) {
    std::shared_ptr<TopicLog> t;
    if (want.name) {
      t = logs.Find(*want.name);
    } else {
      t = logs.FindById(want.topic_id);
    }
    // Checked before existence, so that a denied principal cannot tell a
    // served topic from an unknown one. An unknown id names nothing to check.
    const std::optional<std::string> name = want.name ? want.name : t ? std::optional(t->name()) : std::nullopt;
    if (name && !Authorized(ctx, AclOperation::kDescribe, AclResourceType::kTopic, *name)) {
      msg::MetadataResponse::MetadataResponseTopic mt;
      mt.error_code = static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed);
      mt.name = want.name;  // by id: no name (Kafka keeps it secret)
      mt.topic_id = want.name ? Uuid{} : want.topic_id;
      resp.topics.push_back(std::move(mt));
      continue;
    }
    if (t) {
      resp.topics.push_back(DescribeTopic(id, *t));
      continue;
    }
    // Unknown topics are never created (allow_auto_topic_creation is ignored:
    // Thaw serves tables, it does not create topics).
    msg::MetadataResponse::MetadataResponseTopic mt;
    mt.error_code = static_cast<int16_t>(want.name ? ErrorCode::kUnknownTopicOrPartition : ErrorCode::kUnknownTopicId);
    mt.name = want.name;
    mt.topic_id = want.topic_id;
    resp.topics.push_back(std::move(mt));
  }
  co_return resp;
}

asio::awaitable<msg::DescribeConfigsResponse> HandleDescribeConfigs(RequestContext& ctx,
                                                                    const msg::DescribeConfigsRequest& req) {
  constexpr int8_t kTopicResource = 2, kBrokerResource = 4;
  constexpr int8_t kDynamicTopicConfig = 1, kStaticBrokerConfig = 4, kDefaultConfig = 5;
  msg::DescribeConfigsResponse resp;
  for (const auto& res : req.resources) {
    msg::DescribeConfigsResponse::DescribeConfigsResult r;
    r.resource_type = res.resource_type;
    r.resource_name = res.resource_name;
    std::vector<std::tuple<std::string, std::string, int8_t>> configs;  // name, value, source
    if (res.resource_type == kTopicResource) {
      if (!Authorized(ctx, AclOperation::kDescribeConfigs, AclResourceType::kTopic, res.resource_name)) {
        r.error_code = static_cast<int16_t>(ErrorCode::kTopicAuthorizationFailed);
        r.error_message = "not authorized: DESCRIBE_CONFIGS on the topic (--acl-file)";
        resp.results.push_back(std::move(r));
        continue;
      }
      auto t = ctx.broker.topics->Find(res.resource_name);
      if (!t) {
        r.error_code = static_cast<int16_t>(ErrorCode::kUnknownTopicOrPartition);
        r.error_message = "Thaw does not serve this topic";
        resp.results.push_back(std::move(r));
        continue;
      }
      configs = {
          {"cleanup.policy", "delete", kDefaultConfig},
          {"compression.type", "producer", kDefaultConfig},
          {"message.timestamp.type", "CreateTime", kDefaultConfig},
          {"retention.ms", "-1", kDynamicTopicConfig},
          {"retention.bytes", "-1", kDefaultConfig},
          {"min.insync.replicas", "1", kDefaultConfig},
          {"max.message.bytes", "1048588", kDefaultConfig},
      };
      // The log's own settings replace the defaults in place (so the list
      // keeps Kafka's order) and add what Kafka has no name for (thaw.table).
      for (auto& o : t->ConfigOverrides()) {
        auto it =
            std::find_if(configs.begin(), configs.end(), [&o](const auto& c) { return std::get<0>(c) == o.first; });
        if (it != configs.end()) {
          std::get<1>(*it) = std::move(o.second);
          std::get<2>(*it) = kDynamicTopicConfig;
        } else {
          configs.emplace_back(std::move(o.first), std::move(o.second), kDynamicTopicConfig);
        }
      }
    } else if (res.resource_type == kBrokerResource) {
      if (!Authorized(ctx, AclOperation::kDescribeConfigs, AclResourceType::kCluster, kClusterResourceName)) {
        r.error_code = static_cast<int16_t>(ErrorCode::kClusterAuthorizationFailed);
        r.error_message = "not authorized: DESCRIBE_CONFIGS on the cluster (--acl-file)";
        resp.results.push_back(std::move(r));
        continue;
      }
      configs = {
          {"broker.id", std::to_string(ctx.broker.identity.node_id), kStaticBrokerConfig},
          {"advertised.listeners",
           fmt::format("PLAINTEXT://{}:{}", ctx.broker.identity.advertised_host, ctx.broker.identity.advertised_port),
           kStaticBrokerConfig},
          {"auto.create.topics.enable", "false", kStaticBrokerConfig},
      };
    } else {
      r.error_code = static_cast<int16_t>(ErrorCode::kInvalidRequest);
      r.error_message = "Thaw describes topic and broker configurations only";
      resp.results.push_back(std::move(r));
      continue;
    }
    for (auto& [name, value, source] : configs) {
      if (res.configuration_keys && std::find(res.configuration_keys->begin(), res.configuration_keys->end(), name) ==
                                        res.configuration_keys->end()) {
        continue;
      }
      msg::DescribeConfigsResponse::DescribeConfigsResourceResult c;
      c.name = name;
      c.value = value;
      c.read_only = true;
      c.config_source = source;
      c.is_sensitive = false;
      r.configs.push_back(std::move(c));
    }
    resp.results.push_back(std::move(r));
  }
  co_return resp;
}

}  // namespace thaw::kafka::server
