// Writes and topic administration. Thaw serves Iceberg tables read-only: a
// Produce, CreateTopics, DeleteTopics, DeleteRecords, CreatePartitions or
// AlterConfigs gets Kafka's authorization error for each topic it names (a
// served topic exists but may not be changed; any other topic is unknown),
// with a message saying why where the version has a message field, so that
// clients fail with a clear, non-retriable error instead of a dropped
// connection. With ACLs, a topic the principal may not DESCRIBE gets the
// authorization error whether it is served or not, so that a refused write
// does not tell which topics exist.
#include "thaw/kafka/server/handlers/authorize.h"
#include "thaw/kafka/server/handlers/handlers.h"
#include "thaw/kafka/server/topic_log.h"

namespace thaw::kafka::server {

namespace {

constexpr const char* kReadOnly =
    "Thaw serves Iceberg tables read-only: write to the table (or to your Kafka cluster) instead";

bool IsServed(const RequestContext& ctx, const std::string& name) {
  return ctx.broker.topics && ctx.broker.topics->Find(name) != nullptr;
}

bool Hidden(const RequestContext& ctx, const std::string& name) {
  return !Authorized(ctx, AclOperation::kDescribe, AclResourceType::kTopic, name);
}

ErrorCode TopicWriteError(const RequestContext& ctx, const std::string& name) {
  return Hidden(ctx, name) || IsServed(ctx, name) ? ErrorCode::kTopicAuthorizationFailed
                                                  : ErrorCode::kUnknownTopicOrPartition;
}

}  // namespace

asio::awaitable<msg::ProduceResponse> HandleProduce(RequestContext& ctx, const msg::ProduceRequest& req) {
  msg::ProduceResponse resp;
  if (req.acks == 0) ctx.send_response = false;  // acks=0: the producer reads no response
  for (const auto& topic : req.topic_data) {
    msg::ProduceResponse::TopicProduceResponse t;
    t.name = topic.name;
    t.topic_id = topic.topic_id;
    std::string name = topic.name;
    if (name.empty() && ctx.broker.topics) {
      if (auto served = ctx.broker.topics->FindById(topic.topic_id)) name = served->name();
    }
    for (const auto& p : topic.partition_data) {
      msg::ProduceResponse::PartitionProduceResponse pr;
      pr.index = p.index;
      pr.error_code = static_cast<int16_t>(name.empty() ? ErrorCode::kUnknownTopicId : TopicWriteError(ctx, name));
      pr.base_offset = -1;
      pr.log_append_time_ms = -1;
      pr.log_start_offset = -1;
      pr.error_message = kReadOnly;
      t.partition_responses.push_back(std::move(pr));
    }
    resp.responses.push_back(std::move(t));
  }
  co_return resp;
}

asio::awaitable<msg::CreateTopicsResponse> HandleCreateTopics(RequestContext& ctx,
                                                              const msg::CreateTopicsRequest& req) {
  msg::CreateTopicsResponse resp;
  for (const auto& topic : req.topics) {
    msg::CreateTopicsResponse::CreatableTopicResult r;
    r.name = topic.name;
    const bool served = !Hidden(ctx, topic.name) && IsServed(ctx, topic.name);
    r.error_code = static_cast<int16_t>(served ? ErrorCode::kTopicAlreadyExists : ErrorCode::kTopicAuthorizationFailed);
    r.error_message = served ? std::string("the topic exists: Thaw serves it from an Iceberg table") : kReadOnly;
    r.num_partitions = -1;
    r.replication_factor = -1;
    resp.topics.push_back(std::move(r));
  }
  co_return resp;
}

asio::awaitable<msg::DeleteTopicsResponse> HandleDeleteTopics(RequestContext& ctx,
                                                              const msg::DeleteTopicsRequest& req) {
  msg::DeleteTopicsResponse resp;
  auto add = [&](const std::optional<std::string>& name, const Uuid& id) {
    msg::DeleteTopicsResponse::DeletableTopicResult r;
    r.name = name;
    r.topic_id = id;
    std::string n = name.value_or("");
    if (n.empty() && ctx.broker.topics) {
      if (auto served = ctx.broker.topics->FindById(id)) n = served->name();
    }
    r.error_code = static_cast<int16_t>(n.empty() ? ErrorCode::kUnknownTopicId : TopicWriteError(ctx, n));
    r.error_message = kReadOnly;
    resp.responses.push_back(std::move(r));
  };
  for (const auto& name : req.topic_names) add(name, Uuid{});
  for (const auto& t : req.topics) add(t.name, t.topic_id);
  co_return resp;
}

asio::awaitable<msg::DeleteRecordsResponse> HandleDeleteRecords(RequestContext& ctx,
                                                                const msg::DeleteRecordsRequest& req) {
  msg::DeleteRecordsResponse resp;
  for (const auto& topic : req.topics) {
    msg::DeleteRecordsResponse::DeleteRecordsTopicResult t;
    t.name = topic.name;
    for (const auto& p : topic.partitions) {
      msg::DeleteRecordsResponse::DeleteRecordsPartitionResult r;
      r.partition_index = p.partition_index;
      r.low_watermark = -1;
      r.error_code = static_cast<int16_t>(TopicWriteError(ctx, topic.name));
      t.partitions.push_back(r);
    }
    resp.topics.push_back(std::move(t));
  }
  co_return resp;
}

asio::awaitable<msg::CreatePartitionsResponse> HandleCreatePartitions(RequestContext& ctx,
                                                                      const msg::CreatePartitionsRequest& req) {
  msg::CreatePartitionsResponse resp;
  for (const auto& topic : req.topics) {
    msg::CreatePartitionsResponse::CreatePartitionsTopicResult r;
    r.name = topic.name;
    r.error_code = static_cast<int16_t>(TopicWriteError(ctx, topic.name));
    r.error_message = kReadOnly;
    resp.results.push_back(std::move(r));
  }
  co_return resp;
}

namespace {
template <typename Resp, typename Req>
Resp AlterConfigsRefusal(const RequestContext& ctx, const Req& req) {
  constexpr int8_t kTopicResource = 2;
  Resp resp;
  for (const auto& res : req.resources) {
    typename Resp::AlterConfigsResourceResponse r;
    r.resource_type = res.resource_type;
    r.resource_name = res.resource_name;
    r.error_code = static_cast<int16_t>(res.resource_type == kTopicResource ? TopicWriteError(ctx, res.resource_name)
                                                                            : ErrorCode::kClusterAuthorizationFailed);
    r.error_message = std::string("Thaw's configuration comes from its command line and config file; ") + kReadOnly;
    resp.responses.push_back(std::move(r));
  }
  return resp;
}
}  // namespace

asio::awaitable<msg::AlterConfigsResponse> HandleAlterConfigs(RequestContext& ctx,
                                                              const msg::AlterConfigsRequest& req) {
  co_return AlterConfigsRefusal<msg::AlterConfigsResponse>(ctx, req);
}

asio::awaitable<msg::IncrementalAlterConfigsResponse> HandleIncrementalAlterConfigs(
    RequestContext& ctx, const msg::IncrementalAlterConfigsRequest& req) {
  co_return AlterConfigsRefusal<msg::IncrementalAlterConfigsResponse>(ctx, req);
}

// Idempotent and transactional producers ask for a producer id first (the
// Java client by default): refused, so the producer fails at once.
asio::awaitable<msg::InitProducerIdResponse> HandleInitProducerId(RequestContext& ctx,
                                                                  const msg::InitProducerIdRequest& req) {
  msg::InitProducerIdResponse resp;
  resp.error_code = static_cast<int16_t>(req.transactional_id ? ErrorCode::kTransactionalIdAuthorizationFailed
                                                              : ErrorCode::kClusterAuthorizationFailed);
  resp.producer_id = -1;
  resp.producer_epoch = -1;
  co_return resp;
}

}  // namespace thaw::kafka::server
